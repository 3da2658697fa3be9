import { stringify } from 'yaml';

/** An admin kubeconfig for one harness cluster (token auth, CA pinned inline). */
export function renderKubeconfig(opts: {
  name: string;
  server: string;
  caPem: string;
  token: string;
  user?: string;
}): string {
  const user = opts.user ?? 'admin';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: opts.name,
        cluster: { server: opts.server, 'certificate-authority-data': Buffer.from(opts.caPem).toString('base64') },
      },
    ],
    users: [{ name: user, user: { token: opts.token } }],
    contexts: [{ name: opts.name, context: { cluster: opts.name, user } }],
    'current-context': opts.name,
  });
}
