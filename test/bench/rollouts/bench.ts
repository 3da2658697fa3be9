// Rollout scheduler benchmark (real Postgres, the hub app via inject, the real scheduler running
// on its own timer; SIMULATED agents that report healthy as soon as they are sent a revision, the
// way status ingestion would store it, and kick the scheduler as ingestion does).
//   1. one 3-wave rollout over N clusters (default 200) with a soak per wave: wall time minus the
//      configured soak = scheduler overhead (target ≤ 5 s);
//   2. M concurrent rollouts (default 50 workloads on a 20-cluster fleet), 3 waves each, plus the
//      cost of one scheduler tick over all of them (every rollout changing; nothing changing);
//   3. the rollout of 1 with metric analysis on every wave (issue 26): a REAL Prometheus scrapes
//      one test exporter per simulated cluster (the same exporter under N `cluster` labels) and
//      the hub's analysis runner queries it for every cluster; wall time minus soak and the
//      analysis's own time ((count - 1) × interval per wave) = overhead (target ≤ 5 s).
// Writes test/bench/results/rollouts.json; with BENCH_SCENARIOS (e.g. `analysis`, comma-separated)
// only those run and the file's other scenarios are kept.
// Run: npm run bench:rollouts -- [clusters] [rollouts] [soakSeconds]
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startExporter, startPrometheus } from '@flotilla/test';
import {
  agentsReport,
  createHarness,
  getRollout,
  joinFleet,
  rolloutWorkload,
  startRollout,
  type Harness,
} from '../../integration/rollouts/harness.js';

const CLUSTERS = Number(process.argv[2] ?? 200);
const ROLLOUTS = Number(process.argv[3] ?? 50);
const SOAK_SECONDS = Number(process.argv[4] ?? 2);
const TICK_MS = 1000;
const here = path.dirname(fileURLToPath(import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const TERMINAL = new Set(['Succeeded', 'Failed', 'Aborted', 'RolledBack']);

function strategy(n: number, soakSeconds: number, analysis?: unknown) {
  const canary = 1;
  const second = Math.max(1, Math.floor(n * 0.2));
  const ring = (i: number): string => (i === 1 ? '0' : i <= canary + second ? '1' : '2');
  return {
    ring,
    strategy: {
      waves: [
        { name: 'canary', clusters: { selector: { matchLabels: { ring: '0' } } }, soakSeconds, analysis },
        { name: 'ring-1', clusters: { selector: { matchLabels: { ring: '1' } } }, soakSeconds, analysis },
        { name: 'rest', soakSeconds, failureBudget: '5%', analysis },
      ],
    },
  };
}

/** Agents report healthy continuously (and kick the scheduler, as ingestion does) until stopped. */
function simulateAgents(h: Harness, workloads: () => string[]): () => Promise<void> {
  let stop = false;
  const loop = (async () => {
    while (!stop) {
      await agentsReport(h, workloads(), () => 'Healthy');
      h.scheduler.kick();
      await sleep(20);
    }
  })();
  return async () => {
    stop = true;
    await loop;
  };
}

async function waitAll(h: Harness, ids: string[], timeoutMs: number): Promise<Map<string, string>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const phases = new Map<string, string>();
    for (const id of ids) phases.set(id, (await getRollout(h, id)).phase);
    if ([...phases.values()].every((p) => TERMINAL.has(p)) || Date.now() > deadline) return phases;
    await sleep(50);
  }
}

/** One rollout of `wid` with the scheduler on its timer and agents reporting: its waves and wall time. */
async function rollOnce(h: Harness, wid: string, s: unknown) {
  h.scheduler.start();
  const stopAgents = simulateAgents(h, () => [wid]);
  const start = Date.now();
  const r = await startRollout(h, wid, s);
  const phases = await waitAll(h, [r.id], 10 * 60_000);
  const wallMs = Date.now() - start;
  await stopAgents();
  const final = await getRollout(h, r.id);
  return {
    waves: final.waves.map((w) => ({
      name: w.name,
      clusters: w.members.length,
      startedAt: w.startedAt,
      finishedAt: w.finishedAt,
    })),
    phase: phases.get(r.id),
    wallMs,
  };
}

async function single(): Promise<Record<string, unknown>> {
  const h = await createHarness('flotilla_bench_rollout', { realClock: true, tickMs: TICK_MS });
  try {
    const { ring, strategy: s } = strategy(CLUSTERS, SOAK_SECONDS);
    const t0 = Date.now();
    await joinFleet(h, 'b', CLUSTERS, (i) => ({ ring: ring(i) }));
    const wid = await rolloutWorkload(h, 'b');
    const setupMs = Date.now() - t0;
    const { waves, phase, wallMs } = await rollOnce(h, wid, s);
    const soakMs = 3 * SOAK_SECONDS * 1000;
    return {
      clusters: CLUSTERS,
      waves,
      phase,
      soakSecondsPerWave: SOAK_SECONDS,
      tickMs: TICK_MS,
      setupMs,
      wallMs,
      configuredSoakMs: soakMs,
      schedulerOverheadMs: wallMs - soakMs,
      targetOverheadMs: 5000,
    };
  } finally {
    await h.close();
  }
}

async function concurrent(): Promise<Record<string, unknown>> {
  const h = await createHarness('flotilla_bench_rollouts', { realClock: true, tickMs: TICK_MS });
  try {
    const fleet = 20;
    const { ring, strategy: s } = strategy(fleet, 1);
    await joinFleet(h, 'm', fleet, (i) => ({ ring: ring(i) }));
    const workloads: string[] = [];
    // Distinct workloads on the same fleet (rolloutWorkload names them after the prefix).
    for (let i = 0; i < ROLLOUTS; i++) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/v1/workloads',
        headers: { authorization: `Bearer ${h.tokens.operator}` },
        payload: {
          kind: 'CloneSet',
          name: `m-web-${i}`,
          namespace: 'default',
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'w' } },
            template: { metadata: { labels: { app: 'w' } }, spec: { containers: [{ name: 'm', image: 'r/app:v1' }] } },
          },
          placement: { clusterSelector: { matchLabels: { fleet: 'm' } } },
          updatePolicy: 'Rollout',
        },
      });
      const id = res.json<{ id: string }>().id;
      await h.app.inject({
        method: 'PUT',
        url: `/api/v1/workloads/${id}`,
        headers: { authorization: `Bearer ${h.tokens.operator}` },
        payload: {
          spec: {
            replicas: 1,
            selector: { matchLabels: { app: 'w' } },
            template: { metadata: { labels: { app: 'w' } }, spec: { containers: [{ name: 'm', image: 'r/app:v2' }] } },
          },
          placement: { clusterSelector: { matchLabels: { fleet: 'm' } } },
        },
      });
      workloads.push(id);
    }
    const start = Date.now();
    const ids: string[] = [];
    for (const w of workloads) ids.push((await startRollout(h, w, s)).id);
    const createMs = Date.now() - start;
    // The scheduler's cost per tick with every rollout active, measured before agents report:
    // the first tick starts all 50 canaries (50 write transactions); the second finds nothing
    // to do (no status yet), which is what most ticks of a real rollout look like.
    let t = performance.now();
    const first = await h.scheduler.tick();
    const firstTickMs = performance.now() - t;
    t = performance.now();
    const second = await h.scheduler.tick();
    const noopTickMs = performance.now() - t;
    h.scheduler.start();
    const stopAgents = simulateAgents(h, () => workloads);
    const phases = await waitAll(h, ids, 10 * 60_000);
    const wallMs = Date.now() - start;
    await stopAgents();
    const ticks: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      await h.scheduler.tick();
      ticks.push(performance.now() - t);
    }
    return {
      rollouts: ROLLOUTS,
      clustersEach: fleet,
      soakSecondsPerWave: 1,
      createAllMs: createMs,
      wallMs,
      configuredSoakMs: 3000,
      overheadMs: wallMs - 3000,
      succeeded: [...phases.values()].filter((p) => p === 'Succeeded').length,
      firstTick: { ms: Math.round(firstTickMs), stepped: first.filter((o) => o.changed).length },
      activeNoopTick: { ms: Math.round(noopTickMs * 10) / 10, stepped: second.filter((o) => o.changed).length },
      idleTickMs: Math.round(Math.min(...ticks) * 10) / 10,
    };
  } finally {
    await h.close();
  }
}

const METRIC = 'flotilla_test_error_ratio';
/** Analysis on every wave: one query per cluster, measured twice a second apart. */
const ANALYSIS = {
  queries: [
    {
      name: 'errors',
      query: `max(${METRIC}{cluster="{{cluster}}"})`,
      successCondition: 'result < 0.05',
      failureCondition: 'result >= 0.1',
    },
  ],
  intervalSeconds: 1,
  count: 2,
};

async function analysed(): Promise<Record<string, unknown>> {
  const h = await createHarness('flotilla_bench_analysis', { realClock: true, tickMs: TICK_MS });
  const exporter = await startExporter();
  exporter.set(METRIC, 0.01);
  const { ring, strategy: s } = strategy(CLUSTERS, SOAK_SECONDS, ANALYSIS);
  const names = Array.from({ length: CLUSTERS }, (_, i) => `a-${i + 1}`);
  // N targets of one exporter, told apart by their `cluster` label; scraped every 5 s so 200 of
  // them stay cheap. The value never changes, so any scrape answers every measurement.
  const prom = await startPrometheus({
    dir: mkdtempSync(path.join(os.tmpdir(), 'flotilla-bench-prometheus-')),
    targets: names.map((n) => ({ target: exporter.host, labels: { cluster: n } })),
    scrapeIntervalSeconds: 5,
  });
  try {
    const t0 = Date.now();
    await joinFleet(h, 'a', CLUSTERS, (i) => ({ ring: ring(i) }));
    for (const n of names) {
      await h.app.inject({
        method: 'PUT',
        url: `/api/v1/clusters/${n}/prometheus`,
        headers: { authorization: `Bearer ${h.tokens.operator}` },
        payload: { url: prom.url },
      });
    }
    const wid = await rolloutWorkload(h, 'a');
    await prom.waitForValue(`count(${METRIC})`, CLUSTERS, 60_000);
    const setupMs = Date.now() - t0;
    const { waves, phase, wallMs } = await rollOnce(h, wid, s);
    const soakMs = 3 * SOAK_SECONDS * 1000;
    const analysisMs = 3 * (ANALYSIS.count - 1) * ANALYSIS.intervalSeconds * 1000;
    const runs = await h.hub.pool.query<{ n: number; passed: number }>(
      `select count(*)::int as n, count(*) filter (where verdict = 'Passed')::int as passed from analysis_runs`,
    );
    return {
      clusters: CLUSTERS,
      analysis: { queries: ANALYSIS.queries.length, intervalSeconds: ANALYSIS.intervalSeconds, count: ANALYSIS.count },
      waves,
      phase,
      analysisRuns: runs.rows[0]!.n,
      analysisRunsPassed: runs.rows[0]!.passed,
      soakSecondsPerWave: SOAK_SECONDS,
      tickMs: TICK_MS,
      setupMs,
      wallMs,
      configuredSoakMs: soakMs,
      configuredAnalysisMs: analysisMs,
      overheadMs: wallMs - soakMs - analysisMs,
      targetOverheadMs: 5000,
    };
  } finally {
    await h.close();
    await prom.stop();
    await exporter.stop();
  }
}

const SCENARIOS: Record<string, () => Promise<Record<string, unknown>>> = {
  single,
  concurrent,
  analysis: analysed,
};
const chosen = (process.env.BENCH_SCENARIOS ?? Object.keys(SCENARIOS).join(',')).split(',').map((x) => x.trim());
for (const c of chosen) if (!SCENARIOS[c]) throw new Error(`BENCH_SCENARIOS: unknown scenario ${c}`);
const file = path.join(here, '../results/rollouts.json');
const previous = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};

// A partial run (BENCH_SCENARIOS) keeps the file's other scenarios and its top-level run details;
// each scenario carries when it ran and how busy the machine was.
const partial = chosen.length < Object.keys(SCENARIOS).length;
const loadBefore = os.loadavg();
const result: Record<string, unknown> = partial
  ? { ...previous }
  : {
      at: new Date().toISOString(),
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
      // The machine is shared: load averages (1, 5, 15 min) before and after say how busy it was.
      loadAverage: { before: loadBefore.map((l) => Math.round(l * 100) / 100), after: [] as number[] },
      note: 'simulated agents write status for every workload in one batch through the status repository (as ingestion does) and kick the scheduler; real Postgres, real scheduler on its timer; a tick reads all active rollouts and their observations in 5 queries and opens a transaction only for rollouts that change; analysis: a real Prometheus scraping one exporter per cluster label, queried by the hub for every cluster',
    };
const load1 = () => Math.round(os.loadavg()[0]! * 100) / 100;
for (const c of chosen) {
  const at = new Date().toISOString();
  const before = load1();
  const measured = await SCENARIOS[c]!();
  result[c] = { at, loadAverage1m: { before, after: load1() }, ...measured };
}
if (!partial) (result.loadAverage as { after: number[] }).after = os.loadavg().map((l) => Math.round(l * 100) / 100);
console.log(JSON.stringify(result, null, 2));
mkdirSync(path.dirname(file), { recursive: true });
writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
