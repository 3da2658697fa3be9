// CloneSet controller benchmark on one harness cluster (kwok nodes), with the real `agent manager`
// process as the controller:
//   1. the apiserver's raw pod-create ceiling: a plain client loop creating 1,000 pods with the
//      same concurrency as the controller's biggest slow-start batch (64 in flight) and the very
//      pod body the controller sends (newPod(): labels, annotations, owner reference, readiness
//      gate; scheduled onto the kwok nodes like the controller's), once through the runtime's
//      KubeRest (as the agent sends them) and once over a bare keep-alive https.Agent, before the
//      agent starts — and once more over the bare agent right after the scale-up, with the agent
//      running, since the shared machine's load moves. The scale-up is compared with the fastest
//      of the three;
//   2. scale 0 → 1,000 pods: pods/s until all exist (compare with the ceiling), and until ready;
//   3. in-place update of 1,000 pods (InPlaceIfPossible, maxUnavailable 100%) until all updated and ready;
//   4. agent resident memory with 5,000 pods in its caches (4,000 more pods kept Pending by a
//      nodeSelector no node has, so kwok is not the bottleneck).
// Prints the numbers and writes test/bench/results/cloneset.json, with the machine's load average
// (the bench machine is shared).
// Every phase is timed the same way: from its first request until a protobuf pod watch, read by a
// worker thread of the bench (pod-counter.ts), has seen the last pod; and every phase starts from
// the same state (settle(): the phase before has quieted down, the apiserver and the bench have
// just collected their garbage), after an unmeasured warm-up burst (warmUp()).
// Run: npm run bench:cloneset [-- --heapsnapshot=<dir>] [-- --scale-only] [-- --cpu-prof=<dir>]
//      [-- --agent-http1] [-- --runtime-http1] [-- --keep-env] [-- --split-cores]
import { spawn } from 'node:child_process';
import https from 'node:https';
import { mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { PerformanceObserver } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { newPod } from '../../../agent/src/controllers/cloneset/new-pods.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { createKubeRest, type KubeRest, type KubeRestClient } from '../../../agent/src/runtime/rest.js';
import { freePort, readRssBytes, startEnvironment } from '../../env/src/index.js';
import { agentImageRuntime } from '../agent-image.js';
import { podCounter } from './pod-counter.js';
import {
  agentCommand,
  CLOCK_TICKS,
  cloneSet,
  cpuSeconds,
  installCrds,
  namespace,
  patchCloneSet,
  settle,
  sleep,
  status,
  until,
} from './measure.js';
import { CONTROL_PLANE, pinToCpus, splitCpus } from '../cpus.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const PODS = 1000;
const CACHE_PODS = 5000;
const CONCURRENCY = 64;
/** Room (110 pods a node) for the scale-up's pods and the ceiling measured after it, all scheduled. */
const NODES = Math.ceil((2 * PODS) / 100) + 2;
/** `--heapsnapshot=<dir>`: also write a heap snapshot of the agent with the 5,000 pods cached. */
const snapshotDir = process.argv.find((a) => a.startsWith('--heapsnapshot='))?.slice('--heapsnapshot='.length);
/** `--scale-only`: stop after the scale-up and its ceilings; results go to cloneset-scale.json. */
const scaleOnly = process.argv.includes('--scale-only');
/** `--agent-http1`: the agent talks HTTP/1.1 to the apiserver (--no-kube-api-http2), for comparison. */
const agentHttp1 = process.argv.includes('--agent-http1');
/** `--runtime-http1`: the runtime client's ceiling loop (and the bench's other requests) over HTTP/1.1. */
const runtimeHttp1 = process.argv.includes('--runtime-http1');
/**
 * `--keep-env`: keep the cluster's run directory (every component's log) and note the apiserver's
 * age at the scale-up's start, to line its log up with the scale-up (e.g. with GODEBUG=gctrace=1).
 */
const keepEnv = process.argv.includes('--keep-env');
/**
 * `--plain-node`: start the agent with plain `node`, not with the Node flags and environment of
 * the agent image (deploy/docker/agent.Dockerfile), for comparison.
 */
const plainNode = process.argv.includes('--plain-node');
/**
 * `--split-cores`: the control plane (apiserver, etcd, scheduler, controller manager) on the first
 * half of the CPUs, the worker side (kwok's nodes, the agent, the bench's client loops) on the
 * other half, as in a cluster whose controllers and kubelets run on worker nodes: the ceiling is
 * then the apiserver's, not the machine's, and the controller's own CPU does not compete with it.
 */
const splitCores = process.argv.includes('--split-cores');
/** `--cpu-prof=<dir>`: the agent writes a V8 CPU profile there when it exits. */
const cpuProfDir = process.argv.find((a) => a.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);

/**
 * Pod counts at which the scale-up's time is noted: the ends of the slow-start batches (1, 2, 4,
 * … 256 pods, then the rest), seen by the bench's watch, 20 ms resolution.
 */
const MILESTONES = [1, 3, 7, 15, 31, 63, 127, 255, 511, PODS];
const round = (n: number, digits = 1): number => Math.round(n * 10 ** digits) / 10 ** digits;
const mib = (b: number): number => round(b / 1024 / 1024);
const log = (msg: string): void => void process.stderr.write(`[bench] ${msg}\n`);
/** 1-minute load average: other work on the machine skews every number here. */
const load = (): number => round(os.loadavg()[0]!, 2);
const loadAverages: Record<string, number> = {};

/** Seconds since a process started (its /proc start time against the machine's uptime). */
function processAgeSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const startTicks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  return round(uptime - startTicks / CLOCK_TICKS, 2);
}

/**
 * CPU milliseconds per pod of named processes between a sample and now: on a shared machine
 * wall-clock rates move with the load, CPU spent per pod much less.
 */
function cpuMeter(pids: Record<string, () => number | undefined>) {
  const sample = (): Record<string, number> =>
    Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid())]));
  return {
    add: (name: string, pid: () => number | undefined) => void (pids[name] = pid),
    sample,
    msPerPod: (since: Record<string, number>, pods: number): Record<string, number> => {
      const now = sample();
      return Object.fromEntries(
        Object.keys(now).map((name) => [name, round(((now[name]! - (since[name] ?? 0)) * 1000) / pods, 2)]),
      );
    },
  };
}

async function pooled<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < items.length; i = next++) await fn(items[i]!);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

/**
 * A bare POST over one keep-alive https.Agent: the apiserver's ceiling without anything of ours
 * in the way (the runtime client applies the kubeconfig and parses every answer).
 */
async function keepAlivePoster(kc: KubeConfig): Promise<(path: string, body: unknown) => Promise<void>> {
  const tls: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(tls);
  const agent = new https.Agent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key, maxSockets: CONCURRENCY });
  const server = kc.getCurrentCluster()!.server;
  return (p, body) =>
    new Promise((resolve, reject) => {
      const req = https.request(
        new URL(server + p),
        { method: 'POST', agent, headers: { ...(tls.headers ?? {}), 'Content-Type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve() : reject(new Error(`HTTP ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
}

/**
 * The pod the CloneSet controller creates for instance `id` (new-pods.ts), owned by a ConfigMap
 * instead of a CloneSet: same size and shape, but no controller adopts or deletes it.
 */
function controllerPodBody(name: string, id: string, owner: { name: string; uid: string }): unknown {
  const cs = cloneSet(name, PODS);
  cs.metadata = { ...cs.metadata, namespace: undefined, uid: owner.uid };
  const pod = newPod({ cs, template: cs.spec.template, revision: `${name}-7d9f8b6c5d`, id, now: Date.now() });
  pod.metadata.ownerReferences = [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: owner.name,
      uid: owner.uid,
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
  delete pod.metadata.namespace;
  return pod;
}

/**
 * A burst of pods before the first measured phase, created and deleted unmeasured. The
 * apiserver sizes a watcher's buffer when its watch starts, from its watch cache's capacity at
 * that moment (about one second of events: 10 at first, at most 1,000 for pods), and the cache
 * grows only with bursts of events. So in the first burst the watches opened at start (the
 * scheduler's, the controller manager's, kwok's) fall behind their 10 events, are dropped, and
 * come back with a new LIST and watch. Without this the first measured phase alone paid for that.
 */
async function warmUp(rest: KubeRestClient, post: (path: string, body: unknown) => Promise<void>): Promise<void> {
  const ns = await namespace(rest, 'warm-up');
  const owner = await rest.request<{ metadata: { name: string; uid: string } }>({
    method: 'POST',
    path: resourcePath(Resources.configMaps, ns),
    body: { metadata: { name: 'warm-up-owner' } },
  });
  const ids = Array.from({ length: PODS / 2 }, (_, i) => `w${i.toString(36).padStart(4, '0')}`);
  await pooled(ids, CONCURRENCY, (id) =>
    post(resourcePath(Resources.pods, ns), controllerPodBody('warm', id, owner.metadata)),
  );
  await deleteNamespace(rest, ns);
}

/**
 * Creates 1,000 pods in a fresh namespace with a plain client loop (the controller's pod bodies,
 * scheduled onto the kwok nodes) and deletes them again.
 */
async function rawCeiling(
  rest: KubeRestClient,
  kc: KubeConfig,
  settlePhase: () => Promise<void>,
  post: ((path: string, body: unknown) => Promise<void>) | undefined,
  name: string,
): Promise<{
  podsPerSecond: number;
  seconds: number;
  loopSeconds: number;
  counterRewatches: number;
  allContainersReadySeconds: number;
  cpuMsPerPod: Record<string, number>;
  apiserver: ApiserverView;
}> {
  const ns = await namespace(rest, name);
  const owner = await rest.request<{ metadata: { name: string; uid: string } }>({
    method: 'POST',
    path: resourcePath(Resources.configMaps, ns),
    body: { metadata: { name: 'raw-owner' } },
  });
  const ids = Array.from({ length: PODS }, (_, i) => `r${i.toString(36).padStart(4, '0')}`);
  const bodies = ids.map((id) => controllerPodBody('raw', id, owner.metadata));
  // Counted by the same watch as the scale-up, so both phases pay for the same observer and end
  // at the same event: the last pod seen.
  await settlePhase();
  const counter = await podCounter(kc, ns);
  const mark = cpu.sample();
  const requestsBefore = await apiserverRequests(rest);
  const t0 = performance.now();
  await pooled(bodies, CONCURRENCY, async (body) => {
    if (post) await post(resourcePath(Resources.pods, ns), body);
    else await rest.request({ method: 'POST', path: resourcePath(Resources.pods, ns), body });
  });
  const loopSeconds = (performance.now() - t0) / 1000;
  await until('raw pods seen', () => counter.count() >= PODS, 60_000, 5);
  const seconds = (performance.now() - t0) / 1000;
  const counterRewatches = counter.rewatches();
  await counter.stop();
  const cpuMsPerPod = cpu.msPerPod(mark, PODS);
  const requestsAfter = await apiserverRequests(rest);
  const requests = requestsPerPod(requestsBefore, requestsAfter, PODS);
  const createMs = createLatencyMs(requestsBefore, requestsAfter);
  log(
    `ceiling ${name}: requests per pod ${JSON.stringify(requests)}, mean POST pods latency ${createMs} ms; ${JSON.stringify(apiserverInternals(requestsBefore, requestsAfter, PODS))}`,
  );
  const readySeconds = await allContainersReady(rest, ns, t0);
  await deleteNamespace(rest, ns);
  return {
    podsPerSecond: round(PODS / seconds),
    seconds: round(seconds, 2),
    /** Until the last creation's answer; `seconds` goes on until the watch has seen it. */
    loopSeconds: round(loopSeconds, 2),
    /** Watches of the bench's pod counter the apiserver ended in the phase (each resumed by a LIST). */
    counterRewatches,
    allContainersReadySeconds: round(readySeconds, 2),
    cpuMsPerPod,
    apiserver: {
      ...apiserverView(requests, createMs, seconds),
      ...apiserverInternals(requestsBefore, requestsAfter, PODS),
    },
  };
}

/**
 * How fast kwok runs the raw pods on this machine: the floor under "all ready" below. Their Ready
 * condition waits for the InPlaceUpdateReady gate, which only the controller sets, so this waits
 * for ContainersReady.
 */
async function allContainersReady(rest: KubeRest, ns: string, t0: number): Promise<number> {
  await until(
    'raw pods running',
    async () => {
      const list = await rest.request<{ items: { status?: { conditions?: { type: string; status: string }[] } }[] }>({
        method: 'GET',
        path: resourcePath(Resources.pods, ns),
      });
      return (
        list.items.filter((p) => p.status?.conditions?.some((c) => c.type === 'ContainersReady' && c.status === 'True'))
          .length === PODS
      );
    },
    600_000,
    500,
  );
  return (performance.now() - t0) / 1000;
}

async function deleteNamespace(rest: KubeRest, ns: string): Promise<void> {
  await rest.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns}` });
  // Their node capacity is needed by the next phase.
  await until(
    `namespace ${ns} gone`,
    async () => {
      try {
        await rest.request({ method: 'GET', path: `/api/v1/namespaces/${ns}` });
        return false;
      } catch {
        return true;
      }
    },
    600_000,
    1000,
  );
}

/** Milliseconds the bench's main thread has spent in garbage collection (for the scale-up's `timeline`). */
let benchGcMs = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) benchGcMs += entry.duration;
}).observe({ entryTypes: ['gc'] });

/** The apiserver's request counters by verb, resource and subresource (from its /metrics). */
async function apiserverRequests(rest: KubeRestClient): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const chunks: Buffer[] = [];
  await (
    await rest.stream({ method: 'GET', path: '/metrics' }, (c) => void chunks.push(c))
  ).done;
  const text = Buffer.concat(chunks).toString('utf8');
  for (const line of text.split('\n')) {
    // The apiserver's own allocation, GC and watch traffic, to see what a phase costs it beyond requests.
    const own =
      /^(go_memstats_alloc_bytes_total|go_memstats_heap_alloc_bytes|go_gc_duration_seconds_count|apiserver_watch_events_total|apiserver_watch_events_sizes_sum)[{ ]/.exec(
        line,
      );
    if (own) {
      const resource = /resource="(\w+)"/.exec(line)?.[1];
      const key = `${own[1]}${resource ? ` ${resource}` : ''}`;
      counts.set(key, (counts.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
      continue;
    }
    const sum = line.startsWith('apiserver_request_duration_seconds_sum{');
    if (!line.startsWith('apiserver_request_total{') && !sum) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    const key = [sum ? 'seconds' : '', labels.verb, labels.resource, labels.subresource].filter(Boolean).join(' ');
    counts.set(key, (counts.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return counts;
}

/** What the apiserver saw of a phase's pod creations. */
interface ApiserverView {
  requestsPerPod: Record<string, number>;
  meanCreateLatencyMs: number;
  /** Creations the apiserver was working on at once, on average: how busy the client kept it. */
  meanCreatesInFlight: number;
}

function apiserverView(requestsPerPod: Record<string, number>, createMs: number, seconds: number): ApiserverView {
  return {
    requestsPerPod,
    meanCreateLatencyMs: createMs,
    meanCreatesInFlight: round((PODS * createMs) / 1000 / seconds),
  };
}

/** Mean apiserver latency (ms) of pod creations between two samples of apiserverRequests. */
function createLatencyMs(before: Map<string, number>, after: Map<string, number>): number {
  const delta = (key: string): number => (after.get(key) ?? 0) - (before.get(key) ?? 0);
  return round((delta('seconds POST pods') * 1000) / Math.max(1, delta('POST pods')));
}

/**
 * What the apiserver itself spent per pod between two samples of apiserverRequests: MB allocated,
 * GC cycles, and watch events (count and KB) sent per pod, by resource.
 */
function apiserverInternals(before: Map<string, number>, after: Map<string, number>, pods: number) {
  const delta = (key: string): number => (after.get(key) ?? 0) - (before.get(key) ?? 0);
  const byResource = (prefix: string, scale: number): Record<string, number> =>
    Object.fromEntries(
      [...after.keys()]
        .filter((k) => k.startsWith(`${prefix} `))
        .map((k): [string, number] => [k.slice(prefix.length + 1), round(delta(k) / scale / pods, 2)])
        .filter(([, n]) => n >= 0.01),
    );
  return {
    /** Just after the collection settle() starts it with: what each GC cycle of the phase marks. */
    heapMBAtStart: round((before.get('go_memstats_heap_alloc_bytes') ?? 0) / 1e6),
    allocatedMBPerPod: round(delta('go_memstats_alloc_bytes_total') / 1e6 / pods, 3),
    gcCycles: delta('go_gc_duration_seconds_count'),
    watchEventsPerPod: byResource('apiserver_watch_events_total', 1),
    watchEventKBPerPod: byResource('apiserver_watch_events_sizes_sum', 1000),
  };
}

/** Requests per pod between two samples of apiserverRequests, the busiest first. */
function requestsPerPod(before: Map<string, number>, after: Map<string, number>, pods: number): Record<string, number> {
  return Object.fromEntries(
    [...after]
      .map(([key, n]): [string, number] => [key, round((n - (before.get(key) ?? 0)) / pods, 2)])
      .filter(([key, n]) => n >= 0.01 && /^[A-Z]/.test(key))
      .sort((a, b) => b[1] - a[1]),
  );
}

/** One unlabelled sample of the agent's /metrics (prom-client default process metrics). */
async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

/** The agent's cloneset queue, reconcile and informer counters, for the log. */
async function controllerMetrics(port: number): Promise<string> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => /^flotilla_agent_(workqueue_depth|reconcile_total|informer_(re|watches))\S*(cloneset|pods)/.test(l))
    .join('; ');
}

/** Writes a heap snapshot of the agent into `dir` (it was started with --heapsnapshot-signal). */
async function heapSnapshot(pid: number, dir: string): Promise<string | undefined> {
  const before = new Set(readdirSync(dir));
  process.kill(pid, 'SIGUSR2');
  let file: string | undefined;
  await until(
    'heap snapshot written',
    () => {
      file = readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
      // The file appears at once and grows while V8 writes it.
      return file !== undefined && statSync(path.join(dir, file)).size > 0;
    },
    300_000,
    1000,
  );
  let size = -1;
  while (file && statSync(path.join(dir, file)).size !== size) {
    size = statSync(path.join(dir, file)).size;
    await sleep(2000);
  }
  return file && path.join(dir, file);
}

log(`starting a cluster with ${NODES} kwok nodes`);
const env = await startEnvironment({
  // Profiling for settle()'s garbage collection (/debug/pprof/heap?gc=1).
  clusters: [{ name: 'bench', nodes: NODES, apiserverArgs: ['--profiling=true'] }],
  keep: keepEnv,
});
const cluster = env.clusters[0]!;
const rest = createKubeRest(cluster.kubeConfig(), { http2: !runtimeHttp1 });
const pidOf = (name: string): number | undefined =>
  [...cluster.processes, env.etcd.process].find((p) => p.name.endsWith(name))?.pid;
const cpuSplit = splitCpus();
if (splitCores) {
  for (const name of CONTROL_PLANE) pinToCpus(pidOf(name), cpuSplit.controlPlane, name);
  pinToCpus(pidOf('kwok'), cpuSplit.workers, 'kwok');
  pinToCpus(process.pid, cpuSplit.workers, 'bench');
  log(`control plane on CPUs ${cpuSplit.controlPlane}; kwok, the bench and the agent on CPUs ${cpuSplit.workers}`);
}
/** CPU use of the processes doing the work, for a load-independent view of where the time goes. */
const cpu = cpuMeter({
  apiserver: () => pidOf('kube-apiserver'),
  etcd: () => pidOf('etcd'),
  scheduler: () => pidOf('kube-scheduler'),
  controllerManager: () => pidOf('kube-controller-manager'),
  kwok: () => pidOf('kwok'),
  bench: () => process.pid,
});
const settlePhase = (): Promise<void> =>
  settle(rest, () => CONTROL_PLANE.reduce((sum, name) => sum + cpuSeconds(pidOf(name)), 0));
let stopAgent = (): Promise<unknown> => Promise.resolve();
try {
  await installCrds(rest, root);
  loadAverages.start = load();
  log(`warm-up: ${PODS / 2} pods created and deleted`);
  await warmUp(rest, await keepAlivePoster(cluster.kubeConfig()));
  log('raw pod-create ceiling');
  const ceiling = await rawCeiling(rest, cluster.kubeConfig(), settlePhase, undefined, 'raw');
  /** The loop over a bare keep-alive https.Agent. */
  const bareCeiling = async (name: string): ReturnType<typeof rawCeiling> =>
    rawCeiling(rest, cluster.kubeConfig(), settlePhase, await keepAlivePoster(cluster.kubeConfig()), name);
  log(
    `ceiling through the runtime client ${ceiling.podsPerSecond} pods/s; cpu ms/pod ${JSON.stringify(ceiling.cpuMsPerPod)}`,
  );
  const keepAliveCeiling = await bareCeiling('raw-keepalive');
  log(
    `ceiling over a bare keep-alive agent ${keepAliveCeiling.podsPerSecond} pods/s; cpu ms/pod ${JSON.stringify(keepAliveCeiling.cpuMsPerPod)}`,
  );
  loadAverages.afterCeilings = load();

  const agent = agentCommand(root);
  const image = plainNode ? { nodeFlags: [], env: {} } : agentImageRuntime(root);
  const healthPort = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...(snapshotDir ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${snapshotDir}`] : []),
      ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []),
      ...image.nodeFlags,
      ...agent.args,
      'manager',
      `--kubeconfig=${cluster.kubeconfigPath}`,
      '--cluster-name=bench',
      '--no-leader-elect',
      // Every controller runs (they share the pod cache, as in production); the webhook does not:
      // the apiserver here cannot reach it, and it is measured on its own.
      '--components=*,-webhook',
      '--health-host=127.0.0.1',
      `--health-port=${healthPort}`,
      '--log-level=warn',
      ...(agentHttp1 ? ['--no-kube-api-http2'] : []),
    ],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, ...image.env } },
  );
  const agentExited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The CPU profile is written on a clean exit: wait for it.
  stopAgent = () => {
    child.kill('SIGTERM');
    return Promise.race([agentExited, sleep(30_000)]);
  };
  cpu.add('agent', () => child.pid);
  // The CloneSet controller runs once the caches synced.
  await until('agent caches synced', async () => {
    try {
      const res = await fetch(`http://127.0.0.1:${healthPort}/readyz?verbose`);
      return (await res.text()).includes('[+]informers-synced ok');
    } catch {
      return false;
    }
  });

  const ns = await namespace(rest, 'bench');
  await settlePhase();
  const counter = await podCounter(cluster.kubeConfig(), ns);
  log(`scale 0 → ${PODS}`);
  const mark = cpu.sample();
  const requestsBefore = await apiserverRequests(rest);
  if (keepEnv) {
    log(`scale-up starts; kube-apiserver has run ${processAgeSeconds(pidOf('kube-apiserver'))} s; logs in ${env.dir}`);
  }
  const t0 = performance.now();
  await rest.request({ method: 'POST', path: resourcePath(Resources.cloneSets, ns), body: cloneSet('web', PODS) });
  const milestones: Record<string, number> = {};
  // Every 250 ms: pods seen and each process's CPU since the last sample, to see who held the
  // two cores while a batch was slow.
  const timeline: { s: number; pods: number; cpuMs: Record<string, number>; benchGcMs: number }[] = [];
  let lastSample = { at: t0, cpu: cpu.sample(), gcMs: benchGcMs };
  await until(
    'all pods created',
    () => {
      const n = counter.count();
      const now = performance.now();
      for (const m of MILESTONES)
        if (n >= m && milestones[m] === undefined) milestones[m] = round((now - t0) / 1000, 2);
      if (now - lastSample.at >= 250 || n >= PODS) {
        const sample = cpu.sample();
        const cpuMs = Object.fromEntries(
          Object.entries(sample).map(([k, v]) => [k, Math.round((v - (lastSample.cpu[k] ?? 0)) * 1000)]),
        );
        timeline.push({
          s: round((now - t0) / 1000, 2),
          pods: n,
          cpuMs,
          benchGcMs: round(benchGcMs - lastSample.gcMs),
        });
        lastSample = { at: now, cpu: sample, gcMs: benchGcMs };
      }
      return n >= PODS;
    },
    600_000,
    20,
  );
  const createdSeconds = (performance.now() - t0) / 1000;
  const counterRewatches = counter.rewatches();
  const scaleUpCpu = cpu.msPerPod(mark, PODS);
  const requestsAfter = await apiserverRequests(rest);
  const scaleUpRequests = requestsPerPod(requestsBefore, requestsAfter, PODS);
  const scaleUpCreateMs = createLatencyMs(requestsBefore, requestsAfter);
  log(
    `scale-up: requests per pod ${JSON.stringify(scaleUpRequests)}, mean POST pods latency ${scaleUpCreateMs} ms; ${JSON.stringify(apiserverInternals(requestsBefore, requestsAfter, PODS))}`,
  );
  await until('all pods ready', async () => (await status(rest, ns, 'web')).readyReplicas === PODS, 600_000, 250);
  const readySeconds = (performance.now() - t0) / 1000;
  log(
    `created in ${round(createdSeconds, 2)} s, ready in ${round(readySeconds, 2)} s; seen ${JSON.stringify(milestones)}; cpu ms/pod ${JSON.stringify(scaleUpCpu)}`,
  );
  loadAverages.afterScaleUp = load();
  // The machine is shared and its load moves: the ceiling once more, right after the scale-up,
  // with the agent running and watching these pods too.
  const ceilingAfter = await bareCeiling('raw-after');
  log(
    `ceiling over a bare keep-alive agent, after the scale-up: ${ceilingAfter.podsPerSecond} pods/s; cpu ms/pod ${JSON.stringify(ceilingAfter.cpuMsPerPod)}`,
  );
  const rates = [ceiling.podsPerSecond, keepAliveCeiling.podsPerSecond, ceilingAfter.podsPerSecond];
  const fastest = Math.max(...rates);
  const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
  const scaleUp = {
    pods: PODS,
    createdSeconds: round(createdSeconds, 2),
    createdPodsPerSecond: round(PODS / createdSeconds),
    // Against the fastest plain client loop before or after: the apiserver's real ceiling.
    percentOfCeiling: round((PODS / createdSeconds / fastest) * 100),
    percentOfRuntimeClientCeiling: round((PODS / createdSeconds / ceiling.podsPerSecond) * 100),
    // The load of the shared machine moves the three loops' rates by up to 2x within one run:
    // their mean is the ceiling at the time of the scale-up, the fastest one the strict bound.
    percentOfMeanCeiling: round((PODS / createdSeconds / mean) * 100),
    allReadySeconds: round(readySeconds, 2),
    counterRewatches,
    secondsUntilPodsSeen: milestones,
    /** Milliseconds each slow-start batch took, from the previous batch's last pod seen to its own. */
    batchMs: Object.fromEntries(
      MILESTONES.map((m, i) => [
        String(m - (MILESTONES[i - 1] ?? 0)),
        Math.round(((milestones[m] ?? 0) - (i > 0 ? (milestones[MILESTONES[i - 1]!] ?? 0) : 0)) * 1000),
      ]),
    ),
    cpuMsPerPod: scaleUpCpu,
    apiserver: {
      ...apiserverView(scaleUpRequests, scaleUpCreateMs, createdSeconds),
      ...apiserverInternals(requestsBefore, requestsAfter, PODS),
    },
    timeline,
  };
  const ceilings = {
    pods: PODS,
    concurrency: CONCURRENCY,
    body: "the controller's pod (newPod), owned by a ConfigMap, scheduled on kwok nodes",
    runtimeClient: ceiling,
    bareKeepAlive: keepAliveCeiling,
    bareKeepAliveAfterScaleUp: ceilingAfter,
  };
  /** What both result files report. */
  const scaleSummary = {
    cluster: { kwokNodes: NODES },
    cpus: splitCores
      ? { controlPlane: cpuSplit.controlPlane, kwokAgentAndBench: cpuSplit.workers }
      : 'shared by every process',
    agent: `${agent.runtime}; every controller, no webhook; ${agentHttp1 ? 'HTTP/1.1' : 'HTTP/2'} to the apiserver; ${plainNode ? 'plain node' : `as the image starts it: ${[...image.nodeFlags, ...Object.entries(image.env).map(([k, v]) => `${k}=${v}`)].join(' ')}`}`,
    // The runtime client's loop goes over HTTP/2 (KubeRest's default) unless --runtime-http1, the bare loops over HTTP/1.1.
    ceilingProtocols: {
      runtimeClient: runtimeHttp1 ? 'HTTP/1.1' : 'HTTP/2',
      bareKeepAlive: 'HTTP/1.1',
      bareKeepAliveAfterScaleUp: 'HTTP/1.1',
    },
    ceilingsPodsPerSecond: {
      runtimeClient: ceiling.podsPerSecond,
      bareKeepAlive: keepAliveCeiling.podsPerSecond,
      bareKeepAliveAfterScaleUp: ceilingAfter.podsPerSecond,
    },
    ceilings,
    scaleUp,
  };
  if (scaleOnly) {
    const scaleResult = {
      measuredAt: new Date().toISOString(),
      machine: { cpus: os.cpus().length, loadAverage1m: loadAverages },
      ...scaleSummary,
    };
    console.log(JSON.stringify(scaleResult, null, 2));
    mkdirSync(path.join(here, '../results'), { recursive: true });
    writeFileSync(path.join(here, '../results/cloneset-scale.json'), JSON.stringify(scaleResult, null, 2) + '\n');
    await counter.stop();
  }
  if (!scaleOnly) await phasesAfterScaleUp();
  async function phasesAfterScaleUp(): Promise<void> {
    log(`in-place update of ${PODS} pods`);
    const t1 = performance.now();
    await patchCloneSet(rest, ns, 'web', { image: 'registry.local/app:v2' });
    await until(
      'all pods updated and ready',
      async () => {
        const s = await status(rest, ns, 'web');
        return s.observedGeneration === 2 && s.updatedReadyReplicas === PODS && s.updatedReplicas === PODS;
      },
      600_000,
      250,
    );
    const updateSeconds = (performance.now() - t1) / 1000;
    log(`updated in ${round(updateSeconds, 2)} s`);
    loadAverages.afterInPlaceUpdate = load();

    log(`memory with ${CACHE_PODS} pods cached`);
    const rssWith1000 = readRssBytes(child.pid!);
    await rest.request({
      method: 'POST',
      path: resourcePath(Resources.cloneSets, ns),
      body: cloneSet('cache', CACHE_PODS - PODS, {
        template: {
          metadata: { labels: { app: 'cache' } },
          spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }], nodeSelector: { bench: 'nowhere' } },
        },
      }),
    });
    await until('all cache pods created', () => counter.count() >= CACHE_PODS, 900_000, 250);
    // The status lags the cache on a loaded machine; memory is measured either way, and the
    // result says whether the controller had caught up with all 5,000 pods.
    const caughtUpSince = performance.now();
    let lastReport = 0;
    const statusCaughtUp = await until(
      'status caught up',
      async () => {
        const replicas = (await status(rest, ns, 'cache')).replicas;
        if (performance.now() - lastReport > 30_000) {
          lastReport = performance.now();
          log(`cache status.replicas ${replicas}; ${await controllerMetrics(healthPort)}`);
        }
        return replicas === CACHE_PODS - PODS;
      },
      600_000,
      500,
    ).then(
      () => true,
      () => false,
    );
    const statusCaughtUpSeconds = round((performance.now() - caughtUpSince) / 1000, 1);
    log(`status ${statusCaughtUp ? 'caught up' : 'NOT caught up'} after ${statusCaughtUpSeconds} s`);
    let rss = 0;
    for (let i = 0; i < 10; i++) {
      rss = Math.max(rss, readRssBytes(child.pid!));
      await sleep(1000);
    }
    const heapUsed = await metric(healthPort, 'nodejs_heap_size_used_bytes');
    loadAverages.afterMemory = load();
    log(`rss ${mib(rss)} MiB, heap used ${mib(heapUsed)} MiB`);
    const snapshot = snapshotDir ? await heapSnapshot(child.pid!, snapshotDir) : undefined;
    if (snapshot) log(`heap snapshot ${snapshot}`);
    await counter.stop();

    const result = {
      measuredAt: new Date().toISOString(),
      machine: { cpus: os.cpus().length, memoryGiB: round(os.totalmem() / 1024 ** 3), loadAverage1m: loadAverages },
      ...scaleSummary,
      inPlaceUpdate: {
        pods: PODS,
        maxUnavailable: '100%',
        allUpdatedAndReadySeconds: round(updateSeconds, 2),
        podsPerSecond: round(PODS / updateSeconds),
      },
      agentMemory: {
        cachedPods: CACHE_PODS,
        rssMiB: mib(rss),
        heapUsedMiB: mib(heapUsed),
        rssWith1000PodsMiB: mib(rssWith1000),
        statusCaughtUp,
        statusCaughtUpSeconds,
        targetMiB: 250,
      },
    };
    console.log(JSON.stringify(result, null, 2));
    mkdirSync(path.join(here, '../results'), { recursive: true });
    writeFileSync(path.join(here, '../results/cloneset.json'), JSON.stringify(result, null, 2) + '\n');
  }
} finally {
  await stopAgent();
  await env.stop();
}
