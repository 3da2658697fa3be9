/**
 * A real `agent manager` joined to a suite's hub, as a user installs one: it registers with the
 * bootstrap token, an operator accepts it, and it serves its health port on loopback.
 */
import { freePort } from '@flotilla/test';
import type { ClusterInfo } from '../helpers/context.js';
import { eventually } from '../helpers/kube.js';
import { startAgentProcess, type AgentProcess } from './agent-process.js';
import { rest, type TestHub } from './fleet.js';

export interface LinkedAgentOptions {
  hub: TestHub;
  cluster: ClusterInfo;
  /** The agent's own namespace (its join secret and lease live there). */
  namespace: string;
  name: string;
  extraArgs?: string[];
}

export interface LinkedAgent {
  proc: AgentProcess;
  healthPort: number;
}

export async function startLinkedAgent(o: LinkedAgentOptions): Promise<LinkedAgent> {
  const healthPort = await freePort();
  const proc = startAgentProcess(
    [
      `--kubeconfig=${o.cluster.kubeconfigPath}`,
      `--cluster-name=${o.name}`,
      '--health-host=127.0.0.1',
      `--health-port=${healthPort}`,
      `--namespace=${o.namespace}`,
      '--no-leader-elect',
      '--shutdown-timeout=10s',
      `--hub-url=${o.hub.hub.url}`,
      // The suites' hubs serve plain HTTP on loopback; NATS is TLS.
      '--insecure=true',
      `--join-secret=join-${o.name}`,
      `--cluster-labels=suite=${o.name}`,
      ...(o.extraArgs ?? []),
    ],
    { FLOTILLA_BOOTSTRAP_TOKEN: o.hub.bootstrapToken, FLOTILLA_LOG_LEVEL: 'info' },
  );
  return { proc, healthPort };
}

/** Waits for the agent's registration and accepts it, as an operator does. */
export async function acceptWhenRegistered(t: TestHub, name: string): Promise<void> {
  await eventually(
    `${name} registers`,
    async () => {
      const res = await t.hub.app.inject({
        method: 'GET',
        url: `/api/v1/clusters/${name}`,
        headers: { authorization: `Bearer ${t.viewerToken}` },
      });
      return res.statusCode === 200;
    },
    120_000,
    250,
  );
  await rest(t, 'POST', `/api/v1/clusters/${name}/accept`, t.operatorToken);
}
