/**
 * Status intake against a hostile agent: a plain NATS client with cluster A's real credentials
 * and permissions publishes what a compromised agent could, and the hub (real NATS, real
 * Postgres) must keep only what can be true: reports about objects it placed on A, about
 * generations it sent, dated no further ahead than the clock skew; ordered by the stream, never
 * by what the agent wrote; and every drop counted once. Also: no single report can stall the
 * intake, a flood of 50,000 reports from one cluster is cut to its budget while REST and the other
 * cluster go on, and a flood of heartbeats with fresh link ids republishes at most once per interval.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { PROTOCOL_VERSION, encodeMessage, statusSubject, type StatusMessage } from '@flotilla/api';
import { eventually } from '../helpers/kube.js';
import { cloneSetSpec } from './fixtures.js';
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

const A = 'intake-a';
const B = 'intake-b';
const DROPPED = 'flotilla_hub_nats_messages_dropped_total';

let nats: FleetNats;
let t: TestHub;
let credsA: JoinedCluster;
let credsB: JoinedCluster;
let ncA: NatsConnection;
let ncB: NatsConnection;
let js: JetStreamClient;
let web: { id: string };
const agents: SimAgent[] = [];

beforeAll(async () => {
  nats = await startFleetNats();
  t = await startTestHub(nats, {
    // A budget the junk test (5,000 at once) fits in and the flood test (50,000) does not.
    env: {
      FLOTILLA_ROLLOUT_TICK_MS: '200',
      FLOTILLA_STATUS_REPORTS_PER_SECOND: '1000',
      FLOTILLA_STATUS_REPORTS_BURST: '6000',
    },
  });
  credsA = await joinCluster(t, A, { fleet: 'intake', team: 'a' });
  credsB = await joinCluster(t, B, { fleet: 'intake', team: 'b' });
  ncA = await connectAs(nats, credsA);
  ncB = await connectAs(nats, credsB);
  js = jetstream(ncA, { checkAPI: false });
  web = await rest<{ id: string }>(t, 'POST', '/api/v1/workloads', t.operatorToken, {
    kind: 'CloneSet',
    name: 'intake-web',
    namespace: 'apps',
    spec: cloneSetSpec(3),
    placement: { clusterSelector: { matchLabels: { team: 'a' } } },
  });
});

afterAll(async () => {
  for (const a of agents) await a.stop();
  await ncA?.close();
  await ncB?.close();
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
});

function report(name: string, patch: Partial<StatusMessage> = {}): StatusMessage {
  return {
    v: PROTOCOL_VERSION,
    cluster: A,
    kind: 'CloneSet',
    namespace: 'apps',
    name,
    workloadId: web.id,
    revision: 1,
    generation: 1,
    observedGeneration: 1,
    counts: { replicas: 3, readyReplicas: 3, updatedReplicas: 3, updatedReadyReplicas: 3, availableReplicas: 3 },
    health: 'Healthy',
    message: '',
    reportedAt: new Date().toISOString(),
    ...patch,
  };
}

const subjectOf = (name: string): string => statusSubject(A, { kind: 'CloneSet', namespace: 'apps', name });
const publish = (m: StatusMessage): Promise<unknown> => js.publish(subjectOf(m.name), encodeMessage(m));
const dropped = (reason?: string): Promise<number> => metricValue(t.registry, DROPPED, reason ? { reason } : {});

async function storedRow(name: string): Promise<{ ready: number; generation: string; message: string } | undefined> {
  const r = await t.db.pool.query<{ ready: number; generation: string; message: string }>(
    `select ready_replicas as ready, generation, message from object_status where cluster_name = $1 and name = $2`,
    [A, name],
  );
  return r.rows[0];
}

describe('status intake', () => {
  it('drops a report pinned to the end of time or ahead of the hub, and keeps storing real ones', async () => {
    await publish(report('intake-web', { message: 'real 1' }));
    await eventually(
      'the first real report is stored',
      async () => (await storedRow('intake-web'))?.message === 'real 1',
    );
    const before = { future: await dropped('future_reported_at'), gen: await dropped('future_generation') };

    // One subject keeps one message: each is processed before the next is sent.
    // The probe's message: a generation the hub never sent, dated 9999-12-31.
    await publish(report('intake-web', { generation: 9007199254740000, reportedAt: '9999-12-31T23:59:59Z' }));
    await eventually('dropped', async () => (await dropped('future_reported_at')) - before.future === 1);
    // Each half of it alone.
    await publish(report('intake-web', { generation: 9007199254740000, message: 'forged generation' }));
    await eventually('dropped', async () => (await dropped('future_generation')) - before.gen === 1);
    await publish(report('intake-web', { reportedAt: '9999-12-31T23:59:59Z', message: 'forged date' }));
    await eventually('dropped', async () => (await dropped('future_reported_at')) - before.future === 2);
    // A huge observedGeneration is only shown: the next report still replaces it.
    await publish(report('intake-web', { observedGeneration: 9007199254740000, message: 'forged observed' }));
    await eventually('stored', async () => (await storedRow('intake-web'))?.message === 'forged observed');
    await publish(
      report('intake-web', {
        counts: { replicas: 3, readyReplicas: 1, updatedReplicas: 1, updatedReadyReplicas: 1, availableReplicas: 1 },
        message: 'real 3',
      }),
    );
    await eventually(
      'the last real report is stored',
      async () => (await storedRow('intake-web'))?.message === 'real 3',
    );
    expect(await storedRow('intake-web')).toEqual({ ready: 1, generation: '1', message: 'real 3' });
    expect((await dropped('future_reported_at')) - before.future).toBe(2);
    expect((await dropped('future_generation')) - before.gen).toBe(1);
  });

  it('stores nothing about objects the hub never placed and counts each of N junk messages once', async () => {
    const N = 5000;
    const before = await dropped();
    const notPlacedBefore = await dropped('not_placed');
    const junk: Promise<unknown>[] = [];
    for (let i = 0; i < N; i++) {
      // Four in five are well-formed reports about objects nobody placed, one in five is not JSON.
      const name = `junk-${i}`;
      junk.push(i % 5 === 4 ? js.publish(subjectOf(name), new TextEncoder().encode('{junk')) : publish(report(name)));
      if (junk.length >= 500) await Promise.all(junk.splice(0));
    }
    await Promise.all(junk);
    await eventually('every junk message is counted', async () => (await dropped()) - before >= N, 60_000);
    // A valid report after the flood is stored: the flood is over and nothing else was dropped.
    await publish(report('intake-web', { message: 'after the flood' }));
    await eventually(
      'a report after the flood is stored',
      async () => (await storedRow('intake-web'))?.message === 'after the flood',
    );
    expect((await dropped()) - before).toBe(N);
    expect((await dropped('not_placed')) - notPlacedBefore).toBe((N * 4) / 5);
    const rows = await t.db.pool.query<{ n: number }>(
      "select count(*)::int as n from object_status where cluster_name = $1 and name like 'junk-%'",
      [A],
    );
    expect(rows.rows[0]!.n).toBe(0);
  });

  it('cuts a flood of 50,000 reports from A to its budget, counted by cluster, while REST and B go on', async () => {
    const LIMITED = 'flotilla_hub_status_rate_limited_total';
    const limitedBefore = await metricValue(t.registry, LIMITED, { cluster: A });
    const onB = await rest<{ id: string }>(t, 'POST', '/api/v1/workloads', t.operatorToken, {
      kind: 'CloneSet',
      name: 'intake-b-web',
      namespace: 'apps',
      spec: cloneSetSpec(1),
      placement: { clusterSelector: { matchLabels: { team: 'b' } } },
    });
    const jsB = jetstream(ncB, { checkAPI: false });
    const FLOOD = 50_000;
    let flooding = true;
    onTestFinished(() => {
      flooding = false;
    });
    // REST keeps answering through the flood.
    const restCalls = (async () => {
      let calls = 0;
      while (flooding) {
        await rest(t, 'GET', '/api/v1/clusters', t.viewerToken);
        calls++;
        await new Promise((r) => setTimeout(r, 100));
      }
      return calls;
    })();
    // Core publishes: as fast as A's connection goes, no acks awaited.
    for (let i = 0; i < FLOOD; i++) {
      ncA.publish(subjectOf(`flood-${i}`), encodeMessage(report(`flood-${i}`)));
      if (i % 5000 === 4999) await ncA.flush();
    }
    await ncA.flush();
    // B's report, sent in the middle of A's backlog, is stored.
    const bReport = { ...report('intake-b-web'), cluster: B, workloadId: onB.id, message: 'b during the flood' };
    await jsB.publish(
      statusSubject(B, { kind: 'CloneSet', namespace: 'apps', name: 'intake-b-web' }),
      encodeMessage(bReport),
    );
    await eventually(
      "B's report is stored",
      async () =>
        (
          await t.db.pool.query<{ message: string }>(
            'select message from object_status where cluster_name = $1 and name = $2',
            [B, 'intake-b-web'],
          )
        ).rows[0]?.message === 'b during the flood',
      60_000,
    );
    await eventually(
      "A's flood is consumed",
      async () => (await metricValue(t.registry, LIMITED, { cluster: A })) - limitedBefore > FLOOD / 2,
      60_000,
    );
    flooding = false;
    expect(await restCalls).toBeGreaterThan(0);
    // Over the budget, dropped and counted against A only.
    expect(await metricValue(t.registry, LIMITED, { cluster: B })).toBe(0);
    expect(await dropped('rate_limit')).toBeGreaterThanOrEqual(
      (await metricValue(t.registry, LIMITED, { cluster: A })) - limitedBefore,
    );
    // A's real reports get through again once the budget refills.
    await new Promise((r) => setTimeout(r, 1500));
    await publish(report('intake-web', { message: 'after the budget refilled' }));
    await eventually(
      'stored',
      async () => (await storedRow('intake-web'))?.message === 'after the budget refilled',
      60_000,
    );
  });

  it('is not stalled by a report Postgres cannot store', async () => {
    const before = await dropped('schema');
    const poison: Partial<StatusMessage>[] = [
      { revision: 2 ** 31 },
      { generation: 1e20 },
      { observedGeneration: 2 ** 63 },
      {
        counts: {
          replicas: 2 ** 40,
          readyReplicas: 0,
          updatedReplicas: 0,
          updatedReadyReplicas: 0,
          availableReplicas: 0,
        },
      },
      { reportedAt: '0000-01-01T00:00:00Z' },
      { message: 'nul \u0000 byte' },
    ];
    // The poison (on subjects of their own: one subject keeps one message) and a valid report in
    // one burst: they share a batch.
    await Promise.all([
      ...poison.map((p, i) => publish(report(`poison-${i}`, p))),
      publish(report('intake-web', { message: 'after the poison' })),
    ]);
    await eventually(
      'the valid report is stored',
      async () => (await storedRow('intake-web'))?.message === 'after the poison',
      15_000,
    );
    await eventually(
      'every poison report is dropped',
      async () => (await dropped('schema')) - before === poison.length,
    );
  });

  it('stores a message with a lone surrogate escape as U+FFFD, not stalling the batch', async () => {
    // JSON.parse turns the escape into a lone surrogate, which Postgres refuses inside JSON text.
    const raw = new TextEncoder().encode(
      JSON.stringify(report('intake-web', { message: 'MARK' })).replace('MARK', 'half \\ud800 pair'),
    );
    await js.publish(subjectOf('intake-web'), raw);
    await eventually(
      'stored with the replacement character',
      async () => (await storedRow('intake-web'))?.message === 'half \ufffd pair',
      15_000,
    );
  });

  it('does not let a forged report fail or roll back a rollout', async () => {
    // Cluster B's agent reports truthfully; before the rollout, B's credentials forge a report.
    agents.push(await startSimAgent(ncB, credsB, { intervalMs: 500 }));
    const w = await rest<{ id: string }>(t, 'POST', '/api/v1/workloads', t.operatorToken, {
      kind: 'CloneSet',
      name: 'intake-rollout',
      namespace: 'apps',
      spec: cloneSetSpec(2, 'registry.local/app:v1'),
      placement: { clusterSelector: { matchLabels: { team: 'b' } } },
      updatePolicy: 'Rollout',
    });
    await eventually('B reports the workload', async () => {
      const r = await t.db.pool.query('select 1 from object_status where cluster_name = $1 and workload_id = $2', [
        B,
        w.id,
      ]);
      return r.rowCount === 1;
    });
    await jetstream(ncB, { checkAPI: false }).publish(
      statusSubject(B, { kind: 'CloneSet', namespace: 'apps', name: 'intake-rollout' }),
      encodeMessage({
        ...report('intake-rollout'),
        cluster: B,
        workloadId: w.id,
        generation: 9007199254740000,
        observedGeneration: 9007199254740000,
        reportedAt: '9999-12-31T23:59:59Z',
        health: 'Degraded',
      }),
    );
    await rest(t, 'PUT', `/api/v1/workloads/${w.id}`, t.operatorToken, {
      spec: cloneSetSpec(2, 'registry.local/app:v2'),
      placement: { clusterSelector: { matchLabels: { team: 'b' } } },
    });
    const r = await rest<{ id: string }>(t, 'POST', `/api/v1/workloads/${w.id}/rollouts`, t.operatorToken, {
      strategy: { waves: [{ name: 'all', soakSeconds: 1, progressDeadlineSeconds: 20 }] },
    });
    const final = await eventually(
      'the rollout finishes',
      async () => {
        const v = await rest<{ phase: string; message: string }>(t, 'GET', `/api/v1/rollouts/${r.id}`, t.viewerToken);
        return ['Succeeded', 'Failed', 'RolledBack'].includes(v.phase) ? v : undefined;
      },
      60_000,
    );
    expect(final.phase, final.message).toBe('Succeeded');
  });
});

describe('agent link restarts', () => {
  const heartbeat = (linkId: string): Promise<unknown> =>
    js.publish(
      `flotilla.heartbeat.${A}`,
      encodeMessage({
        v: PROTOCOL_VERSION,
        cluster: A,
        agentVersion: 'flood',
        kubernetesVersion: 'v1.36.3',
        managedObjects: 1,
        sentAt: new Date().toISOString(),
        linkId,
      }),
    );
  const republishedRows = async (): Promise<number> =>
    (
      await t.db.pool.query<{ n: number }>(
        "select count(*)::int as n from outbox where subject like $1 and msg_id like '%@link-%'",
        [`flotilla.desired.${A}.%`],
      )
    ).rows[0]!.n;
  const linkRow = async (): Promise<{ link: string; republishedFor: string }> =>
    (
      await t.db.pool.query<{ link: string; republishedFor: string }>(
        'select agent_link_id as link, link_republished_for as "republishedFor" from clusters where name = $1',
        [A],
      )
    ).rows[0]!;

  it('republish at most once per interval under a flood of heartbeats with fresh link ids', async () => {
    await heartbeat('flood-0');
    await eventually('the first link is recorded', async () => (await linkRow()).link === 'flood-0');
    const published = await metricValue(t.registry, 'flotilla_hub_link_republishes_total', { result: 'published' });
    const rows = await republishedRows();
    const FLOOD = 200;
    for (let i = 1; i <= FLOOD; i++) await heartbeat(`flood-${i}`);
    await eventually('the last heartbeat is stored', async () => (await linkRow()).link === `flood-${FLOOD}`);
    // One message per live object of the cluster (intake-web), once.
    expect((await republishedRows()) - rows).toBe(1);
    expect(
      (await metricValue(t.registry, 'flotilla_hub_link_republishes_total', { result: 'published' })) - published,
    ).toBe(1);
    expect(
      await metricValue(t.registry, 'flotilla_hub_link_republishes_total', { result: 'deferred' }),
    ).toBeGreaterThan(0);
    expect((await linkRow()).republishedFor).not.toBe(`flood-${FLOOD}`);

    // Once the interval has passed, the newest link gets its republish (and only it).
    await t.db.pool.query("update clusters set link_republished_at = now() - interval '1 hour' where name = $1", [A]);
    await heartbeat(`flood-${FLOOD}`);
    await eventually(
      'the deferred republish happens',
      async () => (await linkRow()).republishedFor === `flood-${FLOOD}`,
    );
    expect((await republishedRows()) - rows).toBe(2);
  });
});
