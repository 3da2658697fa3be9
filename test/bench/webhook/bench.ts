// Admission webhook benchmark: pod creates at a fixed rate through the real kube-apiserver, which
// calls the real `agent manager` webhook over TLS for SidecarSet injection.
//   1. baseline: the same load with pods that opt out of the webhook (`flotilla.io/webhook:
//      disabled`, the objectSelector skips the call), so the apiserver's own latency is known;
//   2. webhook: pods matched by two SidecarSets (three containers, an init container, volumes,
//      transferred env, patched metadata) are injected.
// Pods carry a scheduling gate so neither scheduler nor kwok work competes for the CPU; the
// creates are open-loop (one every 1/RATE s whatever the answers), as a busy cluster sends them.
// Reported: the webhook's own handling time from its histogram
// (flotilla_webhook_admission_duration_seconds, /mutate-pod, read from the agent's /metrics before
// and after), and end-to-end create latency with and without the webhook (the difference is the
// latency the webhook adds). Prints the numbers and writes test/bench/results/webhook.json with
// the machine's load average (the machine is shared).
// Run: npm run bench:webhook [-- --rate=100 --seconds=30 --cpu-prof=<dir>]
import { spawn } from 'node:child_process';
import https from 'node:https';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { format } from 'prettier';
import { createKubeRest, type KubeRest } from '../../../agent/src/runtime/rest.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { freePort, startEnvironment } from '../../env/src/index.js';
import type { ClusterInfo } from '../../integration/helpers/context.js';
import { installCrds } from '../../integration/helpers/crds.js';
import { kube } from '../../integration/helpers/kube.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const arg = (name: string, fallback: number): number =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const RATE = arg('rate', 100);
/** `--cpu-prof=<dir>`: the agent writes a V8 CPU profile there when it stops. */
const cpuProfDir = process.argv.find((a) => a.startsWith('--cpu-prof='))?.slice('--cpu-prof='.length);
const SECONDS = arg('seconds', 30);
const WARMUP = 200;
const AGENT_NS = 'flotilla-system';
const MUTATE_POD = '/mutate-pod';
const CONNECTIONS = 'flotilla_webhook_tls_connections_total';
const CPU = 'process_cpu_seconds_total';

const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;
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

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

function summary(ms: number[]): Record<string, number> {
  const s = [...ms].sort((a, b) => a - b);
  return {
    count: s.length,
    p50: round(quantile(s, 0.5)),
    p90: round(quantile(s, 0.9)),
    p99: round(quantile(s, 0.99)),
    max: round(s.at(-1) ?? NaN),
  };
}

/** One unlabelled sample of the agent's /metrics. */
async function metric(port: number, name: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

interface HistogramSample {
  buckets: Map<number, number>;
  sum: number;
  count: number;
}

/** Cumulative bucket counts (upper bound in s → count), sum and count of the series of `name` whose labels contain `match`. */
function histogram(text: string, name: string, match: string): HistogramSample {
  const buckets = new Map<number, number>();
  let sum = 0;
  let count = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || !line.includes(match)) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    const le = /le="([^"]+)"/.exec(line)?.[1];
    if (line.startsWith(`${name}_bucket`) && le) {
      const bound = le === '+Inf' ? Infinity : Number(le);
      buckets.set(bound, (buckets.get(bound) ?? 0) + value);
    } else if (line.startsWith(`${name}_sum`)) sum += value;
    else if (line.startsWith(`${name}_count`)) count += value;
  }
  return { buckets, sum, count };
}

/** Our webhook's handling time of /mutate-pod, from the agent's /metrics. */
async function agentHistogram(port: number): Promise<HistogramSample> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return histogram(text, 'flotilla_webhook_admission_duration_seconds', `path="${MUTATE_POD}"`);
}

/** The apiserver's own view of the call to our pod webhook (network and TLS included). */
async function apiserverHistogram(kc: KubeConfig): Promise<HistogramSample> {
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  const url = new URL(`${kc.getCurrentCluster()!.server}/metrics`);
  const text = await new Promise<string>((resolve, reject) => {
    https
      .get(url, options, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve(body));
      })
      .on('error', reject);
  });
  return histogram(text, 'apiserver_admission_webhook_admission_duration_seconds', 'name="mpod.kb.io"');
}

/** p50, p99 and mean in ms between two samples. */
function quantiles(before: HistogramSample, after: HistogramSample): Record<string, number> {
  const n = after.count - before.count;
  return {
    count: n,
    meanMs: round(((after.sum - before.sum) / Math.max(1, n)) * 1000, 3),
    p50Ms: round(histogramQuantile(before.buckets, after.buckets, 0.5), 3),
    p99Ms: round(histogramQuantile(before.buckets, after.buckets, 0.99), 3),
  };
}

/** histogram_quantile over the difference of two samples: linear within the bucket, in ms. */
function histogramQuantile(before: Map<number, number>, after: Map<number, number>, q: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0));
  const total = counts.at(-1) ?? 0;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i]! >= rank) {
      const upper = bounds[i]!;
      if (upper === Infinity) return lower * 1000;
      const inBucket = counts[i]! - below;
      return (lower + (upper - lower) * (inBucket === 0 ? 0 : (rank - below) / inBucket)) * 1000;
    }
    lower = bounds[i]!;
    below = counts[i]!;
  }
  return NaN;
}

/** The machine's first non-loopback IPv4 address. */
function hostAddress(): string {
  const found = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal);
  if (!found) throw new Error('no non-loopback IPv4 address for the webhook');
  return found.address;
}

function pod(i: number, phase: string, optOut: boolean): Record<string, unknown> {
  return {
    metadata: {
      name: `${phase}-${i}`,
      labels: { app: 'bench', ...(optOut ? { 'flotilla.io/webhook': 'disabled' } : {}) },
    },
    spec: {
      schedulingGates: [{ name: 'flotilla.io/bench' }],
      containers: [{ name: 'main', image: 'registry.local/app:v1', env: [{ name: 'LOG_LEVEL', value: 'info' }] }],
    },
  };
}

/** Creates `count` pods, one every 1000/RATE ms, without waiting for answers; latencies in ms. */
async function openLoop(rest: KubeRest, ns: string, phase: string, count: number, optOut: boolean) {
  const latencies: number[] = [];
  let failures = 0;
  let firstError: string | undefined;
  const inFlight: Promise<void>[] = [];
  const interval = 1000 / RATE;
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = t0 + i * interval - performance.now();
    if (wait > 0) await sleep(wait);
    const started = performance.now();
    inFlight.push(
      rest.request({ method: 'POST', path: resourcePath(Resources.pods, ns), body: pod(i, phase, optOut) }).then(
        () => void latencies.push(performance.now() - started),
        (err: unknown) => {
          failures++;
          firstError ??= err instanceof Error ? err.message : String(err);
        },
      ),
    );
  }
  const sendSeconds = (performance.now() - t0) / 1000;
  await Promise.all(inFlight);
  return { latencies, failures, firstError, achievedRate: round(count / sendSeconds, 1) };
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
const env = await startEnvironment({ clusters: [{ name: 'whbench', nodes: 1 }] });
const cluster = env.clusters[0]!;
const k = kube({ kubeconfig: readFileSync(cluster.kubeconfigPath, 'utf8') } as ClusterInfo);
// Open loop for real: no connection cap in the load generator, so a slow answer never holds the
// next create back and the latency measured is the apiserver's.
const rest = createKubeRest(cluster.kubeConfig(), { maxSockets: 10_000, maxFreeSockets: 1000 });
let stopAgent = (): void => {};
try {
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
    [
      ...(cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : []),
      '--conditions=@flotilla/source',
      '--import',
      'tsx',
      'agent/src/main.ts',
      'manager',
      `--kubeconfig=${cluster.kubeconfigPath}`,
      '--cluster-name=bench',
      '--no-leader-elect',
      `--namespace=${AGENT_NS}`,
      '--health-host=127.0.0.1',
      `--health-port=${healthPort}`,
      '--log-level=warn',
      '--controllers=webhook',
      `--webhook-host=${webhookHost}`,
      `--webhook-port=${webhookPort}`,
      `--webhook-url=https://${webhookHost}:${webhookPort}`,
      '--webhook-timeout-seconds=10',
    ],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  stopAgent = () => child.kill('SIGTERM');
  await until('agent ready', async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok);
  for (const ss of SIDECARSETS) {
    await k.custom.createClusterCustomObject({
      group: 'apps.kruise.io',
      version: 'v1alpha1',
      plural: 'sidecarsets',
      body: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', ...ss },
    });
  }
  await until('both SidecarSets inject', async () => {
    const p = await k.core.createNamespacedPod({ namespace: 'bench', body: pod(0, 'probe', false), dryRun: 'All' });
    return p.spec?.containers.length === 4 && p.spec.initContainers?.length === 1;
  });

  log(`warm-up: ${WARMUP} creates`);
  await openLoop(rest, 'bench', 'warm', WARMUP, false);
  const count = RATE * SECONDS;
  const loadAverages: Record<string, number> = { start: load() };
  log(`baseline: ${count} creates at ${RATE}/s, webhook skipped`);
  const baseline = await openLoop(rest, 'bench', 'base', count, true);
  loadAverages.afterBaseline = load();
  log(`webhook: ${count} creates at ${RATE}/s, injected`);
  const before = await agentHistogram(healthPort);
  const apiBefore = await apiserverHistogram(cluster.kubeConfig());
  const connectionsBefore = await metric(healthPort, CONNECTIONS);
  const cpuBefore = await metric(healthPort, CPU);
  const injected = await openLoop(rest, 'bench', 'inj', count, false);
  const after = await agentHistogram(healthPort);
  const apiAfter = await apiserverHistogram(cluster.kubeConfig());
  const connections = (await metric(healthPort, CONNECTIONS)) - connectionsBefore;
  const cpuSeconds = (await metric(healthPort, CPU)) - cpuBefore;
  loadAverages.afterWebhook = load();
  const check = await k.core.readNamespacedPod({ namespace: 'bench', name: 'inj-0' });

  const base = summary(baseline.latencies);
  const withWebhook = summary(injected.latencies);
  const handling = quantiles(before, after);
  const admissions = handling.count!;
  const result = {
    measuredAt: new Date().toISOString(),
    machine: {
      cpus: os.cpus().length,
      loadAverage1m: loadAverages,
      note: 'shared 2-core machine; other work skews every number',
    },
    load: {
      ratePerSecond: RATE,
      seconds: SECONDS,
      podsPerPhase: count,
      webhookProtocol: 'HTTP/1.1 (as in production)',
    },
    webhookHandling: {
      source:
        'flotilla_webhook_admission_duration_seconds{path="/mutate-pod"} (agent /metrics), request start to response end',
      admissions,
      tlsConnectionsOpened: connections,
      // Load-independent: what one admission costs the agent process (all its work, TLS included).
      agentCpuMsPerAdmission: round((cpuSeconds * 1000) / Math.max(1, admissions), 3),
      meanMs: handling.meanMs,
      p50Ms: handling.p50Ms,
      p99Ms: handling.p99Ms,
      targetP99Ms: 10,
    },
    apiserverWebhookCall: {
      source: 'apiserver_admission_webhook_admission_duration_seconds{name="mpod.kb.io"} (apiserver /metrics)',
      ...quantiles(apiBefore, apiAfter),
    },
    endToEndCreateMs: {
      baselineNoWebhook: { ...base, failures: baseline.failures, achievedRate: baseline.achievedRate },
      withWebhook: { ...withWebhook, failures: injected.failures, achievedRate: injected.achievedRate },
      addedByWebhook: { p50: round(withWebhook.p50! - base.p50!), p99: round(withWebhook.p99! - base.p99!) },
    },
    injected: {
      containers: check.spec?.containers.map((c) => c.name),
      initContainers: check.spec?.initContainers?.map((c) => c.name),
    },
    ...(baseline.firstError || injected.firstError
      ? { firstErrors: { baseline: baseline.firstError, webhook: injected.firstError } }
      : {}),
  };
  console.log(JSON.stringify(result, null, 2));
  mkdirSync(path.join(here, '../results'), { recursive: true });
  // Formatted as the repository's lint expects it.
  const json = await format(JSON.stringify(result), { parser: 'json' });
  writeFileSync(path.join(here, '../results/webhook.json'), json);
} finally {
  stopAgent();
  // The profile is written on exit; give the agent its shutdown before the cluster goes.
  if (cpuProfDir) await sleep(5000);
  await env.stop();
}
