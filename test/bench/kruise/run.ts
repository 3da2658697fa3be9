// One run of the side-by-side bench: a fresh harness cluster, one CloneSet controller (kruise-manager
// as shipped, kruise-manager with a raised client rate limit, or the Flotilla agent) and the same
// phases, measured with the CloneSet bench's instrument (settle() before each phase, the protobuf
// pod counter, CPU from /proc, resident memory from /proc).
import os from 'node:os';
import path from 'node:path';
import { createKubeRest, type KubeRest } from '../../../agent/src/runtime/rest.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { freePort, readRssBytes, startEnvironment, startProcess, type Cluster } from '../../env/src/index.js';
import { CONTROL_PLANE } from '../cpus.js';
import {
  cloneSet,
  cpuSeconds,
  installCrds,
  namespace,
  patchCloneSet,
  settle,
  sleep,
  status,
  until,
} from '../cloneset/measure.js';
import { podCounter } from '../cloneset/pod-counter.js';
import { installKruise, kruiseStep, startKruiseManager, type KruiseDist } from './kruise-manager.js';
import type { RunMeasures, Subject } from './summary.js';

/** The raised client rate limit of the second kruise configuration. */
export const RAISED_QPS = { qps: 1000, burst: 2000 };

/** Processes whose CPU every phase reports, besides the controller's. */
const PROCESSES = [...CONTROL_PLANE, 'kwok'] as const;

export interface RunOptions {
  subject: Subject;
  round: number;
  pods: number;
  /** Seconds of the idle window (after the controller is ready and the cluster settled). */
  idleSeconds: number;
  root: string;
  kruise?: KruiseDist;
  /** Node arguments that start the agent (agentCommand() and the image's runtime, resolved once). */
  agent: { nodeArgs: string[]; env: Record<string, string> };
  keepEnv: boolean;
}

/** CPU milliseconds per process over one phase. */
type PhaseCpu = Record<string, number>;

export interface RunRecord extends RunMeasures {
  pods: number;
  kwokNodes: number;
  clusterStartSeconds: number;
  /** Seconds from starting the controller until it reconciled its first CloneSet. */
  controllerStartSeconds: number;
  cpuMs: { idle: PhaseCpu; scaleUp: PhaseCpu; inPlaceUpdate: PhaseCpu; scaleDown: PhaseCpu };
  loadAverage1m: { start: number; end: number };
}

const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;
const mib = (bytes: number): number => round(bytes / 1024 / 1024, 1);
const log = (msg: string): void => void process.stderr.write(`[bench:kruise] ${msg}\n`);

/** A controller the run started: its pid for /proc, its log's end, and how to stop it. */
interface Controller {
  pid: number;
  logTail(): string;
  stop(): Promise<void>;
}

async function startFlotilla(opts: RunOptions, cluster: Cluster): Promise<Controller> {
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

async function startKruise(opts: RunOptions, cluster: Cluster, rest: KubeRest): Promise<Controller> {
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

/** Polls a CloneSet's status (and, given, a check of its own) until `done` holds. */
async function untilStatus(
  rest: KubeRest,
  ns: string,
  what: string,
  done: (s: Awaited<ReturnType<typeof status>>) => boolean | Promise<boolean>,
): Promise<void> {
  await until(what, async () => done(await status(rest, ns, 'web')), 900_000, 250);
}

export async function runOnce(opts: RunOptions): Promise<RunRecord> {
  const nodes = Math.ceil(opts.pods / 100) + 2;
  const load = (): number => round(os.loadavg()[0]!);
  const loadStart = load();
  const t = performance.now();
  const env = await startEnvironment({
    // Profiling for settle()'s garbage collection (/debug/pprof/heap?gc=1).
    clusters: [{ name: 'bench', nodes, apiserverArgs: ['--profiling=true'] }],
    keep: opts.keepEnv,
  });
  const clusterStartSeconds = round((performance.now() - t) / 1000);
  const cluster = env.clusters[0]!;
  const rest = createKubeRest(cluster.kubeConfig());
  const pidOf = (name: string): number | undefined =>
    [...cluster.processes, env.etcd.process].find((p) => p.name.endsWith(name))?.pid;
  let controller: Controller | undefined;
  let sampler: NodeJS.Timeout | undefined;
  try {
    const startedAt = performance.now();
    if (opts.subject === 'flotilla') {
      await installCrds(rest, opts.root);
      controller = await startFlotilla(opts, cluster);
    } else {
      controller = await startKruise(opts, cluster, rest);
    }
    const pid = controller.pid;
    // Ready means its CloneSet controller works: a CloneSet of no replicas gets its status.
    const probe = await namespace(rest, 'ready-probe');
    await rest.request({ method: 'POST', path: resourcePath(Resources.cloneSets, probe), body: cloneSet('probe', 0) });
    const reconciled = (): Promise<void> =>
      until(
        'its first CloneSet reconciled',
        async () => (await status(rest, probe, 'probe')).observedGeneration === 1,
        180_000,
        250,
      );
    await (opts.subject === 'flotilla' ? reconciled() : kruiseStep('reconciling its first CloneSet', reconciled));
    const controllerStartSeconds = round((performance.now() - startedAt) / 1000);

    const names = [...PROCESSES, 'controller'];
    const pids = (): Record<string, number | undefined> => ({
      ...Object.fromEntries(PROCESSES.map((n) => [n, pidOf(n)])),
      controller: pid,
    });
    const cpuNow = (): Record<string, number> =>
      Object.fromEntries(Object.entries(pids()).map(([n, p]) => [n, cpuSeconds(p)]));
    const cpuSince = (mark: Record<string, number>): PhaseCpu => {
      const now = cpuNow();
      return Object.fromEntries(names.map((n) => [n, Math.round((now[n]! - mark[n]!) * 1000)]));
    };
    const settlePhase = (): Promise<void> =>
      settle(rest, () => CONTROL_PLANE.reduce((sum, n) => sum + cpuSeconds(pidOf(n)), 0));
    let peak = 0;
    sampler = setInterval(() => (peak = Math.max(peak, readRssBytes(pid))), 250);
    /** Mean resident memory over `seconds`, sampled every second. */
    const meanRss = async (seconds: number): Promise<number> => {
      let sum = 0;
      for (let i = 0; i < seconds; i++) {
        sum += readRssBytes(pid);
        await sleep(1000);
      }
      return sum / seconds;
    };

    log(`${opts.subject} round ${opts.round}: idle for ${opts.idleSeconds} s`);
    await settlePhase();
    const idleMark = cpuNow();
    const idleRss = await meanRss(opts.idleSeconds);
    const idleCpu = cpuSince(idleMark);

    const ns = await namespace(rest, 'bench');
    await settlePhase();
    const counter = await podCounter(cluster.kubeConfig(), ns);
    log(`${opts.subject} round ${opts.round}: scale 0 → ${opts.pods}`);
    const upMark = cpuNow();
    const t0 = performance.now();
    await rest.request({
      method: 'POST',
      path: resourcePath(Resources.cloneSets, ns),
      body: cloneSet('web', opts.pods),
    });
    await until('all pods created', () => counter.count() >= opts.pods, 900_000, 20);
    const createdSeconds = (performance.now() - t0) / 1000;
    await counter.stop();
    await untilStatus(rest, ns, 'all pods ready', (s) => s.readyReplicas === opts.pods);
    const readySeconds = (performance.now() - t0) / 1000;
    const scaleUpCpu = cpuSince(upMark);
    log(`created in ${round(createdSeconds)} s, ready in ${round(readySeconds)} s`);

    await settlePhase();
    const afterScaleUpRss = await meanRss(5);

    await settlePhase();
    log(`${opts.subject} round ${opts.round}: in-place update of ${opts.pods}`);
    const updateMark = cpuNow();
    const t1 = performance.now();
    await patchCloneSet(rest, ns, 'web', { image: 'registry.local/app:v2' });
    await untilStatus(
      rest,
      ns,
      'all pods updated and ready',
      (s) => s.observedGeneration === 2 && s.updatedReplicas === opts.pods && s.updatedReadyReplicas === opts.pods,
    );
    const updateSeconds = (performance.now() - t1) / 1000;
    const updateCpu = cpuSince(updateMark);
    log(`updated in ${round(updateSeconds)} s`);

    await settlePhase();
    log(`${opts.subject} round ${opts.round}: scale ${opts.pods} → 0`);
    const downMark = cpuNow();
    const t2 = performance.now();
    await patchCloneSet(rest, ns, 'web', { replicas: 0 });
    await untilStatus(rest, ns, 'all pods gone', async (s) => {
      if (s.replicas !== 0) return false;
      const left = await rest.request<{ items: unknown[] }>({
        method: 'GET',
        path: resourcePath(Resources.pods, ns),
        query: { limit: 1 },
      });
      return left.items.length === 0;
    });
    const downSeconds = (performance.now() - t2) / 1000;
    const downCpu = cpuSince(downMark);
    log(`scaled down in ${round(downSeconds)} s`);

    return {
      subject: opts.subject,
      round: opts.round,
      pods: opts.pods,
      kwokNodes: nodes,
      clusterStartSeconds,
      controllerStartSeconds,
      scaleUp: { createdSeconds: round(createdSeconds), readySeconds: round(readySeconds) },
      inPlaceUpdate: { seconds: round(updateSeconds) },
      scaleDown: { seconds: round(downSeconds) },
      rssMiB: { idle: mib(idleRss), afterScaleUp: mib(afterScaleUpRss), peak: mib(peak) },
      idleCpuCores: round(idleCpu.controller! / 1000 / opts.idleSeconds, 4),
      cpuMs: { idle: idleCpu, scaleUp: scaleUpCpu, inPlaceUpdate: updateCpu, scaleDown: downCpu },
      loadAverage1m: { start: loadStart, end: load() },
    };
  } catch (err) {
    // The cluster's directory goes with it: keep the controller's last words in the error.
    const tail = controller?.logTail();
    if (!tail) throw err;
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${opts.subject} log tail:\n${tail}`, {
      cause: err,
    });
  } finally {
    if (sampler) clearInterval(sampler);
    await controller?.stop();
    await env.stop();
  }
}
