/**
 * What `flotilla-hub` prints once the hub serves: where the dashboard and API are, the admin
 * token (only on the start that made it), and how a cluster joins. Pure text, built here so the
 * wording is tested and the command only prints it.
 */

export interface BannerInput {
  /** The URL the hub listens on (http://127.0.0.1:8080). */
  localUrl: string;
  /** The hub's URL as agents reach it. */
  agentUrl: string;
  dataDir: string;
  /** The admin token made on this start; undefined on later starts. */
  adminToken: string | undefined;
  /** When the admin token was shown (later starts). */
  adminTokenShownAt: string | undefined;
  /** The local NATS server's CA file; undefined when NATS_URL names another server. */
  natsCaFile: string | undefined;
}

function adminTokenLines(b: BannerInput): string[] {
  if (b.adminToken !== undefined) {
    return ['Admin token (shown only this once; keep it somewhere safe):', '', `    ${b.adminToken}`];
  }
  const when = b.adminTokenShownAt ? ` (${b.adminTokenShownAt})` : '';
  return [
    `Admin token: printed when this data directory first started${when}; it is not shown again.`,
    'Lost it? Stop the hub and start it with --new-admin-token: a new one is printed and the old one stops working.',
  ];
}

/** The agent chart's install line for this hub. */
export function agentInstallLine(b: Pick<BannerInput, 'agentUrl' | 'natsCaFile'>): string {
  const parts = [
    'helm install flotilla-agent deploy/charts/flotilla-agent --namespace flotilla-system --create-namespace',
    '--set clusterName=<cluster-name>',
    `--set hub.url=${b.agentUrl}`,
    ...(b.agentUrl.startsWith('http://') ? ['--set hub.insecure=true'] : []),
    ...(b.natsCaFile ? [`--set-file hub.natsCaBundle=${b.natsCaFile}`] : []),
    '--set hub.bootstrapToken.value=<bootstrap-token>',
  ];
  return parts.join(' \\\n         ');
}

export function renderBanner(b: BannerInput): string {
  const url = b.localUrl.replace(/\/$/, '');
  return [
    '',
    'Flotilla hub is running.',
    '',
    `  Dashboard:  ${url}/ui/`,
    `  API:        ${url}/api/v1`,
    `  Data:       ${b.dataDir}`,
    '',
    ...adminTokenLines(b),
    '',
    'Join a cluster:',
    '  1. Make a bootstrap token:',
    `       FLOTILLA_HUB_URL=${url} FLOTILLA_TOKEN=<admin-token> flotilla tokens create first-cluster --role bootstrap`,
    '  2. Install the agent in the cluster:',
    `       ${agentInstallLine(b)}`,
    '  3. Accept the cluster once it has registered:',
    `       FLOTILLA_HUB_URL=${url} FLOTILLA_TOKEN=<admin-token> flotilla clusters accept <cluster-name>`,
    '',
    'Ctrl-C stops the hub and everything it started.',
    '',
  ].join('\n');
}
