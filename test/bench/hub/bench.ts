// Hub benchmark: 1,000 simulated agents (plain NATS clients speaking the agent protocol, each
// with its own scoped identity, durable consumer and inbox; in a worker thread, agents.ts) and
// one workload placed on all. Measures
//   1. REST write → receipt at every agent: p50/p99/max over several spec changes;
//   2. status ingestion into Postgres: reports/s while agents publish, and the rate at which the
//      hub drains a backlog of reports already in the stream.
// Prints a summary and writes test/bench/results/hub.json. Needs the local Postgres and the
// harness nats-server. The hub and the agents share this machine's cores.
// Run: npx tsx --conditions=@flotilla/source test/bench/hub/bench.ts [agents] [changes] [reportsPerAgent]
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { format } from 'prettier';
import { agentNatsUser } from '@flotilla/api';
import { bcryptHash } from '@flotilla/hub';
import { cloneSetSpec } from '../../integration/hub/fixtures.js';
import { rest, startFleetNats, startTestHub, type TestHub } from '../../integration/hub/fleet.js';

const AGENTS = Number(process.argv[2] ?? 1000);
const CHANGES = Number(process.argv[3] ?? 5);
const REPORTS_PER_AGENT = Number(process.argv[4] ?? 20);
const PASSWORD = 'bench-agent-password';
const here = path.dirname(fileURLToPath(import.meta.url));

const quantile = (sorted: number[], q: number): number =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const round1 = (n: number): number => Math.round(n * 10) / 10;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const now = (): number => performance.timeOrigin + performance.now();

/** Clusters and their credentials straight into Postgres (setup, not measured), then one NATS sync. */
async function seedClusters(t: TestHub, names: string[]): Promise<void> {
  const hash = await bcryptHash(PASSWORD, 4);
  await t.db.pool.query(
    `insert into clusters (name, labels, state, registration_secret_hash, registered_by, credentials_issued)
     select unnest($1::text[]), '{"bench":"yes"}'::jsonb, 'accepted', 'x', 'bench', true`,
    [names],
  );
  await t.db.pool.query(
    'insert into cluster_credentials (cluster_name, nats_user, password_hash) select unnest($1::text[]), unnest($2::text[]), $3',
    [names, names.map(agentNatsUser), hash],
  );
}

/** Total seconds the relay spent publishing (its histogram's sum). */
async function publishSeconds(t: TestHub): Promise<number> {
  const m = (await t.registry.getMetricsAsJSON()).find((x) => x.name === 'flotilla_hub_outbox_publish_seconds');
  const sum = (m?.values as { metricName?: string; value: number }[] | undefined)?.find((v) =>
    v.metricName?.endsWith('_sum'),
  );
  return sum?.value ?? 0;
}

async function countStored(t: TestHub): Promise<number> {
  const r = await t.db.pool.query<{ n: string }>(
    "select count(*) as n from object_status where namespace = 'bench' and name like 'obj-%' and generation = $1",
    [CHANGES + 1],
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

const nats = await startFleetNats();
const t = await startTestHub(nats);
const names = Array.from({ length: AGENTS }, (_, i) => `b${i}`);
await seedClusters(t, names);
const creds = await t.db.pool.query<{ cluster_name: string; nats_user: string; password_hash: string }>(
  'select cluster_name, nats_user, password_hash from cluster_credentials where revoked_at is null',
);
await nats.issuer.sync(
  creds.rows.map((r) => ({ cluster: r.cluster_name, user: r.nats_user, passwordHash: r.password_hash })),
);

// agents-worker.mjs registers tsx in the worker's thread; the source condition is a node flag.
const worker = new Worker(new URL('./agents-worker.mjs', import.meta.url), {
  execArgv: ['--conditions=@flotilla/source'],
});
const receipts = new Map<number, number[]>();
const waiters: { type: string; resolve: (m: Record<string, unknown>) => void }[] = [];
worker.on('message', (m: { type: string; items?: { revision: number; at: number }[] }) => {
  if (m.type === 'receipts') {
    for (const { revision, at } of m.items!) {
      const list = receipts.get(revision) ?? [];
      list.push(at);
      receipts.set(revision, list);
    }
    return;
  }
  const i = waiters.findIndex((w) => w.type === m.type);
  if (i >= 0) waiters.splice(i, 1)[0]!.resolve(m);
});
const request = (msg: Record<string, unknown>, reply: string): Promise<Record<string, unknown>> =>
  new Promise((resolve) => {
    waiters.push({ type: reply, resolve });
    worker.postMessage(msg);
  });

const loadAtStart = os.loadavg().map(round1);
const tSetup = performance.now();
await request({ type: 'start', url: nats.server.url, names, password: PASSWORD }, 'ready');
console.log(`[bench] ${AGENTS} agents connected and consuming in ${round1((performance.now() - tSetup) / 1000)} s`);

// 1. REST write → receipt at every agent.
const latencies: number[] = [];
const perChange: Record<string, unknown>[] = [];
let id = '';
for (let r = 1; r <= CHANGES; r++) {
  const body = { spec: cloneSetSpec(r), placement: { clusterSelector: { matchLabels: { bench: 'yes' } } } };
  const t0 = now();
  if (r === 1) {
    const created = await rest<{ id: string }>(t, 'POST', '/api/v1/workloads', t.operatorToken, {
      kind: 'CloneSet',
      name: 'bench-web',
      namespace: 'bench',
      ...body,
    });
    id = created.id;
  } else {
    await rest(t, 'PUT', `/api/v1/workloads/${id}`, t.operatorToken, body);
  }
  const restMs = now() - t0;
  const publishBefore = await publishSeconds(t);
  const deadline = Date.now() + 60_000;
  while ((receipts.get(r)?.length ?? 0) < AGENTS && Date.now() < deadline) await sleep(5);
  const lat = (receipts.get(r) ?? []).map((at) => at - t0).sort((a, b) => a - b);
  // When the relay had the last message of this change acknowledged by JetStream (same clock).
  const relayPublishMs = ((await publishSeconds(t)) - publishBefore) * 1000;
  // The relay marks rows in the transaction that published them, so wait for its commit.
  let publishedMs = NaN;
  for (let i = 0; i < 500 && Number.isNaN(publishedMs); i++) {
    const sent = await t.db.pool.query<{ at: Date | null }>(
      'select max(sent_at) as at from outbox where payload like $1 and not exists (select 1 from outbox where payload like $1 and sent_at is null)',
      [`%"revision":${r},%`],
    );
    if (sent.rows[0]?.at) publishedMs = sent.rows[0].at.getTime() - t0;
    else await sleep(10);
  }
  latencies.push(...lat);
  const row = {
    revision: r,
    restMs: round1(restMs),
    publishedMs: round1(publishedMs),
    relayPublishMs: round1(relayPublishMs),
    received: lat.length,
    p50Ms: round1(quantile(lat, 0.5)),
    p99Ms: round1(quantile(lat, 0.99)),
    lastMs: round1(lat.at(-1) ?? NaN),
  };
  perChange.push(row);
  console.log(`[bench] change ${r}: ${JSON.stringify(row)}`);
  await sleep(1000);
}
latencies.sort((a, b) => a - b);

// 2a. Ingestion while every agent reports on REPORTS_PER_AGENT distinct objects at once.
const total = AGENTS * REPORTS_PER_AGENT;
const tLive = now();
const published = await request(
  { type: 'report', perAgent: REPORTS_PER_AGENT, workloadId: id, generation: CHANGES + 1 },
  'reported',
);
const liveStored = await waitStored(t, total);
const liveSeconds = (now() - tLive) / 1000;
console.log(
  `[bench] live: ${liveStored}/${total} stored in ${round1(liveSeconds)} s (agents published in ${round1(Number(published['ms']) / 1000)} s)`,
);

// 2b. Backlog drain: reports already in the stream (hub consumer stopped), then the hub drains them.
await t.hub.ingest!.stop();
await t.db.pool.query("delete from object_status where namespace = 'bench'");
await request({ type: 'report', perAgent: REPORTS_PER_AGENT, workloadId: id, generation: CHANGES + 1 }, 'reported');
const tDrain = now();
await t.hub.ingest!.start();
const drained = await waitStored(t, total);
const drainSeconds = (now() - tDrain) / 1000;
console.log(`[bench] backlog: ${drained}/${total} stored in ${round1(drainSeconds)} s`);

const result = {
  measuredAt: new Date().toISOString(),
  // The machine is shared: load averages (1, 5, 15 min) when the run started and ended.
  machine: { cpus: os.cpus().length, loadAverageAtStart: loadAtStart, loadAverageAtEnd: os.loadavg().map(round1) },
  agents: AGENTS,
  changes: CHANGES,
  restWriteToReceiptAtEveryAgent: {
    samples: latencies.length,
    p50Ms: round1(quantile(latencies, 0.5)),
    p99Ms: round1(quantile(latencies, 0.99)),
    maxMs: round1(latencies.at(-1) ?? NaN),
    targetP99Ms: 1000,
    perChange,
  },
  statusIngestion: {
    reports: total,
    whileAgentsPublish: {
      stored: liveStored,
      seconds: round1(liveSeconds),
      reportsPerSecond: Math.round(liveStored / liveSeconds),
    },
    backlogDrain: {
      stored: drained,
      seconds: round1(drainSeconds),
      reportsPerSecond: Math.round(drained / drainSeconds),
    },
    targetReportsPerSecond: 5000,
  },
};
console.log(JSON.stringify(result, null, 2));
mkdirSync(path.join(here, '..', 'results'), { recursive: true });
// Formatted as the repository's prettier check wants it.
writeFileSync(path.join(here, '..', 'results', 'hub.json'), await format(JSON.stringify(result), { parser: 'json' }));

await request({ type: 'stop' }, 'stopped');
await worker.terminate();
await t.hub.close();
await t.db.close();
await nats.stop();
process.exit(0);
