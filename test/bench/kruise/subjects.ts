// The controllers a side-by-side bench compares, and how one run starts each on its harness
// cluster: kruise-manager as its chart ships it, kruise-manager with a raised client rate limit,
// or the Flotilla agent as its image runs it. bench:kruise (CloneSets) and bench:daemonset
// (Advanced DaemonSets) start them through here, so both compare the same three programs.
// bench:kruise's ceiling starts no controller: the bench process itself makes the writes.
import path from 'node:path';
import { createKubeRest, type KubeRest } from '../../../agent/src/runtime/rest.js';
import { freePort, startProcess, type Cluster } from '../../env/src/index.js';
import { agentImageRuntime } from '../agent-image.js';
import { agentCommand, installCrds, namespace, until } from '../cloneset/measure.js';
import { installKruise, startKruiseManager, type KruiseDist } from './kruise-manager.js';
import type { Subject } from './summary.js';

/** The raised client rate limit of the second kruise configuration. */
export const RAISED_QPS = { qps: 1000, burst: 2000 };

/**
 * The ceiling's writes in flight at most: far above the 64 creations a controller sends at once,
 * so its writes wait on the apiserver and kwok, not on the client.
 */
export const CEILING_WRITES_IN_FLIGHT = 200;

/** How every run starts the agent, resolved once per bench. */
export interface AgentLaunch {
  /** Node's arguments: the image's ENTRYPOINT flags, then the script (or the tsx loader). */
  nodeArgs: string[];
  /** The variables the image's ENV lines set. */
  env: Record<string, string>;
  /** What ran and with which flags, for the results file. */
  describe: string;
}

/**
 * The agent as its image runs it (agent-image.ts): the ENTRYPOINT's Node flags and ENV, over the
 * bundle built now from this tree (agentCommand), else the unbundled build, else the sources.
 * `extraNodeFlags` come after the image's (a later V8 flag wins): a setting tried before it goes
 * into the image, or a profiler (--cpu-prof, --heapsnapshot-signal).
 */
export function agentLaunch(root: string, extraNodeFlags: readonly string[] = []): AgentLaunch {
  const agent = agentCommand(root);
  const image = agentImageRuntime(root);
  const nodeFlags = [...image.nodeFlags, ...extraNodeFlags];
  const settings = [...nodeFlags, ...Object.entries(image.env).map(([k, v]) => `${k}=${v}`)];
  return {
    nodeArgs: [...nodeFlags, ...agent.args],
    env: image.env,
    describe: `${agent.runtime}; ${settings.join(' ')}`,
  };
}

/** The subjects that run kruise-manager. */
export const isKruise = (subject: Subject): boolean => subject === 'kruise' || subject === 'kruise-qps1000';

/** One line per subject for the results file: what ran. */
export function subjectDescriptions(kruiseVersion: string, agent: AgentLaunch): Record<Subject, string> {
  return {
    kruise: `kruise-manager ${kruiseVersion}, as its chart starts it (client rate limit 30 qps / burst 50, log level 4), webhook in URL mode`,
    'kruise-qps1000': `the same with --rest-config-qps=${RAISED_QPS.qps} --rest-config-burst=${RAISED_QPS.burst}`,
    flotilla: `agent manager, every component (webhook in URL mode); ${agent.describe}`,
    ceiling: `no controller: the bench makes a CloneSet controller's writes itself, every pod at once (at most ${CEILING_WRITES_IN_FLIGHT} requests in flight, kept-alive HTTP/1.1); its "controller" CPU is the bench process's`,
  };
}

/** A controller a run started: its pid for /proc, its log's end, and how to stop it. */
export interface Controller {
  pid: number;
  logTail(): string;
  stop(): Promise<void>;
}

export interface StartOptions {
  subject: Subject;
  root: string;
  /** Required for the kruise subjects. */
  kruise?: KruiseDist;
  agent: AgentLaunch;
}

async function startFlotilla(opts: StartOptions, cluster: Cluster): Promise<Controller> {
  const ns = 'flotilla-system';
  const rest = createKubeRest(cluster.kubeConfig());
  await namespace(rest, ns);
  const healthPort = await freePort();
  const webhookPort = await freePort();
  const agent = startProcess({
    name: 'flotilla-agent',
    command: process.execPath,
    args: [
      ...opts.agent.nodeArgs,
      'manager',
      `--kubeconfig=${cluster.kubeconfigPath}`,
      '--cluster-name=bench',
      '--no-leader-elect',
      `--namespace=${ns}`,
      // Every component, the webhook too, in URL mode on loopback as kruise-manager's.
      '--components=*',
      '--webhook-host=127.0.0.1',
      `--webhook-port=${webhookPort}`,
      `--webhook-url=https://127.0.0.1:${webhookPort}`,
      '--health-host=127.0.0.1',
      `--health-port=${healthPort}`,
      '--log-level=warn',
    ],
    cwd: opts.root,
    env: { ...process.env, ...opts.agent.env },
    logFile: path.join(cluster.dir, 'flotilla-agent.log'),
  });
  await until(
    'the agent ready (/readyz)',
    async () => {
      if (agent.hasExited()) throw new Error(`the agent exited; log tail:\n${agent.logTail(30)}`);
      return fetch(`http://127.0.0.1:${healthPort}/readyz`).then(
        (res) => res.ok,
        () => false,
      );
    },
    180_000,
    250,
  );
  return { pid: agent.pid, logTail: () => agent.logTail(30), stop: () => agent.stop() };
}

async function startKruise(opts: StartOptions, cluster: Cluster, rest: KubeRest): Promise<Controller> {
  if (!opts.kruise) throw new Error('kruise subject without a kruise-manager');
  await installKruise(rest, opts.kruise.source);
  const manager = await startKruiseManager({
    binary: opts.kruise.binary,
    kubeconfigPath: cluster.kubeconfigPath,
    dir: path.join(cluster.dir, 'kruise'),
    ...(opts.subject === 'kruise-qps1000' ? { qps: RAISED_QPS } : {}),
  });
  return { pid: manager.pid, logTail: () => manager.logTail(30), stop: () => manager.stop() };
}

/**
 * Installs the subject's CRDs (Flotilla's deploy/crds, or kruise's own with its webhook
 * configurations) and starts it, until its health endpoint says ready. Whether its controllers
 * work is the bench's probe to tell (a workload of its own kind reconciled). The ceiling gets
 * Flotilla's CRDs (its CloneSet owns the pods) and no controller: the process measured as its
 * controller is the bench itself, which makes the writes.
 */
export async function startController(opts: StartOptions, cluster: Cluster, rest: KubeRest): Promise<Controller> {
  if (isKruise(opts.subject)) return startKruise(opts, cluster, rest);
  await installCrds(rest, opts.root);
  if (opts.subject === 'ceiling') return { pid: process.pid, logTail: () => '', stop: async () => {} };
  return startFlotilla(opts, cluster);
}
