/**
 * A running hub under faults of its dependencies: a PRIVATE PostgreSQL server (never the shared
 * one) restarted and stopped under it, and its own NATS cluster restarted and frozen with SIGSTOP. The hub must
 * survive by itself — a connection lost while checked out (a transaction, the scheduler's lock
 * session) must not end the process — resume everything that stalled (relay, status ingestion,
 * scheduler, outbox listener), and tell the truth on /readyz meanwhile. A cluster's agent is a
 * plain NATS client with its real credentials (sim-agent.ts).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { startPrivatePostgres, type PrivatePostgres } from '@flotilla/test';
import { sql } from 'drizzle-orm';
import { eventually } from '../helpers/kube.js';
import { cloneSetSpec, migratedDatabase, type HubDb } from './fixtures.js';
import {
  connectAs,
  joinCluster,
  metricValue,
  rest,
  startFleetNats,
  startTestHub,
  type FleetNats,
  type TestHub,
  type JoinedCluster,
} from './fleet.js';
import { startSimAgent, type SimAgent } from './sim-agent.js';

let postgres: PrivatePostgres;
let db: HubDb;
let nats: FleetNats;
let t: TestHub;
let creds: JoinedCluster;
let nc: NatsConnection;
let agent: SimAgent;

beforeAll(async () => {
  postgres = await startPrivatePostgres({ name: 'postgres-restarts' });
  db = await migratedDatabase('flotilla_restarts', postgres);
  nats = await startFleetNats();
  t = await startTestHub(nats, {
    db,
    env: {
      FLOTILLA_READY_TIMEOUT_MS: '1000',
      FLOTILLA_NATS_PROBE_INTERVAL_MS: '500',
      FLOTILLA_ROLLOUT_TICK_MS: '200',
    },
  });
  creds = await joinCluster(t, 'restart-a', { fleet: 'restarts' });
  nc = await connectAs(nats, creds);
  agent = await startSimAgent(nc, creds, { intervalMs: 500 });
});

afterAll(async () => {
  await agent?.stop();
  await nc?.close();
  await t?.hub.close();
  await db?.close().catch(() => undefined);
  await nats?.stop();
  await postgres?.destroy();
});

async function readyz(): Promise<number> {
  return (await t.hub.app.inject({ method: 'GET', url: '/readyz' })).statusCode;
}

/** Sessions LISTENing for outbox notifications (the hub's listener; exactly one when healthy). */
async function listeners(): Promise<number> {
  const r = await db.pool.query<{ n: number }>(
    "select count(*)::int as n from pg_stat_activity where datname = current_database() and query = 'LISTEN flotilla_outbox'",
  );
  return r.rows[0]!.n;
}

/** After Postgres came back: ready, leading the scheduler again, listening again (once). */
async function recovered(): Promise<void> {
  await eventually('/readyz answers 200', async () => (await readyz()) === 200, 30_000);
  await eventually('the scheduler leads again', () => Promise.resolve(t.hub.scheduler.isLeader()), 30_000);
  await eventually('the outbox listener listens again', async () => (await listeners()) === 1, 30_000);
}

interface RolloutView {
  phase: string;
  clusters: { name: string; phase: string }[];
}

describe('Postgres restarts under a running hub', () => {
  it('are survived by the hub, which resumes by itself and is unready only while Postgres is down', async () => {
    await recovered();
    expect(t.hub.scheduler.isLeader()).toBe(true);

    // 1. The scheduler's leadership session (a checked-out client) loses its connection.
    await postgres.restart();
    await recovered();

    // 2. A transaction is open (its client checked out, between two statements) during the restart.
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tx = t.hub.db
      .transaction(async (q) => {
        await q.execute(sql`select 1`);
        await gate;
        await q.execute(sql`select 1`);
      })
      .then(
        () => 'committed',
        () => 'failed',
      );
    await sleep(200);
    await postgres.restart();
    release();
    expect(await tx).toBe('failed');
    await recovered();

    // 3. Down for a while: not ready, REST answers an error, heartbeats wait in NATS.
    await postgres.stop();
    await eventually('/readyz answers 503 while Postgres is down', async () => (await readyz()) === 503, 10_000);
    const refused = await t.hub.app.inject({
      method: 'POST',
      url: '/api/v1/workloads',
      headers: { authorization: `Bearer ${t.operatorToken}` },
      payload: {
        kind: 'CloneSet',
        name: 'down',
        namespace: 'apps',
        spec: cloneSetSpec(1),
        placement: { clusterSelector: { matchLabels: { fleet: 'restarts' } } },
      },
    });
    expect(refused.statusCode).toBeGreaterThanOrEqual(500);
    await sleep(2000);
    await postgres.start();
    await recovered();
    expect(await metricValue(t.registry, 'flotilla_hub_db_connections_lost_total')).toBeGreaterThanOrEqual(3);

    // Afterwards everything works again: a REST write reaches the agent over the relay, its
    // status comes back through ingestion, and the scheduler carries a rollout to the end.
    const w = await rest<{ id: string }>(t, 'POST', '/api/v1/workloads', t.operatorToken, {
      kind: 'CloneSet',
      name: 'after-restarts',
      namespace: 'apps',
      spec: cloneSetSpec(2, 'registry.local/app:v1'),
      placement: { clusterSelector: { matchLabels: { fleet: 'restarts' } } },
      updatePolicy: 'Rollout',
    });
    await eventually('the agent receives the new workload', () =>
      Promise.resolve([...agent.desired.values()].some((d) => d.workloadId === w.id)),
    );
    await rest(t, 'PUT', `/api/v1/workloads/${w.id}`, t.operatorToken, {
      spec: cloneSetSpec(2, 'registry.local/app:v2'),
      placement: { clusterSelector: { matchLabels: { fleet: 'restarts' } } },
    });
    const r = await rest<{ id: string }>(t, 'POST', `/api/v1/workloads/${w.id}/rollouts`, t.operatorToken, {
      strategy: { waves: [{ name: 'all', soakSeconds: 1 }] },
    });
    const final = await eventually(
      'the rollout succeeds',
      async () => {
        const v = await rest<RolloutView>(t, 'GET', `/api/v1/rollouts/${r.id}`, t.viewerToken);
        return ['Succeeded', 'Failed', 'RolledBack'].includes(v.phase) ? v : undefined;
      },
      60_000,
    );
    expect(final.phase).toBe('Succeeded');
    expect([...agent.desired.values()].find((d) => d.workloadId === w.id)?.revision).toBe(2);
  });
});

describe('a nats-server restart under a running hub', () => {
  it('is survived: the hub reconnects, ingestion and the relay resume by themselves', async () => {
    await nats.cluster.restart();
    await eventually('/readyz answers 200 after the restart', async () => (await readyz()) === 200, 30_000);
    const w = await rest<{ id: string }>(t, 'POST', '/api/v1/workloads', t.operatorToken, {
      kind: 'CloneSet',
      name: 'after-nats-restart',
      namespace: 'apps',
      spec: cloneSetSpec(1),
      placement: { clusterSelector: { matchLabels: { fleet: 'restarts' } } },
    });
    await eventually('its status comes back from the agent', async () => {
      const r = await db.pool.query('select 1 from object_status where workload_id = $1', [w.id]);
      return r.rowCount === 1;
    });
  });
});

describe('readiness', () => {
  it('is lost within seconds while nats-server is frozen, and back once it thaws', async () => {
    await eventually('ready', async () => (await readyz()) === 200, 30_000);
    nats.cluster.pause();
    try {
      await eventually('/readyz answers 503 while NATS is frozen', async () => (await readyz()) === 503, 5_000, 100);
    } finally {
      nats.cluster.resume();
    }
    await eventually('/readyz answers 200 after the thaw', async () => (await readyz()) === 200, 15_000);
  });
});
