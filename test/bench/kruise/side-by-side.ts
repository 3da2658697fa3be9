// What a side-by-side bench does around its phases: the command line, the kruise-manager it
// runs, a fresh harness cluster per run with one subject as its only workload controller, the
// instrument every phase is measured with (CPU from /proc, settle() before a phase, resident
// memory), and the results file rewritten after every run. bench:kruise and bench:daemonset
// differ only in their phases and summaries.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createKubeRest, type KubeRest, type KubeRestClient } from '../../../agent/src/runtime/rest.js';
import { readRssBytes, readVersions, startEnvironment, type Cluster } from '../../env/src/index.js';
import { CONTROL_PLANE } from '../cpus.js';
import { cpuSeconds, settle, sleep, until } from '../cloneset/measure.js';
import { podCounter } from '../cloneset/pod-counter.js';
import { givenKruiseDist, kruiseStep, resolveKruise, type ResolvedKruise } from './kruise-manager.js';
import {
  agentLaunch,
  isKruise,
  startController,
  subjectDescriptions,
  type Controller,
  type StartOptions,
} from './subjects.js';
import { CONTROLLERS, schedule, type Subject } from './summary.js';

/** Processes whose CPU every phase reports, besides the controller's. */
const PROCESSES = [...CONTROL_PLANE, 'kwok'] as const;

export const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;
export const mib = (bytes: number): number => round(bytes / 1024 / 1024, 1);

/** CPU milliseconds per process over one phase: the control plane's, kwok's and the controller's. */
export type PhaseCpu = Record<string, number>;

/** How a run measures: the same for every subject. */
export interface Instrument {
  /** CPU seconds each measured process has used so far: a phase's start mark. */
  cpuNow(): Record<string, number>;
  cpuSince(mark: Record<string, number>): PhaseCpu;
  /** The CloneSet bench's settle(): the control plane quiet, its and the bench's garbage collected. */
  settle(): Promise<void>;
  /** Mean resident memory of the controller (and its children) over `seconds`, a sample a second. */
  meanRss(seconds: number): Promise<number>;
  /** The most resident memory of a sample every 250 ms since the controller was ready. */
  peakRss(): number;
}

function instrument(
  rest: KubeRestClient,
  pidOf: (name: string) => number | undefined,
  pid: number,
): Instrument & { stop(): void } {
  const names = [...PROCESSES, 'controller'];
  const cpuNow = (): Record<string, number> => ({
    ...Object.fromEntries(PROCESSES.map((n) => [n, cpuSeconds(pidOf(n))])),
    controller: cpuSeconds(pid),
  });
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, readRssBytes(pid))), 250);
  return {
    cpuNow,
    cpuSince: (mark) => {
      const now = cpuNow();
      return Object.fromEntries(names.map((n) => [n, Math.round((now[n]! - mark[n]!) * 1000)]));
    },
    settle: () => settle(rest, () => CONTROL_PLANE.reduce((sum, n) => sum + cpuSeconds(pidOf(n)), 0)),
    meanRss: async (seconds) => {
      let sum = 0;
      for (let i = 0; i < seconds; i++) {
        sum += readRssBytes(pid);
        await sleep(1000);
      }
      return sum / seconds;
    },
    peakRss: () => peak,
    stop: () => clearInterval(sampler),
  };
}

/** One run: which subject, in which round, on how many kwok nodes. */
export interface RunSetup extends StartOptions {
  round: number;
  nodes: number;
  keepEnv: boolean;
}

/** How a bench tells that the subject's controller works: a workload of its kind reconciled. */
export interface Readiness {
  /** The step's name in a kruise failure, e.g. "reconciling its first CloneSet". */
  step: string;
  probe(rest: KubeRest): Promise<void>;
}

export interface RunContext {
  cluster: Cluster;
  rest: KubeRest;
  measure: Instrument;
}

/** What every run records besides its phases. */
export interface RunFrame {
  subject: Subject;
  round: number;
  kwokNodes: number;
  clusterStartSeconds: number;
  /** Seconds from starting the controller until its readiness probe passed. */
  controllerStartSeconds: number;
  loadAverage1m: { start: number; end: number };
}

/**
 * Starts a fresh harness cluster (the apiserver with profiling, for settle()'s collections),
 * starts the subject on it, waits for `ready` (not for the ceiling, which runs no controller),
 * then runs `phases` with the instrument. A failure carries the controller's log tail, since the
 * cluster's folder goes with it; everything started is stopped either way.
 */
export async function runOnFreshCluster<T>(
  setup: RunSetup,
  ready: Readiness,
  phases: (ctx: RunContext) => Promise<T>,
): Promise<RunFrame & T> {
  const load = (): number => round(os.loadavg()[0]!);
  const loadStart = load();
  const t = performance.now();
  const env = await startEnvironment({
    clusters: [{ name: 'bench', nodes: setup.nodes, apiserverArgs: ['--profiling=true'] }],
    keep: setup.keepEnv,
  });
  const clusterStartSeconds = round((performance.now() - t) / 1000);
  const cluster = env.clusters[0]!;
  const rest = createKubeRest(cluster.kubeConfig());
  const pidOf = (name: string): number | undefined =>
    [...cluster.processes, env.etcd.process].find((p) => p.name.endsWith(name))?.pid;
  let controller: Controller | undefined;
  let measure: ReturnType<typeof instrument> | undefined;
  try {
    const startedAt = performance.now();
    controller = await startController(setup, cluster, rest);
    if (isKruise(setup.subject)) await kruiseStep(ready.step, () => ready.probe(rest));
    else if (setup.subject === 'flotilla') await ready.probe(rest);
    const controllerStartSeconds = round((performance.now() - startedAt) / 1000);
    measure = instrument(rest, pidOf, controller.pid);
    const measured = await phases({ cluster, rest, measure });
    return {
      subject: setup.subject,
      round: setup.round,
      kwokNodes: setup.nodes,
      clusterStartSeconds,
      controllerStartSeconds,
      ...measured,
      loadAverage1m: { start: loadStart, end: load() },
    };
  } catch (err) {
    const tail = controller?.logTail();
    if (!tail) throw err;
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${setup.subject} log tail:\n${tail}`, {
      cause: err,
    });
  } finally {
    measure?.stop();
    await controller?.stop();
    await env.stop();
  }
}

/** A phase that creates pods: how long until all were seen, until all were ready, and its CPU. */
export interface Creation {
  createdSeconds: number;
  readySeconds: number;
  cpu: PhaseCpu;
}

/**
 * Times a phase that creates `pods` pods in namespace `ns`: from `create` until the CloneSet
 * bench's protobuf pod counter has seen them all, and until `ready` returns. `failed`, when
 * given, is called while waiting for the pods: it throws, ending the wait, once writes that
 * `create` started and left running have failed.
 */
export async function timeCreation(
  { cluster, measure }: RunContext,
  ns: string,
  pods: number,
  steps: { create(): Promise<unknown>; ready(): Promise<void>; failed?(): void },
): Promise<Creation> {
  const counter = await podCounter(cluster.kubeConfig(), ns);
  const mark = measure.cpuNow();
  const t0 = performance.now();
  await steps.create();
  await until(
    'all pods created',
    () => {
      steps.failed?.();
      return counter.count() >= pods;
    },
    900_000,
    20,
  );
  const createdSeconds = round((performance.now() - t0) / 1000);
  await counter.stop();
  await steps.ready();
  return { createdSeconds, readySeconds: round((performance.now() - t0) / 1000), cpu: measure.cpuSince(mark) };
}

/** The command line of a side-by-side bench: `--name=value` options and bare flags. */
export interface BenchArgs {
  option(name: string): string | undefined;
  positiveInt(name: string, fallback: number): number;
  has(flag: string): boolean;
}

export function benchArgs(argv: string[]): BenchArgs {
  const option = (name: string): string | undefined =>
    argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  return {
    option,
    positiveInt: (name, fallback) => {
      const raw = option(name);
      if (raw === undefined) return fallback;
      const n = Number(raw);
      if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: expected a positive integer, got "${raw}"`);
      return n;
    },
    has: (flag) => argv.includes(`--${flag}`),
  };
}

function chosenSubjects(args: BenchArgs, known: readonly Subject[]): Subject[] {
  const raw = args.option('subjects');
  if (raw === undefined) return [...known];
  const list = raw.split(',');
  for (const s of list) {
    if (!(known as readonly string[]).includes(s))
      throw new Error(`--subjects: "${s}" is not one of ${known.join(', ')}`);
  }
  return list as Subject[];
}

export interface SideBySideBench<R extends { subject: Subject }> {
  /** The bench's name: its log lines start with [bench:<name>]. */
  name: string;
  root: string;
  args: BenchArgs;
  /** The results file when --out is not given. */
  defaultOut: string;
  /** The bench's own settings, written into the results file (pods, nodes, idle window…). */
  settings: Record<string, unknown>;
  /** The subjects it can run, in a round's order, and runs by default; default the three controllers. */
  subjects?: readonly Subject[];
  run(setup: Omit<RunSetup, 'nodes'>): Promise<R>;
  /** `ceilingRatios`, when given, is printed and written beside the ratios. */
  summarize(runs: R[]): { medians: object; ratios: object; ceilingRatios?: object };
}

/**
 * Runs a side-by-side bench: `--rounds` (default 3) rounds of the `--subjects` in turn, each on
 * a fresh cluster; writes the results file after every run, so a failure later keeps what was
 * measured; prints the medians and the ratios. Options every such bench takes: --rounds,
 * --subjects, --out, --keep-env, --agent-node-flags, --kruise-manager and --kruise-src.
 */
export async function runSideBySide<R extends { subject: Subject }>(bench: SideBySideBench<R>): Promise<void> {
  const { args } = bench;
  const log = (msg: string): void => void process.stderr.write(`[bench:${bench.name}] ${msg}\n`);
  const rounds = args.positiveInt('rounds', 3);
  const known = bench.subjects ?? CONTROLLERS;
  const subjects = chosenSubjects(args, known);
  const out = path.resolve(args.option('out') ?? bench.defaultOut);
  const version = readVersions().KRUISE_VERSION;
  let kruise: ResolvedKruise | undefined;
  if (subjects.some(isKruise)) {
    const given = givenKruiseDist(
      args.option('kruise-manager') ?? process.env.KRUISE_MANAGER,
      args.option('kruise-src') ?? process.env.KRUISE_SRC,
    );
    kruise = await resolveKruise(version, given);
  }
  const extraFlags = args.option('agent-node-flags')?.split(/\s+/).filter(Boolean) ?? [];
  const agent = agentLaunch(bench.root, extraFlags);
  const descriptions = subjectDescriptions(version, agent);
  const runs: R[] = [];
  const result = (): Record<string, unknown> => ({
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 1024 ** 3) },
    ...bench.settings,
    rounds,
    subjects: Object.fromEntries(known.map((s) => [s, descriptions[s]])),
    kruiseManager: kruise && { version, from: kruise.from, binarySha256: kruise.sha256 },
    ...bench.summarize(runs),
    runs,
  });
  for (const { subject, round: n } of schedule(rounds, subjects)) {
    log(`run ${runs.length + 1}: ${subject}, round ${n}`);
    const setup = { subject, round: n, root: bench.root, agent, keepEnv: args.has('keep-env') };
    runs.push(await bench.run(kruise ? { ...setup, kruise } : setup));
    mkdirSync(path.dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(result(), null, 2) + '\n');
  }
  const { medians, ratios, ceilingRatios } = bench.summarize(runs);
  console.table(medians);
  console.log('ratios against kruise with the raised rate limit:', JSON.stringify(ratios));
  if (ceilingRatios && Object.keys(ceilingRatios).length > 0) {
    console.log(
      "each subject's time ÷ the ceiling's (1: as fast as the apiserver and kwok go here; kruise-qps1000's row: the most any controller can beat it by):",
    );
    console.table(ceilingRatios);
  }
  log(`results in ${out}`);
}
