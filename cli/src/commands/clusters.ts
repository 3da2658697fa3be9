/** `flotilla clusters ...`: list, get, accept, label, windows, prometheus, revoke, remove. */
import type { Cluster, MaintenanceWindow } from '@flotilla/api';
import { str } from '../args.js';
import { listAll, seg } from '../client.js';
import { confirm, print, type CliContext, type Command } from '../context.js';
import { usageError } from '../errors.js';
import { applyLabelChanges, parseLabelChanges } from '../labels.js';
import { age, labelsText, orDash, type Column } from '../output.js';
import { credentialText, keyText } from './cluster-credentials.js';

function clusterColumns(now: Date): Column<Cluster>[] {
  return [
    { header: 'name', value: (c) => c.name },
    { header: 'state', value: (c) => c.state },
    { header: 'health', value: (c) => c.health },
    { header: 'last-heartbeat', value: (c) => age(c.lastHeartbeatAt, now) },
    { header: 'agent', value: (c) => orDash(c.agentVersion) },
    { header: 'kubernetes', value: (c) => orDash(c.kubernetesVersion) },
    { header: 'labels', value: (c) => labelsText(c.labels) },
    { header: 'windows', value: (c) => windowsText(c.maintenanceWindows) },
  ];
}

/** `0 2 * * SAT|4h|Europe/Berlin`, comma-separated; `-` for none (always open). */
function windowsText(windows: readonly MaintenanceWindow[] | undefined): string {
  if (!windows || windows.length === 0) return '-';
  return windows.map((w) => `${w.cron}|${w.duration}|${w.timeZone}`).join(', ');
}

/** `CRON|DURATION|ZONE` → a window (the hub validates each part and names the field). */
export function parseWindow(text: string): MaintenanceWindow {
  const parts = text.split('|').map((p) => p.trim());
  if (parts.length !== 3 || parts.some((p) => p === '')) {
    throw usageError(`window "${text}" must be CRON|DURATION|ZONE, e.g. "0 2 * * SAT|4h|Europe/Berlin"`);
  }
  const [cron, duration, timeZone] = parts as [string, string, string];
  return { cron, duration, timeZone };
}

const done = (ctx: CliContext, line: string, value: unknown): number => {
  confirm(ctx, line, value);
  return 0;
};

const list: Command = {
  group: 'clusters',
  verb: 'list',
  summary: 'List clusters, optionally by label selector and health.',
  options: {
    selector: {
      type: 'string',
      short: 'l',
      value: 'SELECTOR',
      description: 'label selector, e.g. env=prod,tier!=edge',
    },
    health: { type: 'string', value: 'HEALTH', description: 'Pending, Online, Offline or Removed' },
  },
  async run(ctx, { options }) {
    const query = { labelSelector: str(options, 'selector'), health: str(options, 'health') };
    const items = await listAll<Cluster>(ctx.client, '/clusters', query);
    print(ctx, items, clusterColumns(ctx.now()), items);
    return 0;
  },
};

/** One cluster's columns: the list's, then its NATS key and credential expiry. */
function clusterDetailColumns(now: Date): Column<Cluster>[] {
  return [
    ...clusterColumns(now),
    { header: 'key', value: keyText },
    { header: 'credential', value: (c) => credentialText(c, now) },
  ];
}

const get: Command = {
  group: 'clusters',
  verb: 'get',
  args: ['NAME'],
  summary: "Show one cluster, with its agent's NATS key and when its credential expires.",
  async run(ctx, { positionals: [name] }) {
    const c = await ctx.client.request<Cluster>('GET', `/clusters/${seg(name!)}`);
    print(ctx, c, clusterDetailColumns(ctx.now()), [c]);
    return 0;
  },
};

const accept: Command = {
  group: 'clusters',
  verb: 'accept',
  args: ['NAME'],
  summary: 'Accept a pending cluster (the operator side of the double opt-in).',
  async run(ctx, { positionals: [name] }) {
    const c = await ctx.client.request<Cluster>('POST', `/clusters/${seg(name!)}/accept`);
    return done(ctx, `cluster ${c.name} accepted`, c);
  },
};

const label: Command = {
  group: 'clusters',
  verb: 'label',
  args: ['NAME', 'KEY=VALUE|KEY-...'],
  summary: 'Set (k=v) or remove (k-) labels of a cluster.',
  async run(ctx, { positionals: [name, ...changes] }) {
    const parsed = parseLabelChanges(changes);
    const current = await ctx.client.request<Cluster>('GET', `/clusters/${seg(name!)}`);
    const c = await ctx.client.request<Cluster>('PUT', `/clusters/${seg(name!)}/labels`, {
      body: { labels: applyLabelChanges(current.labels, parsed) },
    });
    return done(ctx, `cluster ${c.name} labeled: ${labelsText(c.labels)}`, c);
  },
};

const windows: Command = {
  group: 'clusters',
  verb: 'windows',
  args: ['NAME', 'CRON|DURATION|ZONE...'],
  summary: 'Set the maintenance windows in which rollouts may start the cluster (all of them; "none" clears).',
  async run(ctx, { positionals: [name, ...specs] }) {
    const list = specs.length === 1 && specs[0] === 'none' ? [] : specs.map(parseWindow);
    const c = await ctx.client.request<Cluster>('PUT', `/clusters/${seg(name!)}/maintenance-windows`, {
      body: { windows: list },
    });
    return done(ctx, `cluster ${c.name} maintenance windows: ${windowsText(c.maintenanceWindows)}`, c);
  },
};

/** How the hub reaches the cluster's Prometheus, by reference: `(token t, CA ca.pem)`. */
function prometheusRefsText(c: Cluster): string {
  const refs = [
    c.prometheusTokenRef ? `token ${c.prometheusTokenRef}` : '',
    c.prometheusBasicAuth ? `basic auth ${c.prometheusBasicAuth.usernameRef}/${c.prometheusBasicAuth.passwordRef}` : '',
    c.prometheusCaRef ? `CA ${c.prometheusCaRef}` : '',
  ].filter(Boolean);
  return refs.length > 0 ? ` (${refs.join(', ')})` : '';
}

const prometheus: Command = {
  group: 'clusters',
  verb: 'prometheus',
  args: ['NAME', 'URL|none'],
  summary: 'Set the Prometheus the hub asks for metric analysis of this cluster ("none" removes it).',
  details:
    'The URL must carry no credentials: the hub shows it in the cluster status. Credentials and a CA\n' +
    "are given by reference, as names of files in the hub's FLOTILLA_PROMETHEUS_SECRETS_DIR: a bearer\n" +
    'token (--token-ref) or basic auth (--username-ref with --password-ref), and a CA bundle for https.',
  options: {
    'token-ref': { type: 'string', value: 'NAME', description: 'file holding the bearer token on the hub' },
    'username-ref': { type: 'string', value: 'NAME', description: 'file holding the basic-auth username on the hub' },
    'password-ref': { type: 'string', value: 'NAME', description: 'file holding the basic-auth password on the hub' },
    'ca-ref': { type: 'string', value: 'NAME', description: 'file holding the PEM CA bundle on the hub (https)' },
  },
  async run(ctx, { positionals: [name, url], options }) {
    const tokenRef = str(options, 'token-ref');
    const usernameRef = str(options, 'username-ref');
    const passwordRef = str(options, 'password-ref');
    const caRef = str(options, 'ca-ref');
    if (!usernameRef !== !passwordRef) throw usageError('give --username-ref and --password-ref together');
    const body = {
      url: url === 'none' ? null : url,
      ...(tokenRef ? { tokenRef } : {}),
      ...(usernameRef && passwordRef ? { basicAuth: { usernameRef, passwordRef } } : {}),
      ...(caRef ? { caRef } : {}),
    };
    const c = await ctx.client.request<Cluster>('PUT', `/clusters/${seg(name!)}/prometheus`, { body });
    return done(ctx, `cluster ${c.name} Prometheus: ${c.prometheusUrl ?? 'none'}${prometheusRefsText(c)}`, c);
  },
};

const revoke: Command = {
  group: 'clusters',
  verb: 'revoke',
  args: ['NAME'],
  summary: "Revoke a cluster's NATS key (admin): it is cut off and must register again.",
  details: [
    "The agent's NATS connections close on every node within seconds, and the hub refuses to renew",
    'its credentials: the agent stays up, reports /readyz not ready (hublink-credentials) and counts',
    'the refusals in flotilla_agent_hublink_credential_renewals_total{result="refused"}.',
    "To bring the cluster back, delete the agent's join Secret (flotilla-agent-join) and restart it",
    'with a bootstrap token: it registers a new key, and an operator accepts the cluster again.',
    '',
    'Re-keying cannot be done from here: it is initiated by the agent, with a request signed by its',
    'current key (POST /api/v1/clusters/NAME/credentials/rekey), so that only the cluster can name',
    'its next key.',
  ].join('\n'),
  async run(ctx, { positionals: [name] }) {
    const c = await ctx.client.request<Cluster>('POST', `/clusters/${seg(name!)}/credentials/revoke`);
    return done(ctx, `cluster ${c.name}: NATS key revoked; the cluster must register again`, c);
  },
};

const remove: Command = {
  group: 'clusters',
  verb: 'remove',
  args: ['NAME'],
  summary: 'Remove a cluster from the fleet (its credentials stop working).',
  async run(ctx, { positionals: [name] }) {
    await ctx.client.request('DELETE', `/clusters/${seg(name!)}`);
    return done(ctx, `cluster ${name} removed`, undefined);
  },
};

export const clusterCommands: readonly Command[] = [list, get, accept, label, windows, prometheus, revoke, remove];
