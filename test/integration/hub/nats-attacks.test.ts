/**
 * Hardening of the hub ↔ agent link, as a cluster's agent holding its own key and as faults,
 * against a real NATS cluster in operator mode and real Postgres: agents can neither create nor
 * change a consumer (the hub owns every durable and repairs or deletes what drifted), a desired
 * message the hub did not publish is put back, a claim or re-key whose account push fails can be
 * retried, and both streams are bounded. Isolation between clusters' accounts:
 * account-isolation.test.ts.
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { connect, jwtAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { Registry } from 'prom-client';
import {
  DESIRED_ACK_WAIT_MS,
  DESIRED_STREAM,
  PROTOCOL_VERSION,
  STATUS_STREAM,
  agentConsumerName,
  decodeDesired,
  desiredFilter,
  desiredSubject,
  encodeMessage,
  heartbeatSubject,
  newAgentKey,
  statusSubject,
  type AgentCredentials,
  type DesiredMessage,
} from '@flotilla/api';
import { createHubLink, createHubLinkMetrics, createKubeApplier } from '@flotilla/agent';
import { createKubeRest } from '@flotilla/agent/runtime';
import { createLogger, ensureStreams, type NatsAccountIssuer } from '@flotilla/hub';
import { startNats } from '@flotilla/test';
import { cluster } from '../helpers/context.js';
import { customResource, eventually, kube, testNamespace } from '../helpers/kube.js';
import { installCrds } from './crds.js';
import { cloneSetSpec } from './fixtures.js';
import {
  connectAs,
  joinCluster,
  metricValue,
  rest,
  signedHeaders,
  startFleetNats,
  startTestHub,
  type FleetNats,
  type JoinedCluster,
  type TestHub,
} from './fleet.js';

/**
 * The hub's account issuer, failing once per queued fault: `push` before a cluster's account is
 * pushed, `sign` after it was pushed (the transaction then rolls back: an account Postgres does not
 * know, which the reconciler deletes).
 */
interface Fault {
  cluster: string;
  when: 'push' | 'sign';
}

const faults: Fault[] = [];
let accounts: NatsAccountIssuer | undefined;

function takeFault(cluster: string, when: Fault['when']): boolean {
  const i = faults.findIndex((f) => f.cluster === cluster && f.when === when);
  if (i < 0) return false;
  faults.splice(i, 1);
  return true;
}

function flaky(inner: NatsAccountIssuer): NatsAccountIssuer {
  accounts = inner;
  return {
    ...inner,
    async pushAccount(a) {
      if (takeFault(a.cluster, 'push')) throw new Error('injected: the account push failed');
      await inner.pushAccount(a);
    },
    async signUser(a, key) {
      if (takeFault(a.cluster, 'sign')) throw new Error('injected: failed after the account was pushed');
      return inner.signUser(a, key);
    },
  };
}

const WEB = { kind: 'CloneSet', namespace: 'apps', name: 'web' } as const;
const CLONESETS = customResource('CloneSet');

let nats: FleetNats;
let t: TestHub;
let admin: NatsConnection;
let jsmAdmin: JetStreamManager;

/**
 * Deletes a durable on the replicated DESIRED stream. Under load the API answer can time out
 * after the server already deleted it: look again, and retry only while it still exists.
 */
async function deleteDurable(name: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await jsmAdmin.consumers.delete(DESIRED_STREAM, name);
      return;
    } catch (err) {
      const gone = await jsmAdmin.consumers.info(DESIRED_STREAM, name).then(
        () => false,
        (e: unknown) => /consumer not found/i.test(String(e)),
      );
      if (gone) return;
      if (attempt >= 5) throw err;
    }
  }
}
let credsA: JoinedCluster;
let credsB: JoinedCluster;
let ncA: NatsConnection;
let ncB: NatsConnection;

beforeAll(async () => {
  nats = await startFleetNats();
  admin = await nats.connectAsHub();
  jsmAdmin = await jetstreamManager(admin);
  // What an older hub and an agent under the old permissions left behind: unbounded streams,
  // and a push durable of a cluster that no longer exists, delivering to a heartbeat subject.
  await jsmAdmin.streams.add({ name: DESIRED_STREAM, subjects: ['flotilla.desired.>'], max_msgs_per_subject: 1 });
  await jsmAdmin.streams.add({
    name: STATUS_STREAM,
    subjects: ['flotilla.status.>', 'flotilla.heartbeat.>'],
    max_msgs_per_subject: 1,
  });
  await jsmAdmin.consumers.add(DESIRED_STREAM, {
    durable_name: agentConsumerName('legacy'),
    filter_subject: 'flotilla.desired.>',
    deliver_subject: heartbeatSubject('atk-b'),
    ack_policy: AckPolicy.Explicit,
  });
  // Only the passes a test runs (and the one at start): the periodic one would race them.
  t = await startTestHub(nats, { wrapAccounts: flaky, env: { FLOTILLA_NATS_RECONCILE_SECONDS: '3600' } });
  credsA = await joinCluster(t, 'atk-a', { atk: 'yes', team: 'a' });
  credsB = await joinCluster(t, 'atk-b', { atk: 'yes', team: 'b' });
  for (const [name, labels] of [
    ['web', { atk: 'yes' }],
    ['only-b', { team: 'b' }],
  ] as const) {
    await rest(t, 'POST', '/api/v1/workloads', t.operatorToken, {
      kind: 'CloneSet',
      name,
      namespace: 'apps',
      spec: cloneSetSpec(1),
      placement: { clusterSelector: { matchLabels: labels } },
    });
  }
  ncA = await connectAs(nats, credsA);
  ncB = await connectAs(nats, credsB);
});

afterAll(async () => {
  await ncA?.close();
  await ncB?.close();
  await admin?.close();
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
});

/** Every message currently in an agent's durable, acknowledged; undecodable ones as undefined. */
async function drain(
  nc: NatsConnection,
  creds: AgentCredentials,
): Promise<{ subject: string; msg?: DesiredMessage }[]> {
  const js = jetstream(nc, { checkAPI: false, apiPrefix: creds.nats.apiPrefix });
  const consumer = await js.consumers.get(DESIRED_STREAM, creds.nats.consumer);
  const out: { subject: string; msg?: DesiredMessage }[] = [];
  for await (const m of await consumer.fetch({ max_messages: 100, expires: 1000 })) {
    const d = decodeDesired(m.data);
    out.push(d.ok ? { subject: m.subject, msg: d.value } : { subject: m.subject });
    m.ack();
  }
  return out;
}

/** Drains until the durable delivered something; the clusters of the messages it read. */
async function clustersRead(nc: NatsConnection, creds: AgentCredentials): Promise<string[]> {
  const got = await eventually('the durable delivers', async () => {
    const msgs = await drain(nc, creds);
    return msgs.length > 0 ? msgs : undefined;
  });
  return [...new Set(got.map((m) => m.msg?.cluster ?? `undecodable ${m.subject}`))].sort();
}

/** A raw JetStream API request as the agent (the client library would pick the subject itself). */
function apiRequest(nc: NatsConnection, subject: string, config: Record<string, unknown>): Promise<unknown> {
  return nc.request(subject, JSON.stringify({ stream_name: DESIRED_STREAM, config }), { timeout: 2000 });
}

async function storedGeneration(clusterName: string, name: string): Promise<number> {
  const r = await t.db.pool.query<{ generation: string }>(
    'select generation from desired_objects where cluster_name = $1 and name = $2',
    [clusterName, name],
  );
  return Number(r.rows[0]!.generation);
}

describe('the streams and durables a hub finds at start', () => {
  it('bounds existing streams and deletes durables of clusters that are not accepted', async () => {
    const desired = (await jsmAdmin.streams.info(DESIRED_STREAM)).config;
    expect(desired).toMatchObject({
      max_msgs_per_subject: 1,
      max_msgs: 1_000_000,
      max_bytes: 1024 ** 3,
      max_msg_size: 1024 * 1024 + 64 * 1024,
      discard: DiscardPolicy.New,
    });
    const status = (await jsmAdmin.streams.info(STATUS_STREAM)).config;
    expect(status).toMatchObject({
      max_msgs_per_subject: 1,
      max_msgs: 1_000_000,
      max_bytes: 256 * 1024 ** 2,
      max_msg_size: 8 * 1024,
      discard: DiscardPolicy.Old,
    });
    // The pass at start deleted the legacy durable, though on a busy machine its R3 delete can
    // time out there after the server did it (then uncounted). Leave one again and run the pass
    // the reconciler repeats (the periodic one is off in this suite): deleted and counted.
    const deletedBefore = await metricValue(t.registry, 'flotilla_hub_agent_consumer_changes_total', {
      action: 'deleted',
    });
    await jsmAdmin.consumers.add(DESIRED_STREAM, {
      durable_name: agentConsumerName('legacy'),
      filter_subject: 'flotilla.desired.>',
      deliver_subject: heartbeatSubject('atk-b'),
      ack_policy: AckPolicy.Explicit,
    });
    await t.hub.link.pass();
    const names: string[] = [];
    for await (const ci of jsmAdmin.consumers.list(DESIRED_STREAM)) names.push(ci.name);
    expect(names).not.toContain(agentConsumerName('legacy'));
    expect(names).toEqual(expect.arrayContaining([agentConsumerName('atk-a'), agentConsumerName('atk-b')]));
    expect(
      await metricValue(t.registry, 'flotilla_hub_agent_consumer_changes_total', { action: 'deleted' }),
    ).toBeGreaterThanOrEqual(deletedBefore + 1);
  });

  it('refuses an oversized status report at the server and keeps taking normal ones', async () => {
    const js = jetstream(ncA, { checkAPI: false });
    const subject = statusSubject('atk-a', WEB);
    await expect(js.publish(subject, new Uint8Array(16 * 1024).fill(0x20))).rejects.toThrow(
      /message size exceeds maximum allowed/,
    );
    const ack = await js.publish(
      subject,
      encodeMessage({
        v: PROTOCOL_VERSION,
        cluster: 'atk-a',
        ...WEB,
        workloadId: '',
        revision: 1,
        generation: 1,
        observedGeneration: 1,
        counts: { replicas: 1, readyReplicas: 1, updatedReplicas: 1, updatedReadyReplicas: 1, availableReplicas: 1 },
        health: 'Healthy',
        message: '',
        reportedAt: new Date().toISOString(),
      }),
    );
    expect(ack.stream).toBe(STATUS_STREAM);
  });
});

describe('an agent and the consumers', () => {
  const own = agentConsumerName('atk-a');
  const attempts: [string, string, Record<string, unknown>][] = [
    [
      'the legacy create, widened to every cluster',
      `$JS.API.CONSUMER.DURABLE.CREATE.${DESIRED_STREAM}.${own}`,
      { durable_name: own, filter_subject: 'flotilla.desired.>', deliver_policy: DeliverPolicy.LastPerSubject },
    ],
    [
      'the filtered create of its own durable',
      `$JS.API.CONSUMER.CREATE.${DESIRED_STREAM}.${own}.${desiredFilter('atk-a')}`,
      { durable_name: own, filter_subject: desiredFilter('atk-a'), ack_policy: AckPolicy.Explicit },
    ],
    [
      "a push durable delivering to B's heartbeat subject",
      `$JS.API.CONSUMER.CREATE.${DESIRED_STREAM}.${own}.${desiredFilter('atk-a')}`,
      { durable_name: own, filter_subject: desiredFilter('atk-a'), deliver_subject: heartbeatSubject('atk-b') },
    ],
    [
      'the same through the legacy create',
      `$JS.API.CONSUMER.DURABLE.CREATE.${DESIRED_STREAM}.${own}`,
      { durable_name: own, deliver_subject: heartbeatSubject('atk-b') },
    ],
    ['an ephemeral over the whole stream', `$JS.API.CONSUMER.CREATE.${DESIRED_STREAM}`, { ack_policy: 'none' }],
    ['deleting its own durable', `$JS.API.CONSUMER.DELETE.${DESIRED_STREAM}.${own}`, {}],
  ];

  it.each(attempts)('refuses %s at the permission check', async (_what, subject, config) => {
    await expect(apiRequest(ncA, subject, config)).rejects.toThrow(/Permissions Violation for Publish/);
  });

  it('leaves the durable as the hub made it, and A reads only its own objects', async () => {
    const info = await jsmAdmin.consumers.info(DESIRED_STREAM, own);
    expect(info.config).toMatchObject({
      filter_subject: desiredFilter('atk-a'),
      deliver_policy: DeliverPolicy.LastPerSubject,
      ack_policy: AckPolicy.Explicit,
    });
    expect(info.config.deliver_subject).toBeUndefined();
    expect(await clustersRead(ncA, credsA)).toEqual(['atk-a']);
    await expect(
      jetstream(ncA, { checkAPI: false, apiPrefix: credsA.nats.apiPrefix }).consumers.get(
        DESIRED_STREAM,
        agentConsumerName('atk-b'),
      ),
    ).rejects.toThrow();
  });

  it('updates in place a durable with an older ack wait: it keeps its position', async () => {
    const before = await jsmAdmin.consumers.update(DESIRED_STREAM, own, { ack_wait: 60_000 * 1_000_000 });
    expect(before.config.ack_wait).toBe(60_000 * 1_000_000);
    const plan = await t.hub.link.pass();
    expect(plan.update).toEqual(['atk-a']);
    expect(plan.repair).toEqual([]);
    const after = await jsmAdmin.consumers.info(DESIRED_STREAM, own);
    expect(after.config.ack_wait).toBe(DESIRED_ACK_WAIT_MS * 1_000_000);
    // The same durable (not deleted and created again): its creation time and position stay.
    expect(after.created).toBe(before.created);
    expect(after.delivered.stream_seq).toBe(before.delivered.stream_seq);
    expect((await t.hub.link.pass()).update).toEqual([]);
  });

  it('repairs a durable widened behind the hub; A then reads only its own objects again', async () => {
    // What the legacy create let an agent do: reset its durable to every cluster's subjects.
    await deleteDurable(own);
    await jsmAdmin.consumers.add(DESIRED_STREAM, {
      durable_name: own,
      filter_subject: 'flotilla.desired.>',
      deliver_policy: DeliverPolicy.LastPerSubject,
      ack_policy: AckPolicy.Explicit,
    });
    expect(await clustersRead(ncA, credsA)).toEqual(['atk-a', 'atk-b']);

    const repaired = await metricValue(t.registry, 'flotilla_hub_agent_consumer_changes_total', {
      action: 'repaired',
    });
    const plan = await t.hub.link.pass();
    // A durable made by hand differs in its storage too (the hub's are in memory by default).
    expect(plan.repair).toEqual([{ cluster: 'atk-a', drift: expect.arrayContaining(['filter']) as string[] }]);
    expect(await metricValue(t.registry, 'flotilla_hub_agent_consumer_changes_total', { action: 'repaired' })).toBe(
      repaired + 1,
    );
    // The new durable starts over with the latest value of each of A's objects.
    const again = await eventually('A reads its objects again', async () => {
      const msgs = await drain(ncA, credsA);
      return msgs.length > 0 ? msgs : undefined;
    });
    expect(new Set(again.map((m) => m.msg?.cluster))).toEqual(new Set(['atk-a']));
    expect(again.map((m) => m.msg?.name)).toContain('web');
  });

  it("repairs a push durable aimed at another cluster's heartbeat subject", async () => {
    await deleteDurable(own);
    await jsmAdmin.consumers.add(DESIRED_STREAM, {
      durable_name: own,
      filter_subject: desiredFilter('atk-a'),
      deliver_subject: heartbeatSubject('atk-b'),
      deliver_policy: DeliverPolicy.LastPerSubject,
      ack_policy: AckPolicy.Explicit,
    });
    const plan = await t.hub.link.pass();
    expect(plan.repair).toEqual([{ cluster: 'atk-a', drift: expect.arrayContaining(['push']) as string[] }]);
    const info = await jsmAdmin.consumers.info(DESIRED_STREAM, own);
    expect(info.config.deliver_subject).toBeUndefined();
    expect(await clustersRead(ncA, credsA)).toEqual(['atk-a']);
  });

  it('deletes the durable of a removed cluster, and at the next start one removed while the hub was down', async () => {
    const exists = async (name: string): Promise<boolean> =>
      jsmAdmin.consumers.info(DESIRED_STREAM, agentConsumerName(name)).then(
        () => true,
        () => false,
      );
    await joinCluster(t, 'atk-gone', { atk: 'no' });
    expect(await exists('atk-gone')).toBe(true);
    await rest(t, 'DELETE', '/api/v1/clusters/atk-gone', t.operatorToken);
    expect(await exists('atk-gone')).toBe(false);

    // Removed by a replica that could not reach NATS, then no pass ran before the restart.
    await joinCluster(t, 'atk-down', { atk: 'no' });
    await t.db.pool.query("update clusters set state = 'removed' where name = 'atk-down'");
    expect(await exists('atk-down')).toBe(true);
    const restarted = await startTestHub(nats, { db: t.db, env: { FLOTILLA_NATS_RECONCILE_SECONDS: '3600' } });
    try {
      expect(await exists('atk-down')).toBe(false);
      expect(await exists('atk-a')).toBe(true);
    } finally {
      await restarted.hub.close();
    }
  });
});

describe('a desired message the hub did not publish', () => {
  // Agents cannot reach the desired subjects at all (account-isolation.test.ts); what remains is a
  // writer inside the hub's own account (an operator's tool, an older hub): the watch repairs it.
  it("is put back with the stored value, and B's agent receives it", async () => {
    await drain(ncB, credsB);
    const subject = desiredSubject('atk-b', WEB);
    const generation = await storedGeneration('atk-b', 'web');
    const repairs = await metricValue(t.registry, 'flotilla_hub_desired_repairs_total', { reason: 'invalid' });

    // Everything published on B's subject, whether or not B's durable gets to see it.
    const published: string[] = [];
    const watch = admin.subscribe(subject, {
      callback: (_err, m) => {
        published.push(m.string());
      },
    });
    await admin.flush();

    // What the reply-subject trap once did: a JetStream API answer stored as B's desired value.
    admin.publish(`$JS.API.CONSUMER.INFO.${DESIRED_STREAM}.${agentConsumerName('atk-a')}`, '', { reply: subject });
    await admin.flush();

    const restored = await eventually('B receives the stored desired message again', async () =>
      (await drain(ncB, credsB)).find((m) => m.subject === subject && m.msg?.name === 'web'),
    );
    watch.unsubscribe();
    expect(restored.msg).toMatchObject({ cluster: 'atk-b', name: 'web', generation, deleted: false });
    // First the server's API answer, then the hub's repair.
    expect(published.length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(published[0]!)).toMatchObject({ type: 'io.nats.jetstream.api.v1.consumer_info_response' });
    expect(decodeDesired(new TextEncoder().encode(published.at(-1))).ok).toBe(true);
    const last = await jsmAdmin.streams.getMessage(DESIRED_STREAM, { last_by_subj: subject });
    const decoded = decodeDesired(last!.data);
    expect(decoded.ok && decoded.value.generation).toBe(generation);
    expect(
      await metricValue(t.registry, 'flotilla_hub_desired_repairs_total', { reason: 'invalid' }),
    ).toBeGreaterThanOrEqual(repairs + 1);
    // The repair was recognised as good: nothing more arrives.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await drain(ncB, credsB)).filter((m) => m.subject === subject)).toEqual([]);
  });

  it('deletes what lands on a subject the hub never placed', async () => {
    const subject = desiredSubject('atk-b', { kind: 'CloneSet', namespace: 'apps', name: 'never-placed' });
    const repairs = await metricValue(t.registry, 'flotilla_hub_desired_repairs_total', { reason: 'unknown' });
    admin.publish(`$JS.API.CONSUMER.INFO.${DESIRED_STREAM}.${agentConsumerName('atk-a')}`, '', { reply: subject });
    await admin.flush();
    await eventually('the message is deleted and counted', async () => {
      const counted =
        (await metricValue(t.registry, 'flotilla_hub_desired_repairs_total', { reason: 'unknown' })) > repairs;
      const gone = await jsmAdmin.streams.getMessage(DESIRED_STREAM, { last_by_subj: subject }).then(
        (m) => m === null,
        () => true,
      );
      return counted && gone;
    });
    await drain(ncB, credsB);
  });
});

describe('claiming and re-keying while the account cannot be pushed', () => {
  it('keeps the one-time secret: the claim is retried with it and the agent connects', async () => {
    const key = newAgentKey();
    const reg = await rest<{ registrationSecret: string }>(t, 'POST', '/api/v1/clusters/register', t.bootstrapToken, {
      name: 'atk-claim',
      labels: { atk: 'yes' },
      publicKey: key.publicKey,
    });
    await rest(t, 'POST', '/api/v1/clusters/atk-claim/accept', t.operatorToken);
    const url = '/api/v1/clusters/atk-claim/claim';
    const payload = { registrationSecret: reg.registrationSecret };
    const claim = () =>
      t.hub.app.inject({
        method: 'POST',
        url,
        headers: { authorization: `Bearer ${t.bootstrapToken}`, ...signedHeaders(key.seed, 'POST', url, payload) },
        payload,
      });
    type Row = { credentials_issued: boolean; account_public_key: string | null };
    const row = async (): Promise<Row> =>
      (
        await t.db.pool.query<Row>(
          "select credentials_issued, account_public_key from clusters where name = 'atk-claim'",
        )
      ).rows[0]!;

    faults.push({ cluster: 'atk-claim', when: 'push' });
    expect((await claim()).statusCode).toBe(503);
    expect(await row()).toEqual({ credentials_issued: false, account_public_key: null });

    // Pushed to NATS, then the transaction failed: an account Postgres does not know.
    const held = new Set(await accounts!.listAccounts());
    faults.push({ cluster: 'atk-claim', when: 'sign' });
    // An unexpected failure after the push: the hub answers 500 and rolls the claim back.
    expect((await claim()).statusCode).toBe(500);
    expect((await row()).credentials_issued).toBe(false);
    const orphans = (await accounts!.listAccounts()).filter((k) => !held.has(k));
    expect(orphans).toHaveLength(1);
    await t.hub.link.pass();
    expect(await accounts!.listAccounts()).not.toContain(orphans[0]);

    const ok = await claim();
    expect(ok.statusCode, ok.body).toBe(200);
    const creds = { ...ok.json<AgentCredentials>(), seed: key.seed };
    expect((await row()).credentials_issued).toBe(true);
    const nc = await connectAs(nats, creds);
    try {
      expect(await clustersRead(nc, creds)).toEqual(['atk-claim']);
    } finally {
      await nc.close();
    }
    expect((await claim()).statusCode).toBe(409);
  });

  it('keeps the old key working when a re-key cannot push the account', async () => {
    const canConnect = async (jwt: string, seed: string): Promise<boolean> =>
      connect({
        servers: credsA.nats.servers,
        tls: nats.tls,
        authenticator: jwtAuthenticator(jwt, new TextEncoder().encode(seed)),
        maxReconnectAttempts: 0,
      }).then(
        async (nc) => {
          await nc.close();
          return true;
        },
        () => false,
      );
    const next = newAgentKey();
    const url = '/api/v1/clusters/atk-a/credentials/rekey';
    const payload = { publicKey: next.publicKey };
    const rekey = () =>
      t.hub.app.inject({ method: 'POST', url, headers: signedHeaders(credsA.seed, 'POST', url, payload), payload });
    faults.push({ cluster: 'atk-a', when: 'push' });
    expect((await rekey()).statusCode).toBe(503);
    await t.hub.link.pass();
    expect(await canConnect(credsA.nats.jwt, credsA.seed)).toBe(true);

    const res = await rekey();
    expect(res.statusCode, res.body).toBe(200);
    const rekeyed = { ...res.json<AgentCredentials>(), seed: next.seed };
    await eventually('the new key is accepted', () => canConnect(rekeyed.nats.jwt, next.seed));
    await eventually('the old one is refused', async () => !(await canConnect(credsA.nats.jwt, credsA.seed)));
    credsA = rekeyed;
    await ncA.close();
    ncA = await connectAs(nats, credsA);
  });
});

describe('an agent whose durable does not exist or is repaired', () => {
  it('waits for the hub to create it, never creates it, and binds again after a repair', async () => {
    const info = cluster(0);
    await installCrds(info);
    const k = kube(info);
    const ns = await testNamespace(k, 'atkwait');
    const creds = await joinCluster(t, 'atk-wait', { wait: 'yes' });
    await deleteDurable(agentConsumerName('atk-wait'));
    const placement = { clusterSelector: { matchLabels: { wait: 'yes' } } };
    const { id } = await rest<{ id: string }>(t, 'POST', '/api/v1/workloads', t.operatorToken, {
      kind: 'CloneSet',
      name: 'waiter',
      namespace: ns,
      spec: cloneSetSpec(1),
      placement,
    });
    const replicas = async (): Promise<number | undefined> =>
      k.custom
        .getNamespacedCustomObject({ ...CLONESETS, namespace: ns, name: 'waiter' })
        .then((o) => (o as { spec: { replicas: number } }).spec.replicas)
        .catch(() => undefined);
    const registry = new Registry();
    const kubeRest = createKubeRest(k.kc);
    const link = createHubLink({
      nats: { connect: (o) => connect({ ...o, tls: nats.tls }) },
      kube: createKubeApplier(kubeRest),
      clusterName: 'atk-wait',
      credentials: { ...creds.nats, seed: creds.seed },
      logger: createLogger('silent'),
      metrics: createHubLinkMetrics(registry),
      agentVersion: '0.1.0-test',
    });
    const missing = (): Promise<number> => metricValue(registry, 'flotilla_agent_hublink_consumer_missing_total');
    let started = false;
    const starting = link.start().then(() => (started = true));
    try {
      await eventually('the agent looked and waits', async () => (await missing()) >= 2);
      expect(started).toBe(false);
      await expect(jsmAdmin.consumers.info(DESIRED_STREAM, agentConsumerName('atk-wait'))).rejects.toThrow();
      expect((await t.hub.link.pass()).create).toEqual(['atk-wait']);
      await starting;
      await eventually('the agent applies its object', async () => (await replicas()) === 1);

      // Widened behind the hub, then repaired: the agent follows its durable to the new one.
      const before = await missing();
      await deleteDurable(agentConsumerName('atk-wait'));
      await jsmAdmin.consumers.add(DESIRED_STREAM, {
        durable_name: agentConsumerName('atk-wait'),
        filter_subject: 'flotilla.desired.>',
        deliver_policy: DeliverPolicy.LastPerSubject,
        ack_policy: AckPolicy.Explicit,
      });
      expect((await t.hub.link.pass()).repair).toEqual([
        { cluster: 'atk-wait', drift: expect.arrayContaining(['filter']) as string[] },
      ]);
      await rest(t, 'PUT', `/api/v1/workloads/${id}`, t.operatorToken, { spec: cloneSetSpec(3), placement });
      await eventually(
        'the agent applies the change through the repaired durable',
        async () => (await replicas()) === 3,
      );
      expect(await missing()).toBeGreaterThan(before);
    } finally {
      await link.stop();
      kubeRest.close();
      await k.core.deleteNamespace({ name: ns }).catch(() => undefined);
    }
  });
});

describe('stream bounds in force', () => {
  it('refuses new desired subjects when full but takes new values of held ones; status keeps the newest', async () => {
    const dir = path.join(nats.dir, 'bounds');
    const server = await startNats({ dir });
    const nc = await connect({ servers: server.url, tls: server.tls });
    try {
      const limits = { maxBytes: 1024 * 1024, maxMsgs: 3, maxMsgSize: 1024 };
      await ensureStreams(await jetstreamManager(nc), { replicas: 1, desired: limits, status: limits });
      const js = jetstream(nc);
      for (const name of ['a', 'b', 'c']) await js.publish(`flotilla.desired.x.CloneSet.apps.${name}`, '{}');
      await expect(js.publish('flotilla.desired.x.CloneSet.apps.d', '{}')).rejects.toThrow(/maximum messages/);
      await js.publish('flotilla.desired.x.CloneSet.apps.a', '{"again":true}');
      await expect(js.publish('flotilla.desired.x.CloneSet.apps.a', new Uint8Array(2048))).rejects.toThrow(
        /message size exceeds maximum allowed/,
      );
      for (const name of ['a', 'b', 'c', 'd']) await js.publish(`flotilla.status.x.CloneSet.apps.${name}`, '{}');
      const status = await (await jetstreamManager(nc)).streams.info(STATUS_STREAM, { subjects_filter: '>' });
      expect(Object.keys(status.state.subjects ?? {}).sort()).toEqual([
        'flotilla.status.x.CloneSet.apps.b',
        'flotilla.status.x.CloneSet.apps.c',
        'flotilla.status.x.CloneSet.apps.d',
      ]);
    } finally {
      await nc.close();
      await server.stop();
    }
  });
});
