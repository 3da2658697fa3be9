/**
 * Desired messages JetStream refuses, against a real nats-server (max_payload 128 KiB) with the
 * hub's rendered permissions and real Postgres. A message too large for the DESIRED stream's
 * max_msg_size or for max_payload holds back only its own outbox row: other objects of the same
 * and of other clusters still reach their agents. The refused row stays unsent and counted, is
 * retried with a backoff, is retired by a newer value of its object (never published over it),
 * is not repaired in a loop by the desired watch, and is delivered once the limits are raised
 * and the hub restarted; a new object refused because DESIRED is at max_msgs likewise, while
 * objects the stream holds still change. The REST API refuses such workloads when they are
 * written, naming the field and the sizes. Rows too large are written past that check through a REST app whose
 * limit is the body limit (as a hub with larger limits would have written them).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { DESIRED_STREAM, agentConsumerName, decodeDesired, desiredSubject } from '@flotilla/api';
import { ensureStreams, publishAll } from '@flotilla/hub';
import { startNats } from '@flotilla/test';
import { eventually } from '../helpers/kube.js';
import { restApp, type TestApp } from './fixtures.js';
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

const KIB = 1024;
const MAX_PAYLOAD = 128 * KIB;
/** The first hub: DESIRED takes messages of 40 KiB at most (the body limit stays 4 KiB below). */
const SMALL_STREAM = {
  FLOTILLA_HUB_BODY_LIMIT_BYTES: String(32 * KIB),
  FLOTILLA_DESIRED_STREAM_MAX_MSG_SIZE: String(40 * KIB),
};

/** A valid CloneSet spec carrying `blob` bytes in an environment variable. */
function specWith(blob: number, replicas = 1): Record<string, unknown> {
  const env = blob > 0 ? { env: [{ name: 'BLOB', value: 'x'.repeat(blob) }] } : {};
  return {
    replicas,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'main', image: 'registry.local/app:v1', ...env }] },
    },
  };
}

const place = (fleet: string) => ({ clusterSelector: { matchLabels: { rel: fleet } } });
const object = (name: string) => ({ kind: 'CloneSet', namespace: 'apps', name }) as const;
const key = (name: string): string => `CloneSet/apps/${name}`;

let nats: FleetNats;
let t: TestHub;
let writer: TestApp;
let admin: NatsConnection;
let jsm: JetStreamManager;
let ncA: NatsConnection;
let ncB: NatsConnection;
let agentA: SimAgent;
let agentB: SimAgent;
let credsA: JoinedCluster;

beforeAll(async () => {
  nats = await startFleetNats({ maxPayload: MAX_PAYLOAD });
  t = await startTestHub(nats, { env: SMALL_STREAM });
  writer = await restApp(t.db.db, 1024 * KIB);
  admin = await nats.connectAsHub();
  jsm = await jetstreamManager(admin);
  credsA = await joinCluster(t, 'rel-a', { rel: 'a' });
  const credsB = await joinCluster(t, 'rel-b', { rel: 'b' });
  ncA = await connectAs(nats, credsA);
  ncB = await connectAs(nats, credsB);
  agentA = await startSimAgent(ncA, credsA, { intervalMs: 3_600_000 });
  agentB = await startSimAgent(ncB, credsB, { intervalMs: 3_600_000 });
});

afterAll(async () => {
  await agentA?.stop();
  await agentB?.stop();
  await ncA?.close();
  await ncB?.close();
  await admin?.close();
  await writer?.app.close();
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
});

/** Creates a workload placed on the clusters labelled rel=`fleet`; returns its id. */
async function create(through: 'hub' | 'writer', name: string, fleet: string, blob: number): Promise<string> {
  const body = { kind: 'CloneSet', name, namespace: 'apps', spec: specWith(blob), placement: place(fleet) };
  if (through === 'hub') return (await rest<{ id: string }>(t, 'POST', '/api/v1/workloads', t.operatorToken, body)).id;
  const res = await writer.app.inject({
    method: 'POST',
    url: '/api/v1/workloads',
    headers: { authorization: `Bearer ${t.operatorToken}` },
    payload: body,
  });
  expect(res.statusCode).toBe(201);
  return res.json<{ id: string }>().id;
}

interface ErrorBody {
  error: { code: string; details: { path: string; message: string }[] };
}

interface UnsentRow {
  msg_id: string;
  attempts: number;
  refused_reason: string | null;
  held_back: boolean;
}

async function unsent(cluster: string, name: string): Promise<UnsentRow[]> {
  const r = await t.db.pool.query<UnsentRow>(
    `select msg_id, attempts, refused_reason, retry_at is not null as held_back
       from outbox where subject = $1 and sent_at is null order by id`,
    [desiredSubject(cluster, object(name))],
  );
  return r.rows;
}

/** Waits until an agent holds what `check` looks for. */
const received = (what: string, check: () => boolean): Promise<true> =>
  eventually(what, () => Promise.resolve(check() || undefined));

/** Waits until the relay marked the object's rows sent (it commits after the agent may have them). */
const allSent = (cluster: string, name: string): Promise<true> =>
  eventually(`${name} marked sent`, async () => (await unsent(cluster, name)).length === 0 || undefined);

/** Waits until the object's one unsent row was refused `attempts` times or more. */
const refused = (cluster: string, name: string, attempts = 1): Promise<UnsentRow> =>
  eventually(`${name} refused`, async () => {
    const rows = await unsent(cluster, name);
    return rows.length === 1 && rows[0]!.attempts >= attempts ? rows[0]! : undefined;
  });

/** The generation of the object's last message in the stream (retried while NATS reconnects). */
function lastGeneration(cluster: string, name: string): Promise<number | 'none'> {
  return eventually(`the stream answers for ${name}`, async () => {
    const m = await jsm.streams.getMessage(DESIRED_STREAM, { last_by_subj: desiredSubject(cluster, object(name)) });
    const d = m ? decodeDesired(m.data) : undefined;
    return d?.ok ? d.value.generation : 'none';
  });
}

describe('publishing a batch in which some messages are refused', () => {
  it('answers every message by itself against a real stream', async () => {
    const server = await startNats({ dir: path.join(nats.dir, 'bulk'), maxPayload: 8 * KIB });
    const nc = await connect({ servers: server.url, tls: server.tls });
    try {
      const limits = { maxBytes: 1024 * KIB, maxMsgs: 3, maxMsgSize: KIB };
      await ensureStreams(await jetstreamManager(nc), { replicas: 1, desired: limits, status: limits });
      const msg = (name: string, bytes: number, msgId = name) => ({
        subject: `flotilla.desired.x.CloneSet.apps.${name}`,
        data: new Uint8Array(bytes).fill(0x20),
        msgId,
      });
      const outcomes = await publishAll(nc, DESIRED_STREAM, [
        msg('a', 10),
        msg('b', 10),
        msg('c', 10),
        msg('d', 10), // a fourth subject: the stream holds 3 messages and discards new ones
        msg('a', 2 * KIB, 'a-2'), // above the stream's max_msg_size
        msg('b', 10 * KIB, 'b-2'), // above max_payload: the client refuses it before sending
        msg('c', 10), // c's id again: a duplicate, acknowledged
        { subject: 'nowhere.at.all', data: new Uint8Array(1), msgId: 'n' }, // no stream answers
      ]);
      expect(outcomes).toEqual([
        { result: 'acked' },
        { result: 'acked' },
        { result: 'acked' },
        { result: 'refused', reason: 'stream_full', detail: expect.stringMatching(/maximum messages exceeded/) },
        { result: 'refused', reason: 'message_size', detail: expect.stringMatching(/message size exceeds/) },
        { result: 'refused', reason: 'max_payload', detail: expect.stringMatching(/max_payload/) },
        { result: 'acked' },
        { result: 'unacked' },
      ]);
      // Nothing refused was stored; the rest was.
      const streams = (await jetstreamManager(nc)).streams;
      expect((await streams.info(DESIRED_STREAM)).state.messages).toBe(3);
      const last = await streams.getMessage(DESIRED_STREAM, {
        last_by_subj: 'flotilla.desired.x.CloneSet.apps.a',
      });
      expect(last!.data.length).toBe(10);
    } finally {
      await nc.close();
      await server.stop();
    }
  });
});

describe('the relay when JetStream refuses a desired message', () => {
  it('holds back only the refused rows: other objects of the same and other clusters reach their agents', async () => {
    const sizeRefusals = await metricValue(t.registry, 'flotilla_hub_outbox_refused_total', { reason: 'message_size' });
    // Committed before the small ones, so they head every batch the relay reads.
    await create('writer', 'big-stream', 'a', 60 * KIB);
    await create('writer', 'big-payload', 'a', 200 * KIB);
    await create('hub', 'small-a', 'a', 0);
    await create('hub', 'small-b', 'b', 0);

    await received(
      'both agents receive their small objects',
      () => agentA.desired.has(key('small-a')) && agentB.desired.has(key('small-b')),
    );
    const stream = await refused('rel-a', 'big-stream');
    expect(stream.refused_reason).toMatch(/^message_size: message size exceeds maximum allowed/);
    const payload = await refused('rel-a', 'big-payload');
    expect(payload.refused_reason).toMatch(/^max_payload: .*max_payload size exceeded/);
    expect(agentA.desired.has(key('big-stream'))).toBe(false);
    expect(agentA.desired.has(key('big-payload'))).toBe(false);
    expect(
      await metricValue(t.registry, 'flotilla_hub_outbox_refused_total', { reason: 'message_size' }),
    ).toBeGreaterThan(sizeRefusals);
    expect(
      await metricValue(t.registry, 'flotilla_hub_outbox_refused_total', { reason: 'max_payload' }),
    ).toBeGreaterThanOrEqual(1);

    // Tried again after a backoff, and held back in between.
    const again = await refused('rel-a', 'big-stream', stream.attempts + 1);
    expect(again.held_back).toBe(true);
    // Later changes still go through while the rows are held back.
    await create('hub', 'later-a', 'a', 0);
    await received('A receives a later object', () => agentA.desired.has(key('later-a')));
  });

  it('retires a refused row when its object gets a newer value, and never publishes it over that', async () => {
    const id = await create('writer', 'big-fixed', 'a', 60 * KIB);
    await refused('rel-a', 'big-fixed');
    await rest(t, 'PUT', `/api/v1/workloads/${id}`, t.operatorToken, { spec: specWith(0, 2), placement: place('a') });
    await received('A receives the newer value', () => agentA.desired.get(key('big-fixed'))?.generation === 2);
    await allSent('rel-a', 'big-fixed');
    expect(await lastGeneration('rel-a', 'big-fixed')).toBe(2);
  });

  it('repairs a clobbered subject whose stored value is refused once, and does not loop', async () => {
    const repairs = await metricValue(t.registry, 'flotilla_hub_desired_repairs_total', { reason: 'invalid' });
    // A writer in the hub's own account (agents cannot reach desired subjects: ADR 0012) makes the
    // server answer on a desired subject.
    admin.publish(`$JS.API.CONSUMER.INFO.${DESIRED_STREAM}.${agentConsumerName('rel-a')}`, '', {
      reply: desiredSubject('rel-a', object('big-stream')),
    });
    await admin.flush();
    const repair = await eventually('the repair is queued and refused', async () => {
      const rows = await unsent('rel-a', 'big-stream');
      // The repair's own refusal retires the older refused row of the subject.
      return rows.length === 1 && rows[0]!.msg_id.includes('@repair-') && rows[0]!.attempts >= 1 ? rows[0] : undefined;
    });
    expect(repair.refused_reason).toMatch(/^message_size/);
    // Retried by the relay with its backoff, never queued again by the watch.
    await sleep(3000);
    expect(await metricValue(t.registry, 'flotilla_hub_desired_repairs_total', { reason: 'invalid' })).toBe(
      repairs + 1,
    );
    const rows = await t.db.pool.query<{ n: number }>(
      `select count(*)::int as n from outbox where subject = $1 and msg_id like '%@repair-%'`,
      [desiredSubject('rel-a', object('big-stream'))],
    );
    expect(rows.rows[0]!.n).toBe(1);
    expect(await unsent('rel-a', 'big-stream')).toHaveLength(1);
  });

  it('delivers a refused row once the hub restarts with a larger stream limit', async () => {
    const payloadAttempts = (await refused('rel-a', 'big-payload')).attempts;
    await t.hub.close();
    // The defaults: a 1 MiB body limit, messages up to 1 MiB + 64 KiB; max_payload is still 128 KiB.
    t = await startTestHub(nats, { db: t.db });
    await received('A receives the object the stream refused before', () => agentA.desired.has(key('big-stream')));
    await allSent('rel-a', 'big-stream');
    // Still above nats-server's max_payload: tried again, and held back again.
    expect((await refused('rel-a', 'big-payload', payloadAttempts + 1)).refused_reason).toMatch(/^max_payload/);
    expect(
      await metricValue(t.registry, 'flotilla_hub_outbox_refused_total', { reason: 'max_payload' }),
    ).toBeGreaterThanOrEqual(1);
    // The row retired by a newer value stayed retired.
    expect(await lastGeneration('rel-a', 'big-fixed')).toBe(2);
  });

  it("refuses at write time a workload whose message exceeds nats-server's max_payload, naming the field and sizes", async () => {
    const post = (body: Record<string, unknown>) =>
      t.hub.app.inject({
        method: 'POST',
        url: '/api/v1/workloads',
        headers: { authorization: `Bearer ${t.operatorToken}` },
        payload: { kind: 'CloneSet', namespace: 'apps', placement: place('b'), ...body },
      });
    // 200 KiB is well within the 1 MiB body limit; the message could never be published.
    const tooLarge = await post({ name: 'rest-big', spec: specWith(200 * KIB) });
    expect(tooLarge.statusCode).toBe(400);
    expect(tooLarge.json<ErrorBody>().error).toMatchObject({
      code: 'HUB_ERR_INVALID',
      details: [
        {
          path: 'spec',
          message: expect.stringMatching(new RegExp(`up to \\d+ bytes, and at most ${MAX_PAYLOAD} can be published`)),
        },
      ],
    });

    const override = await post({
      name: 'rest-override',
      spec: specWith(0),
      overrides: { 'rel-b': specWith(200 * KIB) },
    });
    expect(override.statusCode).toBe(400);
    expect(override.json<ErrorBody>().error.details.map((d) => d.path)).toEqual(['overrides.rel-b']);

    const fits = await post({ name: 'rest-fits', spec: specWith(100 * KIB) });
    expect(fits.statusCode).toBe(201);
    const update = await t.hub.app.inject({
      method: 'PUT',
      url: `/api/v1/workloads/${fits.json<{ id: string }>().id}`,
      headers: { authorization: `Bearer ${t.operatorToken}` },
      payload: { spec: specWith(200 * KIB), placement: place('b') },
    });
    expect(update.statusCode).toBe(400);
    expect(update.json<ErrorBody>().error.details.map((d) => d.path)).toEqual(['spec']);

    expect(await metricValue(t.registry, 'flotilla_hub_refusals_total', { reason: 'desired_message_size' })).toBe(3);
    const written = await t.db.pool.query<{ name: string; revision: number }>(
      `select name, current_revision as revision from workloads where name like 'rest-%' order by name`,
    );
    expect(written.rows).toEqual([{ name: 'rest-fits', revision: 1 }]);
    await received('B receives what fits', () => agentB.desired.has(key('rest-fits')));
  });

  it('delivers the row above max_payload once nats-server allows larger messages', async () => {
    await t.hub.close();
    for (const node of nats.cluster.nodes) {
      const conf = readFileSync(node.configFile, 'utf8');
      writeFileSync(node.configFile, conf.replace(`max_payload: ${MAX_PAYLOAD}`, 'max_payload: 2MB'));
    }
    await nats.cluster.restart();
    t = await startTestHub(nats, { db: t.db });
    await received('A receives the object above the old max_payload', () => agentA.desired.has(key('big-payload')));
    await allSent('rel-a', 'big-payload');
    expect(await lastGeneration('rel-a', 'big-fixed')).toBe(2);
  });
});

describe('a full desired stream', () => {
  // On a replicated stream (these suites run DESIRED at 3 replicas) nats-server 2.12 refuses at
  // max_msgs even a new value for a subject the stream already holds (a single-node stream
  // replaces it): ADR 0009. Both are held back as refused and delivered once there is room.
  it('holds back new objects and changes while DESIRED is at max_msgs, and delivers both when there is room', async () => {
    await t.hub.close();
    t = await startTestHub(nats, { db: t.db, env: { FLOTILLA_DESIRED_STREAM_MAX_MSGS: '100' } });
    const held = (await jsm.streams.info(DESIRED_STREAM)).state.messages;
    for (let i = held; i < 100; i++) await create('hub', `fill-${i}`, 'b', 0);
    await eventually('the stream is full', async () => (await jsm.streams.info(DESIRED_STREAM)).state.messages === 100);

    await create('hub', 'one-too-many', 'a', 0);
    expect((await refused('rel-a', 'one-too-many')).refused_reason).toMatch(/^stream_full: maximum messages exceeded/);
    expect(
      await metricValue(t.registry, 'flotilla_hub_outbox_refused_total', { reason: 'stream_full' }),
    ).toBeGreaterThanOrEqual(1);
    // A new value of an object the stream holds is held back too, never lost.
    const [small] = (
      await t.db.pool.query<{ id: string }>(`select id from workloads where name = 'small-b' and deleted_at is null`)
    ).rows;
    await rest(t, 'PUT', `/api/v1/workloads/${small!.id}`, t.operatorToken, {
      spec: specWith(0, 3),
      placement: place('b'),
    });
    expect((await refused('rel-b', 'small-b')).refused_reason).toMatch(/^stream_full: /);
    expect(agentB.desired.get(key('small-b'))?.generation).toBe(1);

    await t.hub.close();
    t = await startTestHub(nats, { db: t.db });
    await received('A receives the object refused while the stream was full', () =>
      agentA.desired.has(key('one-too-many')),
    );
    await received(
      'B receives the change refused while the stream was full',
      () => agentB.desired.get(key('small-b'))?.generation === 2,
    );
    await allSent('rel-a', 'one-too-many');
    await allSent('rel-b', 'small-b');
  });
});
