// PodUnavailableBudget admission bench: the agent webhook's own handling time for pod DELETE
// (vpod.kb.io) and pods/eviction CREATE (vpodeviction.kb.io) at RATE/s, against one budget
// covering every pod, through the real kube-apiserver calling the real `agent manager` over TLS.
//   1. RATE × SECONDS × 2 + 1 Ready pods (kwok, spread over enough fake nodes), all covered by one
//      PodUnavailableBudget (minAvailable 1, so every admission takes one from the budget and
//      writes the budget's status) and bound to it by the pod webhook at creation;
//   2. delete: RATE deletions/s for SECONDS, open loop; 3. evict: RATE evictions/s for SECONDS.
// Reported per phase: the agent's handling histogram of /validate-pod (flotilla_webhook_admission_
// duration_seconds: request read to answer written, which includes the admission thread asking the
// main thread's guard and the guard's status write), allowed and denied admissions, the apiserver's
// own metric of the call, the client's latency of each deletion and eviction, the agent's CPU per
// admission and the budget's status after the phase.
// Run: npx tsx --conditions=@flotilla/source test/bench/webhook/pub.ts [-- --rate=100 --seconds=30
//      --out=<file> (default test/bench/results/webhook-pub.json) --cpu-prof=<dir>]
import { benchAgentArgs, hostAddress } from './agent-args.js';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format } from 'prettier';
import { createKubeRest, type KubeRest } from '../../../agent/src/runtime/rest.js';
import { freePort, startEnvironment } from '../../env/src/index.js';
import type { ClusterInfo } from '../../integration/helpers/context.js';
import { installCrds } from '../../integration/helpers/crds.js';
import { kube } from '../../integration/helpers/kube.js';
import { http1Creator, openLoop, type CreatePod, type StreamResult } from './load.js';
import { agentMetrics, apiserverMetrics, quantiles, round, summary, type MetricsText } from './metrics.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');
const option = (name: string): string | undefined =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const RATE = Number(option('rate') ?? 100);
const SECONDS = Number(option('seconds') ?? 30);
const OUT = option('out') ?? path.join(here, '../results/webhook-pub.json');
/** Where the agent writes a CPU profile on exit (`--cpu-prof=<dir>`); none by default. */
const cpuProfDir = option('cpu-prof');
const PODS_PER_PHASE = Math.round(RATE * SECONDS);
/** The fake nodes take 110 pods each; the pods are created at this rate before the phases. */
const PODS_PER_NODE = 100;
const PREP_RATE = 100;
const AGENT_NS = 'flotilla-system';
const NS = 'bench';
const PUB = 'bench-pub';
const APP = 'pub-bench';
const VALIDATE_POD = '/validate-pod';
const SETTLE_MS = 2000;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const log = (msg: string): void => void process.stderr.write(`[bench:pub] ${msg}\n`);

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

interface PubStatus {
  currentAvailable?: number;
  unavailableAllowed?: number;
  disruptedPods?: Record<string, string>;
}

const pubPath = `/apis/policy.kruise.io/v1alpha1/namespaces/${NS}/podunavailablebudgets`;
const podsPath = `/api/v1/namespaces/${NS}/pods`;

async function pubStatus(rest: KubeRest): Promise<PubStatus> {
  return (await rest.request<{ status?: PubStatus }>({ method: 'GET', path: `${pubPath}/${PUB}` })).status ?? {};
}

const podBody = (i: number): Record<string, unknown> => ({
  metadata: { name: `pub-${i}`, labels: { app: APP } },
  spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] },
});

/** The open loop's "create" turned into a deletion or an eviction of the pod the stream names. */
function disruptor(rest: KubeRest, kind: 'delete' | 'evict'): CreatePod {
  return async (namespace, body) => {
    const name = (body.metadata as { name: string }).name;
    const pod = `/api/v1/namespaces/${namespace}/pods/${name}`;
    // Without a grace period the pod goes at once: kwok's own follow-up DELETE of a terminating
    // pod would be a second admission per pod in the histogram.
    const now = { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 };
    if (kind === 'delete') {
      await rest.request({ method: 'DELETE', path: pod, body: now, discardBody: true });
      return;
    }
    await rest.request({
      method: 'POST',
      path: `${pod}/eviction`,
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace }, deleteOptions: now },
      discardBody: true,
    });
  };
}

interface Snapshot {
  agent: MetricsText;
  apiserver: MetricsText;
}

/** What one phase (`webhook`: the configuration's name of the call) did, from two snapshots and the loop's results. */
function phaseReport(a: Snapshot, b: Snapshot, run: StreamResult, webhook: string, status: PubStatus): unknown {
  const handling = (s: Snapshot, allowed?: boolean) =>
    s.agent.histogram(
      'flotilla_webhook_admission_duration_seconds',
      `path="${VALIDATE_POD}"`,
      ...(allowed === undefined ? [] : [`allowed="${allowed}"`]),
    );
  const apiCall = (s: Snapshot) =>
    s.apiserver.histogram('apiserver_admission_webhook_admission_duration_seconds', `name="${webhook}"`);
  const admissions = handling(b).count - handling(a).count;
  const agentCpuMs = (b.agent.value('process_cpu_seconds_total') - a.agent.value('process_cpu_seconds_total')) * 1000;
  return {
    webhookHandling: {
      source: `flotilla_webhook_admission_duration_seconds{path="${VALIDATE_POD}"} (agent /metrics): request read to answer written, the guard's budget read and status write included`,
      ...quantiles(handling(a), handling(b)),
      allowed: handling(b, true).count - handling(a, true).count,
      denied: handling(b, false).count - handling(a, false).count,
      // The apiserver validates a deletion again when the copy of the pod it started from was stale.
      admissionsPerRequest: round(admissions / Math.max(1, run.latencies.length + run.failures)),
    },
    apiserverWebhookCall: {
      source: `apiserver_admission_webhook_admission_duration_seconds{name="${webhook}"}: buckets 5/25/100 ms, quantiles inside a bucket are interpolated`,
      ...quantiles(apiCall(a), apiCall(b)),
    },
    client: {
      what: 'each deletion or eviction as the bench saw it, sent open-loop, in ms (HTTP/1.1 keep-alive)',
      ...summary(run.latencies),
      refusedOrFailed: run.failures,
      firstError: run.firstError,
      achievedRate: run.achievedRate,
      lateMs: summary(run.lateMs),
    },
    agentCpuMsPerAdmission: round(agentCpuMs / Math.max(1, admissions), 3),
    budgetAfter: {
      currentAvailable: status.currentAvailable,
      unavailableAllowed: status.unavailableAllowed,
      disruptedPodsRecorded: Object.keys(status.disruptedPods ?? {}).length,
    },
  };
}

log(`starting a cluster for ${PODS_PER_PHASE * 2 + 1} pods`);
const env = await startEnvironment({
  clusters: [{ name: 'pubbench', nodes: Math.ceil((PODS_PER_PHASE * 2 + 1) / PODS_PER_NODE) }],
});
const cluster = env.clusters[0]!;
const kc = cluster.kubeConfig();
const k = kube({ kubeconfig: readFileSync(cluster.kubeconfigPath, 'utf8') } as ClusterInfo);
const rest = createKubeRest(kc, { maxSockets: 1000, maxFreeSockets: 100, http2: false });
let stopAgent = (): void => {};
try {
  await installCrds(k);
  await k.core.createNamespace({ body: { metadata: { name: AGENT_NS } } });
  await k.core.createNamespace({ body: { metadata: { name: NS } } });
  const healthPort = await freePort();
  const webhookPort = await freePort();
  // As the pod-create bench: a non-loopback address, so the apiserver speaks HTTP/1.1 to the
  // webhook as to one behind a Service.
  const webhookHost = hostAddress();
  const child = spawn(
    process.execPath,
    benchAgentArgs({
      kubeconfigPath: cluster.kubeconfigPath,
      namespace: AGENT_NS,
      healthPort,
      webhookHost,
      webhookPort,
      components: '*',
      nodeFlags: cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`] : [],
    }),
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  stopAgent = () => child.kill('SIGTERM');
  await until('agent ready', async () => (await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok);

  // minAvailable 1: every admission of a Ready pod takes one from the budget and writes its status.
  await rest.request({
    method: 'POST',
    path: pubPath,
    body: {
      apiVersion: 'policy.kruise.io/v1alpha1',
      kind: 'PodUnavailableBudget',
      metadata: { name: PUB },
      spec: { selector: { matchLabels: { app: APP } }, minAvailable: 1 },
    },
    discardBody: true,
  });
  await until('the pod webhook binding pods to the budget', async () => {
    const probe = await rest.request<{ metadata: { annotations?: Record<string, string> } }>({
      method: 'POST',
      path: podsPath,
      query: { dryRun: 'All' },
      body: { apiVersion: 'v1', kind: 'Pod', ...podBody(-1) },
    });
    return probe.metadata.annotations?.['kruise.io/related-pub'] === PUB;
  });

  // One pod more than the phases take: minAvailable 1 then never refuses the last eviction.
  const total = PODS_PER_PHASE * 2 + 1;
  log(`creating ${total} pods at ${PREP_RATE}/s`);
  const [prep] = await openLoop(http1Creator(rest), NS, total / PREP_RATE, [{ rate: PREP_RATE, pod: podBody }]);
  if (prep!.failures > 0) throw new Error(`${prep!.failures} pod creates failed: ${prep!.firstError}`);
  await until(
    `the budget counting ${total} Ready pods`,
    async () => (await pubStatus(rest)).currentAvailable === total,
  );

  const phases: Record<string, unknown> = {};
  const snapshot = async (): Promise<Snapshot> => {
    const [agent, apiserver] = await Promise.all([agentMetrics(healthPort), apiserverMetrics(kc)]);
    return { agent, apiserver };
  };
  for (const [index, kind, webhook] of [
    [0, 'delete', 'vpod.kb.io'],
    [1, 'evict', 'vpodeviction.kb.io'],
  ] as const) {
    log(`${kind}: ${SECONDS} s at ${RATE}/s`);
    const before = await snapshot();
    await sleep(SETTLE_MS);
    const offset = index * PODS_PER_PHASE;
    const [run] = await openLoop(disruptor(rest, kind), NS, SECONDS, [{ rate: RATE, pod: (i) => podBody(offset + i) }]);
    const after = await snapshot();
    phases[kind] = phaseReport(before, after, run!, webhook, await pubStatus(rest));
    await sleep(SETTLE_MS);
  }

  const result = {
    measuredAt: new Date().toISOString(),
    machine: { cpus: os.cpus().length, loadAverage1m: round(os.loadavg()[0]!) },
    load: {
      ratePerSecond: RATE,
      secondsPerPhase: SECONDS,
      pods: total,
      budget: `one PodUnavailableBudget, selector over every pod, minAvailable 1`,
      agent: 'agent manager, every component, admissions from the admission thread',
      webhookProtocol: 'HTTP/1.1 (a non-loopback address, as behind a Service)',
    },
    ...phases,
  };
  console.log(JSON.stringify(result, null, 2));
  mkdirSync(path.dirname(OUT), { recursive: true });
  writeFileSync(OUT, await format(JSON.stringify(result), { parser: 'json' }));
  for (const kind of ['delete', 'evict']) {
    const h = (phases[kind] as { webhookHandling: Record<string, unknown> }).webhookHandling;
    log(
      `${kind}: handling p50 ${String(h.p50Ms)} ms / p99 ${String(h.p99Ms)} ms over ${String(h.count)} admissions (${String(h.denied)} denied)`,
    );
  }
} finally {
  stopAgent();
  // The profile is written on exit; give the agent its shutdown before the cluster goes.
  if (cpuProfDir) await sleep(5000);
  await env.stop();
}
