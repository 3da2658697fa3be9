/**
 * The hub over real NATS (harness nats-server with per-cluster users issued by the hub) and
 * real Postgres, with agents played by plain NATS clients reading the durables the hub created
 * for them: per-cluster isolation, the outbox surviving a hub that dies between commit and
 * publish, status ingestion and its staleness guard, heartbeats, and malformed or foreign
 * messages being dropped and counted. Attacks on the link: nats-attacks.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckPolicy, jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect, jwtAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import {
  DESIRED_STREAM,
  PROTOCOL_VERSION,
  agentConsumerName,
  decodeDesired,
  desiredFilter,
  encodeMessage,
  statusSubject,
  type DesiredMessage,
  type StatusMessage,
} from '@flotilla/api';
import { joinFleet, memoryCredentialStore } from '@flotilla/agent';
import { createLogger, pruneSentOutbox } from '@flotilla/hub';
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

let nats: FleetNats;
let t: TestHub;
let credsA: JoinedCluster;
let credsB: JoinedCluster;
let ncA: NatsConnection;

beforeAll(async () => {
  nats = await startFleetNats();
  t = await startTestHub(nats);
  credsA = await joinCluster(t, 'iso-a', { env: 'test', team: 'a' });
  credsB = await joinCluster(t, 'iso-b', { env: 'test', team: 'b' });
  ncA = await connectAs(nats, credsA);
});

afterAll(async () => {
  await ncA?.close();
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
});

/** Everything currently in the agent's durable (acks as it goes). */
async function drainDesired(nc: NatsConnection, creds: JoinedCluster): Promise<DesiredMessage[]> {
  const js = jetstream(nc, { checkAPI: false, apiPrefix: creds.nats.apiPrefix });
  const consumer = await js.consumers.get(DESIRED_STREAM, creds.nats.consumer);
  const out: DesiredMessage[] = [];
  const batch = await consumer.fetch({ max_messages: 100, expires: 1000 });
  for await (const m of batch) {
    const d = decodeDesired(m.data);
    if (d.ok) out.push(d.value);
    m.ack();
  }
  return out;
}

/** Creates a CloneSet in `apps` through a hub's REST API, placed on the clusters `labels` select. */
function createCloneSet(
  hub: TestHub,
  name: string,
  replicas: number,
  labels: Record<string, string>,
): Promise<{ id: string }> {
  return rest<{ id: string }>(hub, 'POST', '/api/v1/workloads', hub.operatorToken, {
    kind: 'CloneSet',
    name,
    namespace: 'apps',
    spec: cloneSetSpec(replicas),
    placement: { clusterSelector: { matchLabels: labels } },
  });
}

function status(cluster: string, name: string, generation: number, observed: number, ready: number): StatusMessage {
  return {
    v: PROTOCOL_VERSION,
    cluster,
    kind: 'CloneSet',
    namespace: 'apps',
    name,
    workloadId: '',
    revision: 1,
    generation,
    observedGeneration: observed,
    counts: {
      replicas: 3,
      readyReplicas: ready,
      updatedReplicas: ready,
      updatedReadyReplicas: ready,
      availableReplicas: ready,
    },
    health: ready === 3 ? 'Healthy' : 'Progressing',
    message: '',
    reportedAt: new Date().toISOString(),
  };
}

function jsOf(nc: NatsConnection): JetStreamClient {
  return jetstream(nc, { checkAPI: false });
}

/** A heartbeat of cluster iso-a, sent now (optionally naming its link session). */
function heartbeatA(linkId?: string): Promise<unknown> {
  return jsOf(ncA).publish(
    'flotilla.heartbeat.iso-a',
    encodeMessage({
      v: PROTOCOL_VERSION,
      cluster: 'iso-a',
      agentVersion: '9.9.9',
      kubernetesVersion: 'v1.36.3',
      managedObjects: 1,
      sentAt: new Date().toISOString(),
      ...(linkId ? { linkId } : {}),
    }),
  );
}

describe('per-cluster NATS identities', () => {
  it("let cluster A read its own desired state but not B's", async () => {
    const created = await createCloneSet(t, 'iso-web', 1, { env: 'test' });
    expect(created.id).toBeTruthy();
    const mine = await eventually('A receives its desired object', async () => {
      const got = await drainDesired(ncA, credsA);
      return got.length > 0 ? got : undefined;
    });
    expect(mine.map((m) => [m.cluster, m.name])).toEqual([['iso-a', 'iso-web']]);

    const jsm = await jetstreamManager(ncA, { checkAPI: false });
    // Another cluster's filter, the whole stream, another cluster's durable: all refused.
    await expect(
      jsm.consumers.add(DESIRED_STREAM, {
        durable_name: credsA.nats.consumer,
        filter_subject: desiredFilter('iso-b'),
        ack_policy: AckPolicy.Explicit,
      }),
    ).rejects.toThrow();
    await expect(
      jsm.consumers.add(DESIRED_STREAM, {
        durable_name: 'sneaky',
        filter_subject: 'flotilla.desired.>',
        ack_policy: AckPolicy.Explicit,
      }),
    ).rejects.toThrow();
    await expect(jsm.consumers.info(DESIRED_STREAM, agentConsumerName('iso-b'))).rejects.toThrow();
    await expect(
      jsm.streams.getMessage(DESIRED_STREAM, { last_by_subj: 'flotilla.desired.iso-b.CloneSet.apps.iso-web' }),
    ).rejects.toThrow();

    // A plain subscription on B's subjects is a permissions violation: nothing is delivered.
    const errors: string[] = [];
    void (async () => {
      for await (const s of ncA.status()) if (s.type === 'error') errors.push(String(s.error));
    })();
    const sub = ncA.subscribe('flotilla.desired.iso-b.>');
    await eventually(
      'the server refuses the subscription',
      () => Promise.resolve(errors.some((e) => /Permissions Violation for Subscription/i.test(e))),
      10_000,
    );
    sub.unsubscribe();
  });

  it("do not let cluster A publish B's status or heartbeat", async () => {
    const js = jsOf(ncA);
    await expect(
      js.publish(
        statusSubject('iso-b', { kind: 'CloneSet', namespace: 'apps', name: 'iso-web' }),
        encodeMessage(status('iso-b', 'iso-web', 1, 1, 3)),
        {
          timeout: 2000,
        },
      ),
    ).rejects.toThrow();
    await expect(
      js.publish('flotilla.heartbeat.iso-b', new TextEncoder().encode('{}'), { timeout: 2000 }),
    ).rejects.toThrow();
    // Its own status goes through.
    await js.publish(
      statusSubject('iso-a', { kind: 'CloneSet', namespace: 'apps', name: 'iso-web' }),
      encodeMessage(status('iso-a', 'iso-web', 1, 1, 3)),
    );
    const rows = await t.db.pool.query('select cluster_name from object_status where name = $1 order by cluster_name', [
      'iso-web',
    ]);
    await eventually('A status stored', async () => {
      const r = await t.db.pool.query('select cluster_name from object_status where name = $1', ['iso-web']);
      return r.rows.some((x: { cluster_name: string }) => x.cluster_name === 'iso-a');
    });
    expect(rows.rows.every((x: { cluster_name: string }) => x.cluster_name !== 'iso-b')).toBe(true);
  });

  it('revoke the identity when the cluster is removed', async () => {
    const creds = await joinCluster(t, 'iso-gone', { env: 'none' });
    const nc = await connectAs(nats, creds);
    await nc.close();
    await rest(t, 'DELETE', '/api/v1/clusters/iso-gone', t.operatorToken);
    await eventually(
      'the removed identity is refused',
      async () => {
        try {
          const again = await connect({
            servers: creds.nats.servers,
            tls: nats.tls,
            authenticator: jwtAuthenticator(creds.nats.jwt, new TextEncoder().encode(creds.seed)),
            maxReconnectAttempts: 0,
          });
          await again.close();
          return false;
        } catch {
          return true;
        }
      },
      10_000,
    );
  });
});

describe('agent registration', () => {
  it('registers with the bootstrap token, waits for acceptance, claims once, then connects', async () => {
    const store = memoryCredentialStore();
    const joining = joinFleet({
      hubUrl: t.hub.url!,
      bootstrapToken: t.bootstrapToken,
      clusterName: 'joiner',
      labels: { env: 'test' },
      agentVersion: '0.1.0',
      kubernetesVersion: 'v1.36.3',
      store,
      logger: createLogger('silent'),
      pollIntervalMs: 100,
    });
    const pending = await eventually('the cluster is pending', async () => {
      const c = await rest<{ state: string }>(t, 'GET', '/api/v1/clusters/joiner', t.viewerToken).catch(
        () => undefined,
      );
      return c?.state === 'pending' ? c : undefined;
    });
    expect(pending.state).toBe('pending');
    await rest(t, 'POST', '/api/v1/clusters/joiner/accept', t.operatorToken);
    const creds = await joining;
    expect(creds.nats.consumer).toBe('agent-joiner');
    const saved = await store.load();
    expect(saved?.credentials?.nats.jwt).toBe(creds.nats.jwt);
    expect(saved?.seed).toBe(creds.seed);
    // A restarted agent resumes from its store without asking the hub again.
    expect(
      await joinFleet({
        hubUrl: 'http://127.0.0.1:1',
        bootstrapToken: 'x',
        clusterName: 'joiner',
        labels: {},
        agentVersion: '',
        kubernetesVersion: '',
        store,
        logger: createLogger('silent'),
      }),
    ).toEqual(creds);
    const nc = await connectAs(nats, creds);
    await nc.close();
  });
});

describe('status ingestion', () => {
  it('stores the newest status per object; stale reports never overwrite newer ones', async () => {
    const js = jsOf(ncA);
    // Generation 3 of 'order' on iso-a (created, changed twice): reports may name 1 to 3.
    const order = await createCloneSet(t, 'order', 1, { team: 'a' });
    for (const replicas of [2, 3]) {
      await rest(t, 'PUT', `/api/v1/workloads/${order.id}`, t.operatorToken, {
        spec: cloneSetSpec(replicas),
        placement: { clusterSelector: { matchLabels: { team: 'a' } } },
      });
    }
    const subject = statusSubject('iso-a', { kind: 'CloneSet', namespace: 'apps', name: 'order' });
    await js.publish(subject, encodeMessage(status('iso-a', 'order', 3, 3, 2)));
    await eventually('report stored', async () => {
      const r = await t.db.pool.query('select generation from object_status where name = $1', ['order']);
      return r.rows[0]?.generation === '3';
    });
    await js.publish(subject, encodeMessage(status('iso-a', 'order', 2, 9, 3))); // older generation
    await js.publish(subject, encodeMessage(status('iso-a', 'order', 3, 4, 1))); // same generation, later: wins
    await eventually('newest report stored', async () => {
      const r = await t.db.pool.query(
        'select generation, observed_generation, ready_replicas from object_status where name = $1',
        ['order'],
      );
      const row = r.rows[0] as { generation: string; observed_generation: string; ready_replicas: number };
      return row.observed_generation === '4' ? row : undefined;
    });
    const r = await t.db.pool.query('select generation, ready_replicas from object_status where name = $1', ['order']);
    expect(r.rows[0]).toEqual({ generation: '3', ready_replicas: 1 });
  });

  it('records heartbeats with versions and marks the cluster Online', async () => {
    await heartbeatA();
    const cluster = await eventually('heartbeat stored', async () => {
      const c = await rest<{ health: string; agentVersion: string; kubernetesVersion: string }>(
        t,
        'GET',
        '/api/v1/clusters/iso-a',
        t.viewerToken,
      );
      return c.health === 'Online' ? c : undefined;
    });
    expect(cluster).toMatchObject({ agentVersion: '9.9.9', kubernetesVersion: 'v1.36.3' });
  });

  it("republishes a cluster's live desired objects once when its agent link restarts", async () => {
    const beat = (linkId: string): Promise<unknown> => heartbeatA(linkId);
    const storedLink = async (): Promise<string | null> =>
      (await t.db.pool.query<{ id: string | null }>("select agent_link_id as id from clusters where name = 'iso-a'"))
        .rows[0]!.id;
    const mine = (ms: DesiredMessage[]): DesiredMessage[] => ms.filter((m) => m.name === 'relink');
    await createCloneSet(t, 'relink', 1, { team: 'a' });
    const first = await eventually('initial delivery', async () => mine(await drainDesired(ncA, credsA))[0]);

    // The link's first heartbeat: its new consumer delivered everything already.
    await beat('link-1');
    await eventually('link-1 stored', async () => (await storedLink()) === 'link-1');
    await beat('link-1');
    // A restarted link (new id): everything live comes again, same generation; once.
    await beat('link-2');
    const again = await eventually('republished', async () => mine(await drainDesired(ncA, credsA))[0]);
    expect(again).toMatchObject({ generation: first.generation, revision: first.revision, deleted: false });
    expect(again.manifest).toEqual(first.manifest);
    await beat('link-2');
    await eventually('link-2 heartbeat processed', async () => (await storedLink()) === 'link-2');
    await new Promise((r) => setTimeout(r, 500));
    expect(mine(await drainDesired(ncA, credsA))).toEqual([]);
  });

  it('drops malformed and foreign messages, counts them, and keeps working', async () => {
    const js = jsOf(ncA);
    await createCloneSet(t, 'junk', 1, { team: 'a' }); // placed: its valid report is stored
    const subject = statusSubject('iso-a', { kind: 'CloneSet', namespace: 'apps', name: 'junk' });
    const before = await metricValue(t.registry, 'flotilla_hub_nats_messages_dropped_total');
    await js.publish(subject, new TextEncoder().encode('{not json'));
    await js.publish(
      subject,
      encodeMessage({ ...status('iso-a', 'junk', 1, 1, 1), counts: undefined } as unknown as StatusMessage),
    );
    await js.publish(subject, encodeMessage(status('iso-b', 'junk', 1, 1, 1))); // claims to be B
    await js.publish(
      statusSubject('iso-a', { kind: 'CloneSet', namespace: 'apps', name: 'other' }),
      encodeMessage(status('iso-a', 'junk', 1, 1, 1)),
    );
    await js.publish('flotilla.status.iso-a.not-a-valid-subject', new TextEncoder().encode('{}'));
    await eventually(
      'five drops counted',
      async () => (await metricValue(t.registry, 'flotilla_hub_nats_messages_dropped_total')) - before >= 5,
    );
    expect(
      await metricValue(t.registry, 'flotilla_hub_nats_messages_dropped_total', { reason: 'json' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      await metricValue(t.registry, 'flotilla_hub_nats_messages_dropped_total', { reason: 'schema' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      await metricValue(t.registry, 'flotilla_hub_nats_messages_dropped_total', { reason: 'foreign' }),
    ).toBeGreaterThanOrEqual(2);
    const junk = await t.db.pool.query("select count(*)::int as n from object_status where name in ('junk', 'other')");
    expect(junk.rows[0].n).toBe(0);
    // Still alive: a valid report after the junk is stored.
    await js.publish(subject, encodeMessage(status('iso-a', 'junk', 1, 1, 3)));
    await eventually('valid report after junk stored', async () => {
      const r = await t.db.pool.query("select count(*)::int as n from object_status where name = 'junk'");
      return r.rows[0].n === 1;
    });
  });
});

describe('outbox', () => {
  it('delivers a change committed by a hub that died before publishing it', async () => {
    // A second hub on the same database that never publishes: it commits, then "dies".
    const crashed = await startTestHub(nats, { relay: false, db: t.db });
    await t.hub.relay.stop(); // keep the live hub's relay out of it until the "restart"
    const created = await createCloneSet(crashed, 'outbox-web', 4, { team: 'b' });
    const pending = await t.db.pool.query('select count(*)::int as n from outbox where sent_at is null');
    expect(pending.rows[0].n).toBeGreaterThan(0);
    await crashed.hub.close();

    const ncB = await connectAs(nats, credsB);
    try {
      expect((await drainDesired(ncB, credsB)).filter((m) => m.name === 'outbox-web')).toEqual([]);
      // "Restart": a hub with a relay on the same database publishes what was committed.
      const restarted = await startTestHub(nats, { db: t.db });
      try {
        const got = await eventually('B receives the committed change', async () => {
          const msgs = (await drainDesired(ncB, credsB)).filter((m) => m.name === 'outbox-web');
          return msgs.length > 0 ? msgs : undefined;
        });
        expect(got[0]).toMatchObject({ workloadId: created.id, deleted: false, generation: 1 });
        expect((got[0]!.manifest as { spec: { replicas: number } }).spec.replicas).toBe(4);
        const left = await t.db.pool.query('select count(*)::int as n from outbox where sent_at is null');
        expect(left.rows[0].n).toBe(0);
      } finally {
        await restarted.hub.close();
      }
    } finally {
      await ncB.close();
      t.hub.relay.start();
    }
  });

  it('publishes rows handed over in memory together with rows only the table holds, newest per object', async () => {
    await t.hub.relay.stop();
    const writer = await startTestHub(nats, { relay: false, db: t.db });
    const ncB = await connectAs(nats, credsB);
    try {
      await drainDesired(ncB, credsB);
      // Generation 1 from a replica that never publishes: this relay does not hold it.
      const created = await createCloneSet(writer, 'handoff-web', 1, { team: 'b' });
      // Generation 2 through this hub: handed to its (stopped) relay after commit.
      await rest(t, 'PUT', `/api/v1/workloads/${created.id}`, t.operatorToken, {
        spec: cloneSetSpec(2),
        placement: { clusterSelector: { matchLabels: { team: 'b' } } },
      });
      const published = await metricValue(t.registry, 'flotilla_hub_outbox_published_total');
      t.hub.relay.start();
      const got = await eventually('B receives generation 2', async () => {
        const msgs = (await drainDesired(ncB, credsB)).filter((m) => m.name === 'handoff-web');
        return msgs.length > 0 ? msgs : undefined;
      });
      expect(got.map((m) => m.generation)).toEqual([2]);
      expect((got[0]!.manifest as { spec: { replicas: number } }).spec.replicas).toBe(2);
      await eventually('both rows marked sent', async () => {
        const left = await t.db.pool.query('select count(*)::int as n from outbox where sent_at is null');
        return left.rows[0].n === 0;
      });
      // One message for the two rows: the older one was superseded within the batch.
      expect((await metricValue(t.registry, 'flotilla_hub_outbox_published_total')) - published).toBe(1);
    } finally {
      await ncB.close();
      await writer.hub.close();
    }
  });

  it('does not publish again rows it holds when another replica already sent them', async () => {
    await t.hub.relay.stop();
    try {
      await createCloneSet(t, 'handoff-elsewhere', 1, { team: 'b' });
      // Another replica's relay publishes and marks the rows this hub's relay still holds.
      const other = await startTestHub(nats, { db: t.db });
      try {
        await eventually('the other replica sent everything', async () => {
          const left = await t.db.pool.query('select count(*)::int as n from outbox where sent_at is null');
          return left.rows[0].n === 0;
        });
      } finally {
        await other.hub.close();
      }
      const published = await metricValue(t.registry, 'flotilla_hub_outbox_published_total');
      expect(await t.hub.relay.drain()).toBe(0);
      expect(await metricValue(t.registry, 'flotilla_hub_outbox_published_total')).toBe(published);
    } finally {
      t.hub.relay.start();
    }
  });

  it('deletes rows sent longer ago than the retention, never unsent ones', async () => {
    await t.hub.relay.stop();
    // A replica that never publishes leaves its rows unsent, however old they get.
    const writer = await startTestHub(nats, { relay: false, db: t.db });
    try {
      await createCloneSet(writer, 'prune-unsent', 1, { team: 'b' });
      await t.db.pool.query(`update outbox set created_at = now() - interval '2 days' where sent_at is null`);
      const unsent = (await t.db.pool.query<{ id: string }>('select id from outbox where sent_at is null')).rows;
      expect(unsent.length).toBeGreaterThan(0);
      const sentRow = async (msgId: string, age: string): Promise<string> =>
        (
          await t.db.pool.query<{ id: string }>(
            `insert into outbox (subject, msg_id, payload, sent_at) values ('prune.test', $1, '{}', now() - $2::interval)
             returning id`,
            [msgId, age],
          )
        ).rows[0]!.id;
      const exists = async (id: string): Promise<boolean> =>
        (await t.db.pool.query('select 1 from outbox where id = $1', [id])).rowCount === 1;

      const old = await sentRow('prune-old', '2 hours');
      const recent = await sentRow('prune-recent', '0 seconds');
      expect(await pruneSentOutbox(t.db.db, 3600, 1000)).toBeGreaterThanOrEqual(1);
      expect(await exists(old)).toBe(false);
      expect(await exists(recent)).toBe(true);
      for (const r of unsent) expect(await exists(r.id)).toBe(true);

      // The relay prunes by itself, with the configured retention.
      const older = await sentRow('prune-older', '3 hours');
      const pruning = await startTestHub(nats, { db: t.db, outboxRetentionSeconds: 3600 });
      try {
        await eventually('the relay deletes the old sent row', async () => !(await exists(older)));
        expect(await exists(recent)).toBe(true);
        expect(await metricValue(pruning.registry, 'flotilla_hub_outbox_pruned_total')).toBeGreaterThanOrEqual(1);
      } finally {
        await pruning.hub.close();
      }
    } finally {
      await writer.hub.close();
      t.hub.relay.start();
    }
  });

  it("wakes another replica's relay at commit instead of waiting for its poll", async () => {
    await t.hub.relay.stop();
    // The writer never publishes; the other replica polls only once a minute.
    const writer = await startTestHub(nats, { relay: false, db: t.db });
    const relaying = await startTestHub(nats, { db: t.db, relayIntervalMs: 60_000 });
    const ncB = await connectAs(nats, credsB);
    try {
      await drainDesired(ncB, credsB);
      // Let the relaying replica's first pass end, so that only a notification can wake it.
      await new Promise((r) => setTimeout(r, 1000));
      await createCloneSet(writer, 'notify-web', 2, { team: 'b' });
      const got = await eventually(
        'B receives the change well before the next poll',
        async () => {
          const msgs = (await drainDesired(ncB, credsB)).filter((m) => m.name === 'notify-web');
          return msgs.length > 0 ? msgs : undefined;
        },
        30_000,
      );
      expect(got[0]).toMatchObject({ deleted: false, generation: 1 });
    } finally {
      await ncB.close();
      await writer.hub.close();
      await relaying.hub.close();
      t.hub.relay.start();
    }
  });
});
