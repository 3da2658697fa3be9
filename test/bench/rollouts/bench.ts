// Rollout scheduler benchmark (real Postgres, the hub app via inject, the real scheduler running
// on its own timer; SIMULATED agents that report healthy as soon as they are sent a revision, the
// way status ingestion would store it, and kick the scheduler as ingestion does).
//   1. one 3-wave rollout over N clusters (default 200) with a soak per wave: wall time minus the
//      configured soak = scheduler overhead (target ≤ 5 s);
//   2. M concurrent rollouts (default 50 workloads on a 20-cluster fleet), 3 waves each, plus the
//      cost of one scheduler tick over all of them (every rollout changing; nothing changing).
// Writes test/bench/results/rollouts.json.
// Run: npx tsx --conditions=@flotilla/source test/bench/rollouts/bench.ts [clusters] [rollouts] [soakSeconds]
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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

function strategy(n: number, soakSeconds: number) {
  const canary = 1;
  const second = Math.max(1, Math.floor(n * 0.2));
  const ring = (i: number): string => (i === 1 ? '0' : i <= canary + second ? '1' : '2');
  return {
    ring,
    strategy: {
      waves: [
        { name: 'canary', clusters: { selector: { matchLabels: { ring: '0' } } }, soakSeconds },
        { name: 'ring-1', clusters: { selector: { matchLabels: { ring: '1' } } }, soakSeconds },
        { name: 'rest', soakSeconds, failureBudget: '5%' },
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

async function single(): Promise<Record<string, unknown>> {
  const h = await createHarness('flotilla_bench_rollout', { realClock: true, tickMs: TICK_MS });
  try {
    const { ring, strategy: s } = strategy(CLUSTERS, SOAK_SECONDS);
    const t0 = Date.now();
    await joinFleet(h, 'b', CLUSTERS, (i) => ({ ring: ring(i) }));
    const wid = await rolloutWorkload(h, 'b');
    const setupMs = Date.now() - t0;
    h.scheduler.start();
    const stopAgents = simulateAgents(h, () => [wid]);
    const start = Date.now();
    const r = await startRollout(h, wid, s);
    const phases = await waitAll(h, [r.id], 10 * 60_000);
    const wallMs = Date.now() - start;
    await stopAgents();
    const final = await getRollout(h, r.id);
    const soakMs = 3 * SOAK_SECONDS * 1000;
    return {
      clusters: CLUSTERS,
      waves: final.waves.map((w) => ({
        name: w.name,
        clusters: w.members.length,
        startedAt: w.startedAt,
        finishedAt: w.finishedAt,
      })),
      phase: phases.get(r.id),
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

const loadBefore = os.loadavg();
const result = {
  at: new Date().toISOString(),
  machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version },
  // The machine is shared: load averages (1, 5, 15 min) before and after say how busy it was.
  loadAverage: { before: loadBefore.map((l) => Math.round(l * 100) / 100), after: [] as number[] },
  note: 'simulated agents write status for every workload in one batch through the status repository (as ingestion does) and kick the scheduler; real Postgres, real scheduler on its timer; a tick reads all active rollouts and their observations in 5 queries and opens a transaction only for rollouts that change',
  single: await single(),
  concurrent: await concurrent(),
};
result.loadAverage.after = os.loadavg().map((l) => Math.round(l * 100) / 100);
console.log(JSON.stringify(result, null, 2));
mkdirSync(path.join(here, '../results'), { recursive: true });
writeFileSync(path.join(here, '../results/rollouts.json'), JSON.stringify(result, null, 2) + '\n');
