// Hub benchmark: 1,000 simulated agents (plain NATS clients speaking the agent protocol; in a
// child process, agents.ts) and one workload placed on all. Each agent joins as a real one does:
// its own nkey, registration over the hub's HTTP listener, acceptance, a signed claim, a user JWT
// in its own NATS account, a TLS connection to the 3-node NATS cluster. Measures
//   1. REST write → receipt at every agent: p50/p99/max over several spec changes, after warm-up
//      changes that are not counted; per change the hub's stages (from its own histograms) and
//      the CPU milliseconds of the hub, the agents, nats-server and Postgres;
//   2. status ingestion into Postgres: reports/s while every agent publishes at once, and the rate
//      at which the hub drains a backlog of reports already in the stream, with CPU per report.
// Prints a summary and writes test/bench/results/hub.json with the load averages (the machine is
// shared: compare CPU ms and ratios across runs, wall-clock times only within one run). Needs the
// local Postgres and the harness nats-server (~/.cache/flotilla/tools). Joining (registration,
// claim, account push) is setup and timed on its own, not part of either measure.
// Run: npm run bench:hub -- [agents=1000] [changes=5] [reportsPerAgent=20] [warmup=2] [--memory-consumers]
//   [--consumer-replicas=N] [--nats-nodes=N] [--compare-consumers]
// (--nats-nodes=1: the same auth and TLS on one node with replicas 1, the ceiling the cluster's
// replication is compared with; writes results/hub-1-node.json)
// (experiments on the durables the hub created, writing results/hub-<experiment>.json:
// --memory-consumers keeps their state in memory; --consumer-replicas=1 gives each one replica
// instead of the stream's three)
// --compare-consumers: the same agents measured with each durable setup in turn (agents' durables
// for distribution, the hub's status durable for a backlog drain): results/hub-consumers.json
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { format } from 'prettier';
import { jetstreamManager } from '@nats-io/jetstream';
import { DESIRED_STREAM, HUB_STATUS_CONSUMER, STATUS_STREAM, agentConsumerName } from '@flotilla/api';
import { cloneSetSpec } from '../../integration/hub/fixtures.js';
import { startFleetNats, startTestHub, type TestHub } from '../../integration/hub/fleet.js';
import { cpuBetween, sampleCpu, type CpuSample } from './cpu.js';

const flags = process.argv.slice(2).filter((a) => a.startsWith('--'));
const args = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const AGENTS = Number(args[0] ?? 1000);
const CHANGES = Number(args[1] ?? 5);
const REPORTS_PER_AGENT = Number(args[2] ?? 20);
const WARMUP = Number(args[3] ?? 2);
// An experiment, not the hub's configuration: agents' durables keep their state in memory
// (nats-server then writes no per-consumer state file on every delivery and ack).
const MEMORY_CONSUMERS = flags.includes('--memory-consumers');
const CONSUMER_REPLICAS = Number(flags.find((f) => f.startsWith('--consumer-replicas='))?.split('=')[1] ?? 0);
const NATS_NODES = Number(flags.find((f) => f.startsWith('--nats-nodes='))?.split('=')[1] ?? 3);
// Distribution only, once per durable configuration in the same run and with the same agents
// (results/hub-consumers.json): as the hub creates them, then in memory at the stream's replicas,
// then in memory with one replica.
const COMPARE_CONSUMERS = flags.includes('--compare-consumers');
const EXPERIMENT = [
  COMPARE_CONSUMERS ? 'consumers' : '',
  NATS_NODES !== 3 ? `${NATS_NODES}-node` : '',
  MEMORY_CONSUMERS ? 'memory-consumers' : '',
  CONSUMER_REPLICAS ? `r${CONSUMER_REPLICAS}-consumers` : '',
]
  .filter(Boolean)
  .join('-');
const here = path.dirname(fileURLToPath(import.meta.url));
/** The workload whose spec changes are timed; the status phase reports on `obj-*` workloads. */
const MEASURED = 'bench-web';

const quantile = (sorted: number[], q: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const median = (xs: number[]): number =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );
const round1 = (n: number): number => Math.round(n * 10) / 10;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const now = (): number => performance.timeOrigin + performance.now();
const load1 = (): number => round1(os.loadavg()[0]!);

/** Limits high enough that 1,000 agents joining at once are not throttled (they are per token). */
const BENCH_LIMITS: Record<string, string> = {
  FLOTILLA_RATE_LIMIT_PER_SECOND: '100000',
  FLOTILLA_RATE_LIMIT_BURST: '1000000',
  FLOTILLA_RATE_LIMIT_ANONYMOUS_PER_SECOND: '100000',
  FLOTILLA_RATE_LIMIT_ANONYMOUS_BURST: '1000000',
  FLOTILLA_REGISTRATIONS_PER_MINUTE: '100000',
  FLOTILLA_PENDING_CLUSTERS_PER_TOKEN: '1000000',
  FLOTILLA_PENDING_CLUSTERS_TOTAL: '1000000',
};

/** Sums of the hub's histograms (seconds), keyed `metric` or `metric{stage}`. */
async function histogramSums(t: TestHub): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const m of await t.registry.getMetricsAsJSON()) {
    for (const v of m.values as { metricName?: string; value: number; labels: Record<string, unknown> }[]) {
      if (!v.metricName?.endsWith('_sum')) continue;
      const stage = v.labels['stage'];
      out.set(typeof stage === 'string' ? `${m.name}{${stage}}` : m.name, v.value);
    }
  }
  return out;
}

/** Milliseconds each named histogram grew by between two readings. */
function stageMs(before: Map<string, number>, after: Map<string, number>, names: Record<string, string>) {
  return Object.fromEntries(
    Object.entries(names).map(([label, key]) => [
      label,
      round1(((after.get(key) ?? 0) - (before.get(key) ?? 0)) * 1000),
    ]),
  );
}

const DESIRED_STAGES = {
  plan: 'flotilla_hub_desired_stage_seconds{plan}',
  store: 'flotilla_hub_desired_stage_seconds{store}',
  relayRead: 'flotilla_hub_desired_stage_seconds{relay_read}',
  publish: 'flotilla_hub_outbox_publish_seconds',
  relayMark: 'flotilla_hub_desired_stage_seconds{relay_mark}',
  commitToPublished: 'flotilla_hub_desired_stage_seconds{handoff}',
};
const STATUS_STAGES = {
  classify: 'flotilla_hub_status_batch_seconds{classify}',
  store: 'flotilla_hub_status_batch_seconds{store}',
  ack: 'flotilla_hub_status_batch_seconds{ack}',
};

async function countStored(t: TestHub): Promise<number> {
  const r = await t.db.pool.query<{ n: string }>(
    "select count(*) as n from object_status where namespace = 'bench' and name like 'obj-%'",
  );
  return Number(r.rows[0]!.n);
}

async function waitStored(t: TestHub, total: number): Promise<number> {
  const deadline = Date.now() + 180_000;
  let stored = 0;
  while (Date.now() < deadline && stored < total) {
    stored = await countStored(t);
    if (stored < total) await sleep(20);
  }
  return stored;
}

const nats = await startFleetNats({ nodes: NATS_NODES });
// The experiments swap durables behind the hub, whose link reconcile would make them again as
// it creates them (storage and replicas are its settings): it runs once at start only, then.
const SWAPS = COMPARE_CONSUMERS || MEMORY_CONSUMERS || CONSUMER_REPLICAS > 0;
const t = await startTestHub(nats, {
  env: { ...BENCH_LIMITS, ...(SWAPS ? { FLOTILLA_NATS_RECONCILE_SECONDS: '3600' } : {}) },
});
const names = Array.from({ length: AGENTS }, (_, i) => `b${i}`);
const natsPids = (): number[] => nats.cluster.nodes.map((n) => n.process.pid);
interface ConsumerSetup {
  memory: boolean;
  /** 0: the stream's. */
  replicas: number;
}
const describeSetup = (c: ConsumerSetup): string =>
  `${c.memory ? 'memory' : 'file'}, ${c.replicas ? `${c.replicas} replica(s)` : "the stream's replicas"}`;
/** The experiments swap the durables the hub created (agents may not) for other ones. */
async function swapConsumers(setup: ConsumerSetup): Promise<void> {
  await t.hub.link.pass();
  const jsm = await jetstreamManager(t.hub.nc);
  for (const name of names) {
    const { config } = await jsm.consumers.info(DESIRED_STREAM, agentConsumerName(name));
    await jsm.consumers.delete(DESIRED_STREAM, agentConsumerName(name));
    await jsm.consumers.add(DESIRED_STREAM, {
      ...config,
      mem_storage: setup.memory,
      ...(setup.replicas ? { num_replicas: setup.replicas } : {}),
    });
  }
}

const agentsProc = fork(path.join(here, 'agents.ts'), [], {
  execArgv: ['--import', 'tsx', '--conditions=@flotilla/source'],
  stdio: 'inherit',
});
/** Receipts of the measured workload's revisions; of the status phase's objects, only a count. */
const receipts = new Map<number, number[]>();
let objectReceipts = 0;
const waiters: { type: string; resolve: (m: Record<string, unknown>) => void }[] = [];
agentsProc.on('message', (m: { type: string; items?: { name: string; revision: number; at: number }[] }) => {
  if (m.type === 'receipts') {
    for (const { name, revision, at } of m.items!) {
      if (name !== MEASURED) {
        objectReceipts++;
        continue;
      }
      const list = receipts.get(revision) ?? [];
      list.push(at);
      receipts.set(revision, list);
    }
    return;
  }
  const i = waiters.findIndex((w) => w.type === m.type);
  if (i >= 0) waiters.splice(i, 1)[0]!.resolve(m);
});
agentsProc.on('exit', (code) => {
  if (code) {
    console.error(`[bench] the agents process exited with ${code}`);
    process.exit(1);
  }
});
const request = (msg: Record<string, unknown>, reply: string): Promise<Record<string, unknown>> =>
  new Promise((resolve) => {
    waiters.push({ type: reply, resolve });
    agentsProc.send(msg);
  });

/** A REST call over the hub's real HTTP listener, as an operator or the CLI makes it. */
async function httpRest<T>(method: 'POST' | 'PUT', url: string, body: unknown): Promise<T> {
  const res = await fetch(`${t.hub.url}${url}`, {
    method,
    headers: { authorization: `Bearer ${t.operatorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** The hub's Postgres backends (its pool and LISTEN connection): this database's sessions. */
async function postgresPids(): Promise<number[]> {
  const r = await t.db.pool.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
  );
  return r.rows.map((x) => x.pid);
}

interface CpuMark {
  hub: number;
  other: CpuSample;
  pg: CpuSample;
}
const markCpu = async (): Promise<CpuMark> => {
  const u = process.cpuUsage();
  return {
    hub: (u.user + u.system) / 1000,
    other: sampleCpu([agentsProc.pid!, ...natsPids()]),
    pg: sampleCpu(await postgresPids()),
  };
};
/**
 * CPU ms per component; `hub` includes this driver's polling, which is small. `total` over the
 * machine's cores bounds the wall time from below whatever the load: the load-robust figure.
 */
const cpuSince = async (before: CpuMark): Promise<Record<string, number>> => {
  const after = await markCpu();
  const one = (pid: number): number => (after.other.get(pid) ?? NaN) - (before.other.get(pid) ?? NaN);
  const parts = {
    hub: Math.round(after.hub - before.hub),
    agents: one(agentsProc.pid!),
    // Every NATS node together (the cluster replicates each stream three times).
    natsServer: natsPids().reduce((sum, pid) => sum + one(pid), 0),
    postgres: cpuBetween(before.pg, after.pg),
  };
  return { ...parts, total: parts.hub + parts.agents + parts.natsServer + parts.postgres };
};

const loadAtStart = os.loadavg().map(round1);
const tSetup = performance.now();
await request(
  {
    type: 'join',
    hubUrl: t.hub.url,
    bootstrapToken: t.bootstrapToken,
    operatorToken: t.operatorToken,
    caFile: nats.tls.caFile,
    names,
  },
  'joined',
);
const joinSeconds = round1((performance.now() - tSetup) / 1000);
console.log(`[bench] ${AGENTS} agents joined (registered, accepted, claimed) in ${joinSeconds} s`);
if (MEMORY_CONSUMERS || CONSUMER_REPLICAS)
  await swapConsumers({ memory: MEMORY_CONSUMERS, replicas: CONSUMER_REPLICAS });
const tConnect = performance.now();
await request({ type: 'start' }, 'ready');
console.log(`[bench] ${AGENTS} agents connected and consuming in ${round1((performance.now() - tConnect) / 1000)} s`);

// 1. REST write → receipt at every agent. Revision 1 creates the workload; the first WARMUP
// changes of each measured series (JIT, connection pools, nats-server's per-subject state, new
// durables) are reported but not counted.
let revision = 0;
let id = '';
async function distribution(): Promise<Record<string, unknown>> {
  const latencies: number[] = [];
  let missingReceipts = 0;
  const perChange: Record<string, unknown>[] = [];
  for (let i = 1; i <= WARMUP + CHANGES; i++) {
    const r = ++revision;
    const body = { spec: cloneSetSpec(r), placement: { clusterSelector: { matchLabels: { bench: 'yes' } } } };
    const stagesBefore = await histogramSums(t);
    const cpuBefore = await markCpu();
    const loadBefore = load1();
    const t0 = now();
    if (r === 1) {
      const created = await httpRest<{ id: string }>('POST', '/api/v1/workloads', {
        kind: 'CloneSet',
        name: MEASURED,
        namespace: 'bench',
        ...body,
      });
      id = created.id;
    } else {
      await httpRest('PUT', `/api/v1/workloads/${id}`, body);
    }
    const restMs = now() - t0;
    const deadline = Date.now() + 60_000;
    while ((receipts.get(r)?.length ?? 0) < AGENTS && Date.now() < deadline) await sleep(5);
    const lat = (receipts.get(r) ?? []).map((at) => at - t0).sort((a, b) => a - b);
    // Let the relay mark its rows and the agents' acks settle before reading stages and CPU.
    await sleep(300);
    const warmup = i <= WARMUP;
    const row = {
      revision: r,
      warmup,
      load1: loadBefore,
      restMs: round1(restMs),
      received: lat.length,
      p50Ms: round1(quantile(lat, 0.5)),
      p99Ms: round1(quantile(lat, 0.99)),
      lastMs: round1(lat.at(-1) ?? NaN),
      stagesMs: stageMs(stagesBefore, await histogramSums(t), DESIRED_STAGES),
      cpuMs: await cpuSince(cpuBefore),
    };
    if (lat.length < AGENTS) console.warn(`[bench] change ${r}: only ${lat.length} of ${AGENTS} agents received it`);
    if (!warmup) {
      latencies.push(...lat);
      missingReceipts += AGENTS - lat.length;
      perChange.push(row);
    }
    console.log(`[bench] change ${r}${warmup ? ' (warm-up)' : ''}: ${JSON.stringify(row)}`);
    await sleep(700);
  }
  latencies.sort((a, b) => a - b);
  const meanOf = (key: string): Record<string, number> => {
    const rows = perChange.map((c) => c[key] as Record<string, number>);
    return Object.fromEntries(
      Object.keys(rows[0] ?? {}).map((k) => [k, round1(rows.reduce((s, x) => s + x[k]!, 0) / rows.length)]),
    );
  };
  return {
    samples: latencies.length,
    // Receipts that never came within 60 s (the percentiles count only the ones that did).
    missingReceipts,
    p50Ms: round1(quantile(latencies, 0.5)),
    p99Ms: round1(quantile(latencies, 0.99)),
    maxMs: round1(latencies.at(-1) ?? NaN),
    medianOfPerChangeP99Ms: round1(median(perChange.map((c) => c['p99Ms'] as number))),
    targetP99Ms: 1000,
    meanStagesMs: meanOf('stagesMs'),
    meanCpuMsPerChange: meanOf('cpuMs'),
    perChange,
  };
}

const link = {
  natsNodes: nats.cluster.nodes.length,
  streamReplicas: Number(nats.hubEnv['FLOTILLA_NATS_REPLICAS']),
  tls: true,
  auth: 'operator mode: an account and a user JWT per agent (ADR 0012)',
  joinSeconds,
};
const machine = (): Record<string, unknown> => ({
  cpus: os.cpus().length,
  // The machine is shared: load averages (1, 5, 15 min) when the run started and ended.
  loadAverageAtStart: loadAtStart,
  loadAverageAtEnd: os.loadavg().map(round1),
});
const resultsFile = path.join(here, '..', 'results', EXPERIMENT ? `hub-${EXPERIMENT}.json` : 'hub.json');
async function finish(result: Record<string, unknown>): Promise<never> {
  console.log(JSON.stringify(result, null, 2));
  mkdirSync(path.dirname(resultsFile), { recursive: true });
  // Formatted as the repository's prettier check wants it.
  writeFileSync(resultsFile, await format(JSON.stringify(result), { parser: 'json' }));
  await request({ type: 'stop' }, 'stopped');
  agentsProc.removeAllListeners('exit');
  agentsProc.kill();
  await t.hub.close();
  await t.db.close();
  await nats.stop();
  process.exit(0);
}

const setups: ConsumerSetup[] = [
  { memory: false, replicas: 0 },
  { memory: true, replicas: 0 },
  { memory: true, replicas: 1 },
];
const distributionSeries: Record<string, unknown>[] = [];
if (COMPARE_CONSUMERS) {
  for (const [i, setup] of setups.entries()) {
    if (i > 0) {
      await request({ type: 'pause' }, 'paused');
      await swapConsumers(setup);
      await request({ type: 'resume' }, 'resumed');
    }
    console.log(`[bench] agent durables: ${describeSetup(setup)}`);
    distributionSeries.push({ agentDurables: describeSetup(setup), ...(await distribution()) });
  }
}
const restWriteToReceiptAtEveryAgent = COMPARE_CONSUMERS ? distributionSeries : await distribution();

// 2. Status ingestion. The hub keeps only reports on objects it placed (status admission), so
// REPORTS_PER_AGENT more workloads are placed on every cluster first, as a fleet carrying that many
// would have; every agent then reports on each, with the generation it received.
const total = AGENTS * REPORTS_PER_AGENT;
const objectNames = Array.from({ length: REPORTS_PER_AGENT }, (_, j) => `obj-${j}`);
const tPlace = now();
for (const name of objectNames) {
  await httpRest('POST', '/api/v1/workloads', {
    kind: 'CloneSet',
    name,
    namespace: 'bench',
    spec: cloneSetSpec(1),
    placement: { clusterSelector: { matchLabels: { bench: 'yes' } } },
  });
}
const placeDeadline = Date.now() + 300_000;
while (objectReceipts < total && Date.now() < placeDeadline) await sleep(20);
if (objectReceipts < total) throw new Error(`only ${objectReceipts} of ${total} placements reached the agents`);
const placedSeconds = round1((now() - tPlace) / 1000);
console.log(`[bench] ${REPORTS_PER_AGENT} more workloads placed on ${AGENTS} clusters in ${placedSeconds} s`);
/** The hub's status durable replaced by one of `setup` (a new one delivers what the stream holds). */
async function swapHubConsumer(setup: ConsumerSetup): Promise<void> {
  const jsm = await jetstreamManager(t.hub.nc);
  const { config } = await jsm.consumers.info(STATUS_STREAM, HUB_STATUS_CONSUMER);
  await jsm.consumers.delete(STATUS_STREAM, HUB_STATUS_CONSUMER);
  await jsm.consumers.add(STATUS_STREAM, {
    ...config,
    mem_storage: setup.memory,
    ...(setup.replicas ? { num_replicas: setup.replicas } : {}),
  });
}
const ingestion = async (
  phase: 'live' | 'backlog',
  beforeDrain?: () => Promise<void>,
): Promise<Record<string, unknown>> => {
  const loadBefore = load1();
  let published: Record<string, unknown> | undefined;
  if (phase === 'backlog') {
    // Reports already in the stream while the hub's consumer is stopped; then the hub drains them.
    await t.hub.ingest!.stop();
    await t.db.pool.query("delete from object_status where namespace = 'bench'");
    published = await request({ type: 'report', names: objectNames }, 'reported');
    await beforeDrain?.();
  }
  const stagesBefore = await histogramSums(t);
  const cpuBefore = await markCpu();
  const t0 = now();
  if (phase === 'backlog') await t.hub.ingest!.start();
  else published = await request({ type: 'report', names: objectNames }, 'reported');
  const stored = await waitStored(t, total);
  const seconds = (now() - t0) / 1000;
  const cpu = await cpuSince(cpuBefore);
  const out = {
    load1: loadBefore,
    stored,
    seconds: round1(seconds),
    reportsPerSecond: Math.round(stored / seconds),
    agentsPublishedInSeconds: round1(Number(published!['ms']) / 1000),
    hubStagesMs: stageMs(stagesBefore, await histogramSums(t), STATUS_STAGES),
    cpuMsPer1000Reports: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, round1((v * 1000) / stored)])),
  };
  console.log(`[bench] ingestion ${phase}: ${JSON.stringify(out)}`);
  return out;
};
if (COMPARE_CONSUMERS) {
  // The hub's own rate draining a backlog, once per setup of its status durable.
  const drains: Record<string, unknown>[] = [];
  for (const setup of setups) {
    console.log(`[bench] hub status durable: ${describeSetup(setup)}`);
    drains.push({ hubDurable: describeSetup(setup), ...(await ingestion('backlog', () => swapHubConsumer(setup))) });
  }
  await finish({
    measuredAt: new Date().toISOString(),
    machine: machine(),
    agents: AGENTS,
    link,
    warmupChanges: WARMUP,
    changes: CHANGES,
    restWriteToReceiptAtEveryAgent,
    statusIngestion: { reports: total, placedWorkloadsToEveryAgentSeconds: placedSeconds, backlogDrain: drains },
  });
}
const live = await ingestion('live');
const backlog = await ingestion('backlog');

await finish({
  measuredAt: new Date().toISOString(),
  machine: machine(),
  agents: AGENTS,
  link,
  agentConsumerStorage: MEMORY_CONSUMERS ? 'memory (experiment)' : 'file (as the hub creates it)',
  agentConsumerReplicas: CONSUMER_REPLICAS
    ? `${CONSUMER_REPLICAS} (experiment)`
    : "the stream's (as the hub creates them)",
  warmupChanges: WARMUP,
  changes: CHANGES,
  restWriteToReceiptAtEveryAgent,
  statusIngestion: {
    reports: total,
    // Setup of this phase: REPORTS_PER_AGENT workloads created by REST and received by every agent.
    placedWorkloadsToEveryAgentSeconds: placedSeconds,
    whileAgentsPublish: live,
    backlogDrain: backlog,
    targetReportsPerSecond: 10_000,
  },
});
