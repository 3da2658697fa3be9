// Admission webhook benchmark: the latency the webhook adds to pod creation at 100 creates/s,
// through the real kube-apiserver calling the real `agent manager` webhook over TLS (SidecarSet
// injection), at a non-loopback URL so the apiserver speaks HTTP/1.1 to it as it does to a
// webhook behind a Service.
//   1. baseline: RATE creates/s of pods that opt out of the webhook (`flotilla.io/webhook:
//      disabled`, the objectSelector skips the call): the apiserver's own latency;
//   2. webhook: RATE creates/s of pods matched by two SidecarSets (three containers, an init
//      container, volumes, transferred env, patched metadata), and beside them RATE/10 creates/s
//      of opted-out pods as a control that sees the same apiserver at the same moment.
// Added latency = create latency with the webhook minus without (p50 and p99 of each), against
// the baseline phase and against the concurrent control. Also reported: the apiserver's own
// measure of the call (apiserver_admission_webhook_admission_duration_seconds, coarse buckets),
// the agent's handling time (flotilla_webhook_admission_duration_seconds), TLS connections the
// apiserver opened, CPU per create of the apiserver and of the agent (load-independent), and the
// agent's event-loop delay. Pods carry a scheduling gate so neither scheduler nor kwok work
// competes for the CPU. The creates go over one HTTP/2 connection, as client-go sends them
// (`--client=h1` uses uncapped HTTP/1.1 keep-alive connections instead), from a thread of the
// bench's own so nothing else on its event loop delays a send (`--load-thread=false`). Prints the
// numbers and writes test/bench/results/webhook.json with the machine's load average (the machine is shared).
// The apiserver traces every request to an OTLP receiver in the bench (tracing.ts), which gives
// the exact duration of every webhook call as the apiserver saw it (`--trace=false` turns it off).
// The agent runs every component beside the webhook, as deployed (`--components=webhook` for
// the webhook alone), and serves admissions from its admission thread (`--webhook-thread=false`:
// from the main thread, beside the controllers).
// Run: npm run bench:webhook [-- --rate=100 --seconds=30 --client=h2|h1 --load-thread=true|false --cpu-prof=<dir>
//      --apiserver-profile=<file> --apiserver-trace=<file> --components=*|webhook --webhook-thread=true|false --trace=true|false
//      --trace-rate=<per million> --apiserver-cpus=<list> | --split-cores
//      --apiserver-env=GOMAXPROCS=2,GODEBUG=gctrace=1 --nice-others=<n> --packets --controllers-nice=<n>]
import { benchAgentArgs, hostAddress } from './agent-args.js';
import { spawn } from 'node:child_process';
import https from 'node:https';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { format } from 'prettier';
import { createKubeRest } from '../../../agent/src/runtime/rest.js';
import { freePort, startEnvironment } from '../../env/src/index.js';
import type { ClusterInfo } from '../../integration/helpers/context.js';
import { installCrds } from '../../integration/helpers/crds.js';
import { customResource, kube } from '../../integration/helpers/kube.js';
import { h2Target, http1Creator, http2Creator, openLoop, type CreatePod, type StreamResult } from './load.js';
import { startLoadThread } from './load-thread.js';
import { benchPod, openLoopStreams, type PodStream } from './pods.js';
import { agentMetrics, apiserverMetrics, grownBy, quantiles, round, summary, type MetricsText } from './metrics.js';
import { machineUse, sampleMachine, type MachineSample } from './machine.js';
import { startTraceReceiver, type TraceReceiver } from './tracing.js';
import { capturePackets, splitCalls, tcpdumpAvailable } from './packets.js';
import { gcCycles, gcOverlap, processStartMs } from './gc-trace.js';
import { CONTROL_PLANE, pinToCpus, reniceProcess, splitCpus } from '../cpus.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const option = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const RATE = Number(option('rate') ?? 100);
const SECONDS = Number(option('seconds') ?? 30);
const CLIENT = option('client') ?? 'h2';
/**
 * `--load-thread=false`: the HTTP/2 load generator on the bench's main thread, beside the trace
 * receiver, instead of on a thread of its own. `--client=h1` always runs there.
 */
const LOAD_THREAD = CLIENT !== 'h1' && option('load-thread') !== 'false';
/** `--components=webhook,sidecarset`: what else the agent runs beside the webhook (as in production: `*`). */
const COMPONENTS = option('components') ?? '*';
/** `--webhook-thread=false`: admissions served from the agent's main thread, beside the controllers. */
const WEBHOOK_THREAD = option('webhook-thread') ?? 'true';
/**
 * `--controllers-nice=<n>`: the nice value the agent's controller thread lowers itself to beside
 * the admission thread (`--webhook-controllers-nice`); default the Helm chart's, 0 turns it off.
 */
const CONTROLLERS_NICE = Number(option('controllers-nice') ?? 10);
/** `--trace=false`: no apiserver tracing (no exact per-call durations). */
const TRACE = option('trace') !== 'false';
/**
 * `--trace-rate=<per million>`: the share of requests the apiserver traces (default every one).
 * Tracing costs the apiserver CPU per request and the bench CPU per span received on the agent's
 * side of the machine; a random sample keeps (1) exact per call with less of that load.
 */
const TRACE_RATE = Number(option('trace-rate') ?? 1_000_000);
/** The apiserver's batch span processor exports every 5 s: wait that long for a phase's last spans. */
const TRACE_FLUSH_MS = 6000;
/** `--cpu-prof=<dir>`: the agent writes a V8 CPU profile there when it stops. */
const cpuProfDir = option('cpu-prof');
/** `--apiserver-profile=<file>`: a Go CPU profile of the apiserver during the webhook phase (go tool pprof). */
const apiserverProfile = option('apiserver-profile');
/**
 * `--apiserver-trace=<file>`: a Go execution trace of the apiserver during the webhook phase
 * (`go tool trace -pprof=sched <file>`: how long each goroutine waited to run once it could, e.g.
 * the one reading the webhook's answer; `sched-windows.ts`: the same per 100 ms, beside the GC's
 * mark phases).
 */
const apiserverTrace = option('apiserver-trace');
/**
 * `--apiserver-cpus=<list>`: pins the apiserver to these CPUs (taskset list, e.g. `0`) and every
 * other process of the bench (etcd, scheduler, controller manager, kwok, the agent, the bench) to
 * the rest, to see the webhook's latency without the apiserver and the agent sharing a core.
 */
const apiserverCpus = option('apiserver-cpus');
/**
 * `--split-cores`: the control plane (apiserver, etcd, scheduler, controller manager) on the first
 * half of the CPUs and the worker side (kwok, the agent, the bench) on the other half, as the
 * CloneSet bench does: a control-plane node and a worker node running the webhook.
 */
const splitCores = process.argv.includes('--split-cores');
/**
 * `--apiserver-env=GOMAXPROCS=2,GOGC=200`: Go runtime settings of the apiserver alone (the rest
 * of the bench keeps its own), to tell how much of the call's tail is the apiserver's scheduling
 * and garbage collection.
 */
const apiserverEnv = Object.fromEntries(
  (option('apiserver-env') ?? '')
    .split(',')
    .filter(Boolean)
    .map((kv) => {
      const at = kv.indexOf('=');
      if (at <= 0) throw new Error(`--apiserver-env: "${kv}" is not NAME=value`);
      return [kv.slice(0, at), kv.slice(at + 1)];
    }),
);
if (splitCores && apiserverCpus) throw new Error('--split-cores and --apiserver-cpus are two layouts: pick one');
/**
 * `--nice-others=<n>`: every process but the apiserver and the agent (etcd, scheduler, controller
 * manager, kwok, the bench) at nice n, to see the webhook's tail without their CPU in its way.
 */
const niceOthers = option('nice-others') === undefined ? undefined : Number(option('nice-others'));
/**
 * `--packets`: captures the webhook's packets (tcpdump) in the webhook phase and splits each traced
 * HTTP request into the apiserver sending, the agent (kernel to kernel) and the apiserver receiving.
 */
const PACKETS = process.argv.includes('--packets');
if (PACKETS && !tcpdumpAvailable()) throw new Error('--packets needs tcpdump (apt-get install tcpdump)');
if (PACKETS && !TRACE) throw new Error('--packets splits the traced calls: it needs --trace');
const CONTROL_RATE = Math.max(1, RATE / 10);
/** Sends this close before a webhook call count as its company (slowCallsAndBursts). */
const BURST_WINDOW_MS = 5;
const WARMUP_SECONDS = 3;
const SETTLE_MS = 2000;
const AGENT_NS = 'flotilla-system';
const MUTATE_POD = '/mutate-pod';
const WEBHOOK_NAME = 'mpod.kb.io';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const log = (msg: string): void => void process.stderr.write(`[bench] ${msg}\n`);
const load = (): number => round(os.loadavg()[0]!);

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** What the processes did during one phase, from /metrics and process.cpuUsage before and after. */
interface Snapshot {
  agent: MetricsText;
  apiserver: MetricsText;
  benchCpuMicros: number;
  machine: MachineSample;
}

async function snapshot(healthPort: number, kc: KubeConfig): Promise<Snapshot> {
  const [agent, apiserver] = await Promise.all([agentMetrics(healthPort), apiserverMetrics(kc)]);
  const cpu = process.cpuUsage();
  return { agent, apiserver, benchCpuMicros: cpu.user + cpu.system, machine: sampleMachine() };
}

/** A CPU profile (or `kind` trace: an execution trace) of the apiserver over `seconds`, written to `file` (needs --profiling=true). */
async function profileApiserver(
  kc: KubeConfig,
  seconds: number,
  file: string,
  kind: 'profile' | 'trace' = 'profile',
): Promise<void> {
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  const url = new URL(`${kc.getCurrentCluster()!.server}/debug/pprof/${kind}?seconds=${seconds}`);
  const body = await new Promise<Buffer>((resolve, reject) => {
    https
      .get(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
      })
      .on('error', reject);
  });
  writeFileSync(file, body);
}

const SIDECARSETS = [
  {
    metadata: { name: 'bench-mesh' },
    spec: {
      selector: { matchLabels: { app: 'bench' } },
      containers: [
        {
          name: 'proxy',
          image: 'registry.local/proxy:v1',
          volumeMounts: [{ name: 'proxy-config', mountPath: '/etc/proxy' }],
          transferEnv: [{ sourceContainerName: 'main', envName: 'LOG_LEVEL' }],
        },
        { name: 'log-agent', image: 'registry.local/log:v1', podInjectPolicy: 'AfterAppContainer' },
      ],
      initContainers: [{ name: 'init-net', image: 'registry.local/init:v1' }],
      volumes: [{ name: 'proxy-config', emptyDir: {} }],
    },
  },
  {
    metadata: { name: 'bench-metrics' },
    spec: {
      selector: { matchLabels: { app: 'bench' } },
      containers: [{ name: 'metrics', image: 'registry.local/metrics:v1', shareVolumePolicy: { type: 'enabled' } }],
    },
  },
];

log('starting a cluster');
const traces: TraceReceiver | undefined = TRACE ? await startTraceReceiver(WEBHOOK_NAME, TRACE_RATE) : undefined;
const env = await startEnvironment({
  clusters: [
    {
      name: 'whbench',
      nodes: 1,
      apiserverArgs: [
        ...(apiserverProfile || apiserverTrace ? ['--profiling=true'] : []),
        ...(traces ? [`--tracing-config-file=${traces.configFile}`] : []),
      ],
      apiserverEnv,
    },
  ],
});
const cluster = env.clusters[0]!;
const kc = cluster.kubeConfig();
/** Which CPUs each process gets: `--apiserver-cpus` or `--split-cores`; unpinned without either. */
const layout = ((): { cpusOf: (name: string) => string; bench: string; report: Record<string, string> } | undefined => {
  if (apiserverCpus) {
    const own = new Set(apiserverCpus.split(',').map(Number));
    const rest = os
      .cpus()
      .map((_, i) => i)
      .filter((i) => !own.has(i));
    if (rest.length === 0) throw new Error('--apiserver-cpus leaves no CPU for the other processes');
    const others = rest.join(',');
    return {
      cpusOf: (name) => (name.endsWith('kube-apiserver') ? apiserverCpus : others),
      bench: others,
      report: { apiserver: apiserverCpus, everythingElse: others },
    };
  }
  if (splitCores) {
    const split = splitCpus();
    return {
      cpusOf: (name) => (CONTROL_PLANE.some((c) => name.endsWith(c)) ? split.controlPlane : split.workers),
      bench: split.workers,
      report: { controlPlane: split.controlPlane, kwokAgentAndBench: split.workers },
    };
  }
  return undefined;
})();
if (layout) {
  for (const p of [...cluster.processes, env.etcd.process]) pinToCpus(p.pid, layout.cpusOf(p.name), p.name);
  pinToCpus(process.pid, layout.bench, 'bench');
  log(`CPUs: ${JSON.stringify(layout.report)}`);
}
if (niceOthers !== undefined) {
  for (const p of [...cluster.processes, env.etcd.process])
    if (!p.name.endsWith('kube-apiserver')) reniceProcess(p.pid, niceOthers, p.name);
}
const k = kube({ kubeconfig: readFileSync(cluster.kubeconfigPath, 'utf8') } as ClusterInfo);
let stopAgent = (): void => {};
/** Groups of the machine's CPU use by pid (the rest go by command name). */
const namedPids: Record<number, string> = { [process.pid]: 'bench (load generator, trace receiver)' };
let closeClient = async (): Promise<void> => {};
let clientConnections = (): number | undefined => undefined;
try {
  /** Runs the streams open-loop side by side in namespace `bench` for `seconds`. */
  let runLoop: (seconds: number, streams: PodStream[]) => Promise<StreamResult[]>;
  const inProcess = (create: CreatePod) => (seconds: number, streams: PodStream[]) =>
    openLoop(create, 'bench', seconds, openLoopStreams(streams));
  if (CLIENT === 'h1') {
    // Open loop for real: no connection cap, so a slow answer never holds the next create back.
    runLoop = inProcess(http1Creator(createKubeRest(kc, { maxSockets: 10_000, maxFreeSockets: 1000, http2: false })));
  } else if (LOAD_THREAD) {
    const thread = await startLoadThread(await h2Target(kc));
    runLoop = (seconds, streams) => thread.openLoop('bench', seconds, streams);
    closeClient = () => thread.close();
    clientConnections = () => thread.connections();
  } else {
    const h2 = await http2Creator(await h2Target(kc));
    runLoop = inProcess(h2.create);
    closeClient = () => Promise.resolve(h2.close());
    clientConnections = h2.connections;
  }
  await installCrds(k);
  await k.core.createNamespace({ body: { metadata: { name: AGENT_NS } } });
  await k.core.createNamespace({ body: { metadata: { name: 'bench' } } });
  const healthPort = await freePort();
  const webhookPort = await freePort();
  // The apiserver speaks HTTP/1.1 to webhooks behind a Service or a non-local URL and HTTP/2 only
  // to localhost (k8s.io/apiserver util/webhook); a non-loopback address measures the production path.
  const webhookHost = hostAddress();
  const child = spawn(
    process.execPath,
    benchAgentArgs({
      kubeconfigPath: cluster.kubeconfigPath,
      namespace: AGENT_NS,
      healthPort,
      webhookHost,
      webhookPort,
      components: COMPONENTS,
      nodeFlags: cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [],
      extra: [
        `--webhook-thread=${WEBHOOK_THREAD}`,
        `--webhook-controllers-nice=${WEBHOOK_THREAD === 'false' ? 0 : CONTROLLERS_NICE}`,
      ],
    }),
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  stopAgent = () => child.kill('SIGTERM');
  if (child.pid !== undefined) namedPids[child.pid] = 'agent';
  // After the agent started: it would inherit the bench's nice value.
  if (niceOthers !== undefined) reniceProcess(process.pid, niceOthers, 'bench');
  await until('agent ready', async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok);
  for (const ss of SIDECARSETS) {
    await k.custom.createClusterCustomObject({
      ...customResource('SidecarSet'),
      body: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', ...ss },
    });
  }
  await until('both SidecarSets inject', async () => {
    const p = await k.core.createNamespacedPod({
      namespace: 'bench',
      body: benchPod(0, 'probe', false),
      dryRun: 'All',
    });
    return p.spec?.containers.length === 4 && p.spec.initContainers?.length === 1;
  });

  log(`warm-up: ${WARMUP_SECONDS} s at ${RATE}/s`);
  await runLoop(WARMUP_SECONDS, [{ rate: RATE, phase: 'warm', optOut: false }]);
  const loadAverages: Record<string, number> = { start: load() };

  log(`baseline: ${SECONDS} s at ${RATE}/s, webhook skipped`);
  const s0 = await snapshot(healthPort, kc);
  // Rendering its /metrics costs the apiserver a burst of CPU; a phase starts once that is over,
  // not with a backlog (the webhook phase, over HTTP/1.1, would start with a handshake burst).
  await sleep(SETTLE_MS);
  const [baseline] = await runLoop(SECONDS, [{ rate: RATE, phase: 'base', optOut: true }]);
  const s1 = await snapshot(healthPort, kc);
  await sleep(SETTLE_MS);
  loadAverages.afterBaseline = load();

  log(`webhook: ${SECONDS} s at ${RATE}/s injected, with ${CONTROL_RATE}/s opted-out controls`);
  const profileSeconds = Math.max(1, Math.min(SECONDS - 2, 20));
  const profiling = Promise.all([
    apiserverProfile ? profileApiserver(kc, profileSeconds, apiserverProfile) : undefined,
    apiserverTrace ? profileApiserver(kc, profileSeconds, apiserverTrace, 'trace') : undefined,
  ]);
  const capture = PACKETS ? capturePackets(webhookPort) : undefined;
  const webhookPhase = { startMs: Date.now(), endMs: 0 };
  const [injected, control] = await runLoop(SECONDS, [
    { rate: RATE, phase: 'inj', optOut: false },
    { rate: CONTROL_RATE, phase: 'ctl', optOut: true },
  ]);
  webhookPhase.endMs = Date.now();
  const packetExchanges = await capture?.stop();
  const s2 = await snapshot(healthPort, kc);
  await profiling;
  loadAverages.afterWebhook = load();
  if (traces) await sleep(TRACE_FLUSH_MS);
  const tracedSpans = traces
    ?.calls()
    .filter((c) => c.startMs >= webhookPhase.startMs && c.startMs <= webhookPhase.endMs);
  const tracedCalls = tracedSpans?.map((c) => c.durationMs);
  const check = await k.core.readNamespacedPod({ namespace: 'bench', name: 'inj-0' });

  const result = report(
    { baseline: baseline!, injected: injected!, control: control! },
    [s0, s1, s2],
    loadAverages,
    tracedCalls,
  );
  result.slowBySecond = {
    what: 'per second of the webhook phase: traced webhook calls over 10 ms, and creates (with the webhook / opted-out controls) over 50 ms; slow seconds together are machine-wide stalls, spread ones are not',
    tracedCallsOver10ms: tracedSpans
      ? perSecond(
          tracedSpans.map((c) => (c.startMs - webhookPhase.startMs) / 1000),
          tracedSpans.map((c) => c.durationMs),
          10,
        )
      : 'off (--trace=false)',
    injectedCreatesOver50ms: perSecond(injected!.sentAt, injected!.latencies, 50),
    controlCreatesOver50ms: perSecond(control!.sentAt, control!.latencies, 50),
  };
  if (tracedSpans) {
    const split = tracedSpans.filter((c) => c.httpMs !== undefined);
    result.apiserverWebhookCallParts = {
      what: 'the traced call in two parts, from the apiserver\'s HTTP client span inside it ("HTTP POST"): the HTTP request (sending the review over the kept connection, the agent, reading the answer) and the rest, the apiserver\'s own work (encoding the review, decoding the answer, applying the patch) and its waits for CPU',
      callsWithHttpSpan: split.length,
      httpRequest: summary(split.map((c) => c.httpMs!)),
      apiserverOwn: summary(split.map((c) => c.durationMs - c.httpMs!)),
      overTenMsWhereMost: {
        what: 'calls over 10 ms, by the part that took most of them',
        httpRequest: split.filter((c) => c.durationMs > 10 && c.httpMs! >= c.durationMs / 2).length,
        apiserverOwn: split.filter((c) => c.durationMs > 10 && c.httpMs! < c.durationMs / 2).length,
      },
    };
    if (packetExchanges) {
      const parts = splitCalls(
        split.map((c) => ({ startMs: c.httpStartMs!, endMs: c.httpStartMs! + c.httpMs! })),
        packetExchanges,
      );
      const slow = parts.filter((p) => p.sendMs + p.agentMs + p.receiveMs > 10);
      const most = (pick: (p: (typeof parts)[number]) => number): number =>
        slow.filter((p) => pick(p) >= Math.max(p.sendMs, p.agentMs, p.receiveMs)).length;
      result.apiserverWebhookHttpRequestParts = {
        what: "each traced HTTP request split at the kernel's packet timestamps (tcpdump): the apiserver sending the review (span start to the request's first packet), the agent (request's last packet to the answer's first: waking up, TLS, HTTP, the handler, and any wait for a CPU, which the agent's own handling metric cannot see) and the apiserver receiving (answer's first packet to span end)",
        exchangesCaptured: packetExchanges.length,
        requestsSplit: parts.length,
        apiserverSend: summary(parts.map((p) => p.sendMs)),
        agent: summary(parts.map((p) => p.agentMs)),
        agentShareAtOrBelow10ms: round(parts.filter((p) => p.agentMs <= 10).length / Math.max(1, parts.length), 4),
        apiserverReceive: summary(parts.map((p) => p.receiveMs)),
        overTenMsWhereMost: {
          what: 'requests over 10 ms, by the part that took most of them',
          apiserverSend: most((p) => p.sendMs),
          agent: most((p) => p.agentMs),
          apiserverReceive: most((p) => p.receiveMs),
        },
      };
    }
    const sends = [injected!, control!].flatMap((r) => r.sentAt.map((s) => r.startEpochMs + s * 1000));
    result.slowCallsAndBursts = burstsAndSlowCalls(tracedSpans, sends, BURST_WINDOW_MS, 10);
  }
  // GODEBUG=gctrace=1 in --apiserver-env: line the slow calls up with the apiserver's GC cycles.
  const apiserverProcess = cluster.processes.find((p) => p.name.endsWith('kube-apiserver'));
  if (tracedSpans && apiserverProcess && /(^|,)gctrace=1/.test(apiserverEnv.GODEBUG ?? '')) {
    const cycles = gcCycles(
      readFileSync(apiserverProcess.logFile, 'utf8'),
      processStartMs(apiserverProcess.pid),
    ).filter((c) => c.startMs + c.durationMs >= webhookPhase.startMs && c.startMs <= webhookPhase.endMs);
    result.apiserverGcAndSlowCalls = {
      what: "the apiserver's GC cycles in the webhook phase (gctrace, placed on the wall clock to about 20 ms) and the share of traced calls that overlapped one: all calls against those over 10 ms",
      ...gcOverlap(tracedSpans, cycles, 10),
    };
  }
  // A create sent late (the load generator's event loop busy: on the main thread, decoding a batch
  // of spans; in its thread, the CPU taken by other processes) arrives in a burst with others: its
  // latency is measured from when it left, but the burst loads the apiserver.
  result.loadGeneratorLateness = {
    what: "how late the bench sent creates against the open loop's schedule, in ms (all streams of the phase)",
    baseline: summary(baseline!.lateMs),
    webhook: summary([...injected!.lateMs, ...control!.lateMs]),
  };
  result.injected = {
    containers: check.spec?.containers.map((c) => c.name),
    initContainers: check.spec?.initContainers?.map((c) => c.name),
  };
  console.log(JSON.stringify(result, null, 2));
  printSummary(result);
  mkdirSync(path.join(here, '../results'), { recursive: true });
  // Formatted as the repository's lint expects it.
  const json = await format(JSON.stringify(result), { parser: 'json' });
  writeFileSync(path.join(here, '../results/webhook.json'), json);
} finally {
  await closeClient();
  stopAgent();
  await traces?.close();
  // The profile is written on exit; give the agent its shutdown before the cluster goes.
  if (cpuProfDir) await sleep(5000);
  await env.stop();
}

/** The headline numbers, one line each, after the full document. */
function printSummary(r: Record<string, unknown>): void {
  const get = (p: string): unknown => p.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)?.[k], r);
  const pair = (p: string, unit = 'ms'): string =>
    `p50 ${String(get(`${p}p50`))} ${unit} / p99 ${String(get(`${p}p99`))} ${unit}`;
  const lines = [
    `load average (1 min) ${JSON.stringify(get('machine.loadAverage1m'))} on ${String(get('machine.cpus'))} cores`,
    `added latency vs concurrent control: ${pair('addedLatencyMs.vsConcurrentControl.')} (target p99 < 10 ms)`,
    `added latency vs baseline phase:     ${pair('addedLatencyMs.vsBaselinePhase.')}`,
    `create with webhook:    ${pair('endToEndCreateMs.withWebhook.')}`,
    `create without webhook: ${pair('endToEndCreateMs.concurrentControlNoWebhook.')} (control), ${pair('endToEndCreateMs.baselineNoWebhook.')} (baseline)`,
    `apiserver's webhook call, traced: ${pair('apiserverWebhookCallTraced.')} (${String(get('apiserverWebhookCallTraced.count'))} spans, ${String(get('apiserverWebhookCallTraced.shareAtOrBelow10ms'))} within 10 ms)`,
    `apiserver's webhook call, metric: p50 ${String(get('apiserverWebhookCall.p50Ms'))} ms / p99 ${String(get('apiserverWebhookCall.p99Ms'))} ms (coarse buckets)`,
    `agent handling: p50 ${String(get('webhookHandling.p50Ms'))} ms / p99 ${String(get('webhookHandling.p99Ms'))} ms, ${String(get('webhookHandling.tlsConnectionsOpened'))} TLS connections opened`,
    `event-loop delay p99 (incl. 10 ms interval): main ${String(get('webhookHandling.eventLoopDelayP99Ms'))} ms, admission thread ${String(get('webhookHandling.admissionThreadEventLoopDelayP99Ms'))} ms`,
    `CPU per create: ${JSON.stringify(get('cpuMsPerCreate'))}`,
  ];
  for (const line of lines) log(line);
}

/** Reconciles per controller, the apiserver's writes and the machine's CPU between two snapshots. */
function activity(a: Snapshot, b: Snapshot): Record<string, unknown> {
  const mib = (m: MetricsText, name: string): number => round(m.value(name) / 2 ** 20, 1);
  return {
    machineCores: machineUse(a.machine, b.machine, namedPids),
    // The apiserver's Go heap grows with the pods it holds (none is deleted between phases): its
    // garbage collection, concurrent but taking CPU from everything, runs more often as it does.
    apiserverGo: {
      gcCycles: b.apiserver.value('go_gc_duration_seconds_count') - a.apiserver.value('go_gc_duration_seconds_count'),
      gcPauseMs: round(
        (b.apiserver.value('go_gc_duration_seconds_sum') - a.apiserver.value('go_gc_duration_seconds_sum')) * 1000,
      ),
      heapAllocMiB: {
        start: mib(a.apiserver, 'go_memstats_heap_alloc_bytes'),
        end: mib(b.apiserver, 'go_memstats_heap_alloc_bytes'),
      },
      allocatedMiB: round(
        (b.apiserver.value('go_memstats_alloc_bytes_total') - a.apiserver.value('go_memstats_alloc_bytes_total')) /
          2 ** 20,
        1,
      ),
    },
    reconciles: grownBy(a.agent, b.agent, 'flotilla_agent_reconcile_total', ['controller']),
    reconcileSeconds: grownBy(a.agent, b.agent, 'flotilla_agent_reconcile_duration_seconds_sum', ['controller']),
    apiserverWrites: grownBy(
      a.apiserver,
      b.apiserver,
      'apiserver_request_total',
      ['verb', 'resource', 'subresource'],
      (l) => ['POST', 'PUT', 'PATCH', 'DELETE'].includes(l.verb ?? ''),
    ),
  };
}

/** How many of the samples sent in each second of the phase took longer than `overMs`, as "second:count" for seconds with any. */
function perSecond(sentAtS: readonly number[], ms: readonly number[], overMs: number): string {
  const counts = new Map<number, number>();
  ms.forEach((d, i) => {
    if (d <= overMs) return;
    const second = Math.floor(sentAtS[i]!);
    counts.set(second, (counts.get(second) ?? 0) + 1);
  });
  return [...counts]
    .sort((a, b) => a[0] - b[0])
    .map(([second, n]) => `${second}:${n}`)
    .join(' ');
}

/**
 * Whether the slow calls follow bursts of creates: for each traced call, the creates sent in the
 * `windowMs` before it started (its own among them), as the share of calls that had company,
 * over all calls and over those slower than `overMs`. A load generator that falls behind sends
 * several creates at once, and the apiserver then works on them together.
 */
function burstsAndSlowCalls(
  calls: readonly { startMs: number; durationMs: number }[],
  sendsEpochMs: number[],
  windowMs: number,
  overMs: number,
): Record<string, unknown> {
  const sends = [...sendsEpochMs].sort((a, b) => a - b);
  /** Index of the first send at or after `t`. */
  const firstAtOrAfter = (t: number): number => {
    let lo = 0;
    let hi = sends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sends[mid]! < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const company = (c: { startMs: number }): number => firstAtOrAfter(c.startMs) - firstAtOrAfter(c.startMs - windowMs);
  const share = (of: readonly { startMs: number }[], atLeast: number): number =>
    of.length === 0 ? 0 : round(of.filter((c) => company(c) >= atLeast).length / of.length, 4);
  const slow = calls.filter((c) => c.durationMs > overMs);
  return {
    what: `creates sent in the ${windowMs} ms before each traced webhook call started: the share of calls with at least 2 / 3 of them, all calls against those over ${overMs} ms (several at once means the load generator sent a burst)`,
    calls: calls.length,
    slowCalls: slow.length,
    atLeast2: { all: share(calls, 2), slow: share(slow, 2) },
    atLeast3: { all: share(calls, 3), slow: share(slow, 3) },
  };
}

/** p50 latency of the creates sent in each fifth of the phase: growing means the phase outran the system. */
function windows(run: StreamResult): Record<string, number> {
  const out: Record<string, number> = {};
  const width = SECONDS / 5;
  for (let w = 0; w < 5; w++) {
    const inWindow = run.latencies.filter((_, i) => run.sentAt[i]! >= w * width && run.sentAt[i]! < (w + 1) * width);
    out[`${round(w * width, 1)}s`] = summary(inWindow).p50;
  }
  return out;
}

/** The results document: added latency first, then the pieces it is made of. */
function report(
  runs: { baseline: StreamResult; injected: StreamResult; control: StreamResult },
  [s0, s1, s2]: Snapshot[],
  loadAverages: Record<string, number>,
  tracedCalls: number[] | undefined,
): Record<string, unknown> {
  const base = summary(runs.baseline.latencies);
  const withWebhook = summary(runs.injected.latencies);
  const control = summary(runs.control.latencies);
  const histogram = (s: Snapshot): ReturnType<MetricsText['histogram']> =>
    s.agent.histogram('flotilla_webhook_admission_duration_seconds', `path="${MUTATE_POD}"`);
  const apiHistogram = (s: Snapshot): ReturnType<MetricsText['histogram']> =>
    s.apiserver.histogram('apiserver_admission_webhook_admission_duration_seconds', `name="${WEBHOOK_NAME}"`);
  const handling = quantiles(histogram(s1!), histogram(s2!));
  // The apiserver's own time for the creates (from reading the request to writing the answer):
  // what the load generator adds on top is queueing on its side of the connection.
  const podCreates = (s: Snapshot): ReturnType<MetricsText['histogram']> =>
    s.apiserver.histogram(
      'apiserver_request_duration_seconds',
      'verb="POST"',
      'resource="pods"',
      'subresource=""',
      'dry_run=""',
    );
  const admissions = histogram(s2!).count - histogram(s1!).count;
  const cpu = (a: Snapshot, b: Snapshot, side: 'agent' | 'apiserver'): number =>
    (b[side].value('process_cpu_seconds_total') - a[side].value('process_cpu_seconds_total')) * 1000;
  const baseCreates = runs.baseline.latencies.length + runs.baseline.failures;
  const webhookCreates = admissions + runs.control.latencies.length + runs.control.failures;
  const apiserverCpuPerCreateBase = cpu(s0!, s1!, 'apiserver') / Math.max(1, baseCreates);
  const apiserverCpuPerCreateWebhook = cpu(s1!, s2!, 'apiserver') / Math.max(1, webhookCreates);
  const added = (a: number, b: number): number => round(a - b);
  const agentPerAdmission = cpu(s1!, s2!, 'agent') / Math.max(1, admissions);
  const controls = runs.control.latencies.length + runs.control.failures;
  const apiserverPerAdmission =
    (cpu(s1!, s2!, 'apiserver') - apiserverCpuPerCreateBase * controls) / Math.max(1, admissions);
  return {
    measuredAt: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      loadAverage1m: loadAverages,
      note: 'shared 2-core machine; other work skews every latency (the CPU-per-create figures much less)',
    },
    load: {
      ratePerSecond: RATE,
      seconds: SECONDS,
      controlRatePerSecond: CONTROL_RATE,
      agentControllers: COMPONENTS,
      admissionsServedBy: WEBHOOK_THREAD === 'false' ? 'main thread' : 'admission thread',
      controllersNice: WEBHOOK_THREAD === 'false' ? 0 : CONTROLLERS_NICE,
      cpus: layout?.report ?? 'shared by every process',
      ...(niceOthers !== undefined ? { niceOfAllButApiserverAndAgent: niceOthers } : {}),
      ...(Object.keys(apiserverEnv).length > 0 ? { apiserverEnv } : {}),
      apiserverTracing: TRACE
        ? `${TRACE_RATE >= 1_000_000 ? 'every request' : `${TRACE_RATE / 10_000} % of the requests`} sampled, spans to the bench`
        : 'off',
      apiserverClient:
        CLIENT === 'h1'
          ? 'HTTP/1.1 keep-alive, uncapped'
          : 'HTTP/2, a new connection when 100 streams are busy (as client-go)',
      apiserverClientConnections: clientConnections(),
      loadGenerator: LOAD_THREAD ? 'a thread of its own' : "the bench's main thread, beside the trace receiver",
      webhookProtocol: 'HTTP/1.1 (as behind a Service)',
    },
    addedLatencyMs: {
      what: 'pod create latency with the webhook minus without, same rate',
      vsBaselinePhase: { p50: added(withWebhook.p50, base.p50), p99: added(withWebhook.p99, base.p99) },
      vsConcurrentControl: { p50: added(withWebhook.p50, control.p50), p99: added(withWebhook.p99, control.p99) },
      targetP99: 10,
    },
    endToEndCreateMs: {
      baselineNoWebhook: {
        ...base,
        failures: runs.baseline.failures,
        achievedRate: runs.baseline.achievedRate,
        p50BySendSecond: windows(runs.baseline),
      },
      withWebhook: {
        ...withWebhook,
        failures: runs.injected.failures,
        achievedRate: runs.injected.achievedRate,
        p50BySendSecond: windows(runs.injected),
      },
      concurrentControlNoWebhook: {
        ...control,
        failures: runs.control.failures,
        achievedRate: runs.control.achievedRate,
      },
    },
    apiserverPodCreate: {
      source:
        'apiserver_request_duration_seconds{verb="POST",resource="pods"}: inside the apiserver, all creates of the phase',
      baseline: quantiles(podCreates(s0!), podCreates(s1!)),
      withWebhook: quantiles(podCreates(s1!), podCreates(s2!)),
    },
    apiserverWebhookCallTraced: tracedCalls
      ? {
          source: `kube-apiserver trace spans "Call mutating webhook" of mpod.kb.io started in the webhook phase (${TRACE_RATE >= 1_000_000 ? 'every request' : `${TRACE_RATE / 10_000} % of the requests, at random`} sampled): the exact time each create spent in the webhook call, patch applied`,
          ...summary(tracedCalls),
          shareAtOrBelow10ms: round(tracedCalls.filter((ms) => ms <= 10).length / Math.max(1, tracedCalls.length), 4),
          spansExpected: admissions,
        }
      : 'off (--trace=false)',
    apiserverWebhookCall: {
      source: `apiserver_admission_webhook_admission_duration_seconds{name="${WEBHOOK_NAME}"}: the call, patch applied; buckets 5/25/100 ms, so quantiles inside a bucket are interpolated`,
      ...quantiles(apiHistogram(s1!), apiHistogram(s2!)),
    },
    webhookHandling: {
      source: `flotilla_webhook_admission_duration_seconds{path="${MUTATE_POD}"} (agent /metrics), request start to response end`,
      admissions,
      ...handling,
      tlsConnectionsOpened:
        s2!.agent.value('flotilla_webhook_tls_connections_total') -
        s1!.agent.value('flotilla_webhook_tls_connections_total'),
      abandonedByTheCaller:
        s2!.agent.value('flotilla_webhook_abandoned_total') - s1!.agent.value('flotilla_webhook_abandoned_total'),
      servedBy: WEBHOOK_THREAD === 'false' ? 'the main thread, beside the controllers' : 'the admission thread',
      eventLoopNote:
        "event-loop figures include the monitor's 10 ms sampling interval (prom-client's nodejs_eventloop_lag_*): the delay itself is the figure minus 10 ms",
      eventLoopDelayP99Ms: round(s2!.agent.value('nodejs_eventloop_lag_p99_seconds') * 1000),
      eventLoopDelayMaxMs: round(s2!.agent.value('nodejs_eventloop_lag_max_seconds') * 1000),
      admissionThreadEventLoopDelayP99Ms: round(
        s2!.agent.value('flotilla_webhook_thread_eventloop_lag_seconds', 'stat="p99"') * 1000,
      ),
      admissionThreadEventLoopDelayMaxMs: round(
        s2!.agent.value('flotilla_webhook_thread_eventloop_lag_seconds', 'stat="max"') * 1000,
      ),
    },
    cpuMsPerCreate: {
      what: 'process CPU over the phase divided by its creates: independent of the machine load',
      apiserverBaseline: round(apiserverCpuPerCreateBase, 3),
      apiserverWithWebhook: round(apiserverCpuPerCreateWebhook, 3),
      agentPerAdmission: round(agentPerAdmission, 3),
      // The apiserver's CPU for a create with the webhook, controls counted at the baseline's cost.
      addedByWebhook: round(apiserverPerAdmission - apiserverCpuPerCreateBase + agentPerAdmission, 3),
      loadGeneratorWithWebhook: round(
        (s2!.benchCpuMicros - s1!.benchCpuMicros) / 1000 / Math.max(1, webhookCreates),
        3,
      ),
    },
    activity: {
      what: "what happened beside the creates in each phase: the machine's CPU (average cores busy, by process: /proc), the agent's reconciles by controller (count, and seconds from start to end, awaits included) and the apiserver's write requests by verb and resource (the bench's own pod creates included)",
      baseline: activity(s0!, s1!),
      webhook: activity(s1!, s2!),
    },
    ...(runs.baseline.firstError || runs.injected.firstError || runs.control.firstError
      ? {
          firstErrors: {
            baseline: runs.baseline.firstError,
            webhook: runs.injected.firstError,
            control: runs.control.firstError,
          },
        }
      : {}),
  };
}
