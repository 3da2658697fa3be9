// How the webhook benches start `agent manager` from the sources: one place for the flags both
// the pod-create bench (bench.ts) and the budget bench (pub.ts) pass.
import os from 'node:os';

/** The machine's first non-loopback IPv4 address. */
export function hostAddress(): string {
  const found = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal);
  if (!found) throw new Error('no non-loopback IPv4 address for the webhook');
  return found.address;
}

export interface BenchAgentOptions {
  kubeconfigPath: string;
  namespace: string;
  healthPort: number;
  /** A non-loopback address: the apiserver then speaks HTTP/1.1 to the webhook, as behind a Service. */
  webhookHost: string;
  webhookPort: number;
  components: string;
  /** Node flags before the script (e.g. --cpu-prof). */
  nodeFlags?: string[];
  /** Further agent flags. */
  extra?: string[];
}

/** Node's arguments for `agent manager` run from the sources, its webhook in URL mode. */
export function benchAgentArgs(o: BenchAgentOptions): string[] {
  return [
    ...(o.nodeFlags ?? []),
    '--conditions=@flotilla/source',
    '--import',
    'tsx',
    'agent/src/main.ts',
    'manager',
    `--kubeconfig=${o.kubeconfigPath}`,
    '--cluster-name=bench',
    '--no-leader-elect',
    `--namespace=${o.namespace}`,
    '--health-host=127.0.0.1',
    `--health-port=${o.healthPort}`,
    '--log-level=warn',
    `--components=${o.components}`,
    ...(o.extra ?? []),
    `--webhook-host=${o.webhookHost}`,
    `--webhook-port=${o.webhookPort}`,
    `--webhook-url=https://${o.webhookHost}:${o.webhookPort}`,
    '--webhook-timeout-seconds=10',
  ];
}
