/**
 * Rollouts against a real Postgres and the real hub app (inject) and scheduler, with SIMULATED
 * agents: they report status for the desired object they were sent (revision and generation from
 * desired_objects) through the same repository status ingestion writes to, and heartbeat through
 * the same heartbeat path. A fake clock drives soak times, deadlines and heartbeat freshness.
 */
import {
  createDesiredChanges,
  createOutbox,
  DEFAULT_REST_LIMITS,
  buildApp,
  createHubMetrics,
  createLogger,
  createRolloutScheduler,
  kruiseSpecValidator,
  recordHeartbeats,
  upsertStatuses,
  type HubMetrics,
  type RolloutScheduler,
} from '@flotilla/hub';
import { newAgentKey } from '@flotilla/api';
import type { FastifyInstance } from 'fastify';
import { Registry } from 'prom-client';
import { expect } from 'vitest';
import { call, cloneSetSpec, insertToken, migratedDatabase, type HubDb } from '../hub/fixtures.js';

export type Health = 'Healthy' | 'Progressing' | 'Degraded';

export interface RolloutView {
  id: string;
  phase: string;
  currentWave: string | null;
  message: string;
  targetRevision: number;
  previousRevision: number;
  waves: {
    name: string;
    phase: string;
    members: string[];
    startedAt: string | null;
    finishedAt: string | null;
    message: string;
  }[];
  clusters: {
    name: string;
    wave: string;
    phase: string;
    step: number;
    startedAt: string | null;
    healthySince: string | null;
    finishedAt: string | null;
    message: string;
    waitingFor: string | null;
    waitingUntil: string | null;
    desiredRevision: number | null;
    runningRevision: number | null;
    analysis?: {
      attempt: number;
      verdict: string;
      measurements: number;
      count: number;
      message: string;
      results: { name: string; value: number | null; outcome: string; message: string }[];
    } | null;
  }[];
  waits: Record<string, number>;
  revisions: { revision: number; clusters: number }[];
  skew: boolean;
}

export interface DesiredRow {
  cluster: string;
  revision: number;
  generation: number;
  manifest: { spec: { updateStrategy?: { partition?: number | string } } } | null;
}

export interface Harness {
  hub: HubDb;
  app: FastifyInstance;
  tokens: { admin: string; operator: string; viewer: string; bootstrap: string };
  scheduler: RolloutScheduler;
  now(): number;
  advance(ms: number): void;
  newScheduler(): RolloutScheduler;
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Use wall-clock time instead of the fake clock (benchmarks). */
  realClock?: boolean;
  tickMs?: number;
  /** The scheduler's metrics (default: none). */
  metrics?: HubMetrics;
  /** Where the scheduler's analysis runner reads Prometheus tokens by reference. */
  prometheusSecretsDir?: string;
}

export async function createHarness(prefix: string, opts: HarnessOptions = {}): Promise<Harness> {
  const hub = await migratedDatabase(prefix);
  const tokens = {
    admin: await insertToken(hub.pool, 'admin', 'admin'),
    operator: await insertToken(hub.pool, 'operator', 'operator'),
    viewer: await insertToken(hub.pool, 'viewer', 'viewer'),
    bootstrap: await insertToken(hub.pool, 'bootstrap', 'bootstrap'),
  };
  let clock = Date.now();
  const now = (): Date => new Date(opts.realClock ? Date.now() : clock);
  const app = await buildApp({
    db: hub.db,
    logger: createLogger('silent'),
    metrics: createHubMetrics(new Registry(), false),
    validate: kruiseSpecValidator,
    ready: () => Promise.resolve(true),
    options: {
      bodyLimitBytes: 256 * 1024,
      heartbeatTimeoutMs: 30_000,
      natsPublicUrls: [],
      // Fleets of dozens of simulated clusters join through one bootstrap token in a second.
      limits: { ...DEFAULT_REST_LIMITS, registrationsPerMinute: 10_000, pendingClustersPerToken: 10_000 },
    },
    now,
  });
  const newScheduler = (): RolloutScheduler =>
    createRolloutScheduler({
      db: hub.db,
      pool: hub.pool,
      logger: createLogger('silent'),
      heartbeatTimeoutMs: 30_000,
      tickMs: opts.tickMs ?? 1000,
      now,
      desired: createDesiredChanges(createOutbox({ db: hub.db })),
      ...(opts.metrics ? { metrics: opts.metrics } : {}),
      ...(opts.prometheusSecretsDir ? { prometheusSecretsDir: opts.prometheusSecretsDir } : {}),
    });
  const h: Harness = {
    hub,
    app,
    tokens,
    scheduler: newScheduler(),
    now: () => (opts.realClock ? Date.now() : clock),
    advance: (ms) => {
      clock += ms;
    },
    newScheduler,
    async close() {
      await h.scheduler.stop();
      await app.close();
      await hub.close();
    },
  };
  return h;
}

/** Registers and accepts clusters `${prefix}-1..n`, labelled fleet=prefix plus `labels(i)`. */
export async function joinFleet(
  h: Harness,
  prefix: string,
  n: number,
  labels: (i: number) => Record<string, string> = () => ({}),
): Promise<string[]> {
  const names: string[] = [];
  for (let i = 1; i <= n; i++) {
    const name = `${prefix}-${i}`;
    const reg = await call(h.app, 'POST', '/api/v1/clusters/register', h.tokens.bootstrap, {
      name,
      labels: { fleet: prefix, ...labels(i) },
      publicKey: newAgentKey().publicKey,
    });
    expect(reg.statusCode, reg.body).toBe(201);
    const acc = await call(h.app, 'POST', `/api/v1/clusters/${name}/accept`, h.tokens.operator);
    expect(acc.statusCode, acc.body).toBe(200);
    names.push(name);
  }
  await heartbeat(h, names);
  return names;
}

export async function heartbeat(h: Harness, clusters: readonly string[]): Promise<void> {
  await recordHeartbeats(
    h.hub.db,
    clusters.map((cluster) => ({ cluster, at: new Date(h.now()), agentVersion: 'sim', kubernetesVersion: 'v1.33.0' })),
  );
}

/** A 'Rollout' CloneSet on the fleet at revision 1, then a spec change to revision 2 (moves nobody). */
export async function rolloutWorkload(h: Harness, prefix: string): Promise<string> {
  const created = await call(h.app, 'POST', '/api/v1/workloads', h.tokens.operator, {
    kind: 'CloneSet',
    name: `${prefix}-web`,
    namespace: 'default',
    spec: cloneSetSpec(4, 'registry.local/app:v1'),
    placement: { clusterSelector: { matchLabels: { fleet: prefix } } },
    updatePolicy: 'Rollout',
  });
  expect(created.statusCode, created.body).toBe(201);
  const w = created.json<{ id: string; updatePolicy: string; stableRevision: number }>();
  expect(w).toMatchObject({ updatePolicy: 'Rollout', stableRevision: 1 });
  const before = await desired(h, w.id);
  const updated = await call(h.app, 'PUT', `/api/v1/workloads/${w.id}`, h.tokens.operator, {
    spec: cloneSetSpec(4, 'registry.local/app:v2'),
    placement: { clusterSelector: { matchLabels: { fleet: prefix } } },
  });
  expect(updated.statusCode, updated.body).toBe(200);
  expect(updated.json()).toMatchObject({ revision: 2, stableRevision: 1, updatePolicy: 'Rollout' });
  // A spec change of a 'Rollout' workload moves no cluster.
  expect(await desired(h, w.id)).toEqual(before);
  return w.id;
}

export async function desired(h: Harness, workloadId: string): Promise<DesiredRow[]> {
  const res = await h.hub.pool.query<{ cluster_name: string; revision: number; generation: string; manifest: never }>(
    'select cluster_name, revision, generation, manifest from desired_objects where workload_id = $1 order by cluster_name',
    [workloadId],
  );
  return res.rows.map((r) => ({
    cluster: r.cluster_name,
    revision: r.revision,
    generation: Number(r.generation),
    manifest: r.manifest,
  }));
}

/**
 * Every simulated agent not in `offline` heartbeats and reports on what it was sent, for one
 * workload or many at once (one read, one heartbeat batch, one status batch, as ingestion does).
 */
export async function agentsReport(
  h: Harness,
  workloadIds: string | readonly string[],
  health: (cluster: string, revision: number) => Health,
  offline: ReadonlySet<string> = new Set(),
): Promise<void> {
  const rows = (
    await h.hub.pool.query<{
      cluster_name: string;
      revision: number;
      generation: string;
      workload_id: string;
      kind: 'CloneSet';
      namespace: string;
      name: string;
    }>(
      `select d.cluster_name, d.revision, d.generation, d.workload_id, w.kind, w.namespace, w.name
         from desired_objects d join workloads w on w.id = d.workload_id
        where d.workload_id = any($1::uuid[])`,
      [typeof workloadIds === 'string' ? [workloadIds] : workloadIds],
    )
  ).rows.filter((r) => !offline.has(r.cluster_name));
  await heartbeat(h, [...new Set(rows.map((r) => r.cluster_name))]);
  await upsertStatuses(
    h.hub.db,
    rows.map((r) => {
      const state = health(r.cluster_name, r.revision);
      const generation = Number(r.generation);
      return {
        reportedAtMs: h.now(),
        storedAtMs: h.now(),
        streamSequence: 0,
        message: {
          v: 1,
          cluster: r.cluster_name,
          kind: r.kind,
          namespace: r.namespace,
          name: r.name,
          workloadId: r.workload_id,
          revision: r.revision,
          generation,
          observedGeneration: generation,
          counts: { replicas: 4, readyReplicas: 4, updatedReplicas: 4, updatedReadyReplicas: 4, availableReplicas: 4 },
          health: state,
          message: state === 'Degraded' ? 'pods never ready' : '',
          reportedAt: new Date(h.now()).toISOString(),
        },
      };
    }),
  );
}

export async function getRollout(h: Harness, id: string): Promise<RolloutView> {
  const res = await call(h.app, 'GET', `/api/v1/rollouts/${id}`, h.tokens.viewer);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<RolloutView>();
}

export async function startRollout(h: Harness, workloadId: string, strategy: unknown): Promise<RolloutView> {
  const res = await call(h.app, 'POST', `/api/v1/workloads/${workloadId}/rollouts`, h.tokens.operator, { strategy });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<RolloutView>();
}

export interface RunOptions {
  stepMs?: number;
  maxSteps?: number;
  health?: (cluster: string, revision: number) => Health;
  offline?: ReadonlySet<string>;
  /** Stop once this returns true (checked after each tick). */
  until?: (r: RolloutView) => boolean;
  /** Called after each tick with the desired rows (to record what clusters were ever sent). */
  onDesired?: (rows: DesiredRow[]) => void;
}

const TERMINAL = new Set(['Succeeded', 'Failed', 'Aborted', 'RolledBack']);

/** Ticks the clock, agents report, the scheduler steps; until `until` or a terminal phase. */
export async function run(h: Harness, workloadId: string, rolloutId: string, o: RunOptions = {}): Promise<RolloutView> {
  const until = o.until ?? ((r: RolloutView) => TERMINAL.has(r.phase));
  for (let i = 0; i < (o.maxSteps ?? 200); i++) {
    h.advance(o.stepMs ?? 5000);
    await agentsReport(h, workloadId, o.health ?? (() => 'Healthy'), o.offline);
    await h.scheduler.tick();
    o.onDesired?.(await desired(h, workloadId));
    const r = await getRollout(h, rolloutId);
    if (until(r)) return r;
  }
  throw new Error(`rollout ${rolloutId} did not reach the expected state`);
}

export async function control(h: Harness, id: string, what: string, body?: unknown) {
  return call(h.app, 'POST', `/api/v1/rollouts/${id}/${what}`, h.tokens.operator, body);
}

export async function eventsOf(h: Harness, id: string): Promise<{ message: string; cluster: string | null }[]> {
  const res = await h.hub.pool.query<{ message: string; cluster: string | null }>(
    'select message, cluster from rollout_events where rollout_id = $1 order by id',
    [id],
  );
  return res.rows;
}

/** Three waves over 5 clusters: canary (ring 0), ring 1 (2 clusters), the rest. */
export function threeWaves(extra: { soakSeconds?: number; approval?: string; failureBudget?: number | string } = {}) {
  return {
    waves: [
      { name: 'canary', clusters: { selector: { matchLabels: { ring: '0' } } }, soakSeconds: extra.soakSeconds ?? 30 },
      {
        name: 'ring-1',
        clusters: { selector: { matchLabels: { ring: '1' } } },
        soakSeconds: extra.soakSeconds ?? 30,
        progressDeadlineSeconds: 60,
        ...(extra.approval ? { approval: extra.approval } : {}),
        ...(extra.failureBudget !== undefined ? { failureBudget: extra.failureBudget } : {}),
      },
      { name: 'rest', soakSeconds: extra.soakSeconds ?? 30, maxConcurrency: 1 },
    ],
  };
}

/** ring 0 for cluster 1, ring 1 for 2–3, ring 2 for 4–5. */
export const rings = (i: number): Record<string, string> => ({ ring: i === 1 ? '0' : i <= 3 ? '1' : '2' });
