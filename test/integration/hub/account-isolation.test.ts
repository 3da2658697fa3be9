/**
 * Account isolation (docs/adr/0012, issue 21): with cluster A's own key and the user JWT the hub
 * issued it, every way into cluster B's subjects, B's durable, the streams or `$SYS` is refused,
 * and nothing the server answers to A can land on B's subjects. Expired, tampered and revoked
 * JWTs are refused; a removed cluster's connections close on every NATS node within 10 s.
 * Real 3-node NATS cluster in operator mode, real hub, real Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { encodeUser } from '@nats-io/jwt';
import { createAccount, fromSeed } from '@nats-io/nkeys';
import { connect, jwtAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import {
  AGENT_JS_API_PREFIX,
  DESIRED_STREAM,
  STATUS_STREAM,
  agentConsumerName,
  agentPermissions,
  decodeDesired,
  desiredFilter,
  desiredSubject,
  heartbeatSubject,
  newAgentKey,
  statusSubject,
} from '@flotilla/api';
import { eventually } from '../helpers/kube.js';
import { cloneSetSpec } from './fixtures.js';
import {
  connectAs,
  joinCluster,
  metricValue,
  renewCredentials,
  rest,
  signedHeaders,
  startFleetNats,
  startTestHub,
  type FleetNats,
  type JoinedCluster,
  type TestHub,
} from './fleet.js';

const WEB = { kind: 'CloneSet', namespace: 'apps', name: 'web' } as const;
const enc = new TextEncoder();

let nats: FleetNats;
let t: TestHub;
let admin: NatsConnection;
let jsm: JetStreamManager;
let credsA: JoinedCluster;
let credsB: JoinedCluster;
let ncA: NatsConnection;
/** Errors the server reported on A's connection (permission violations arrive here). */
const errorsA: string[] = [];

beforeAll(async () => {
  nats = await startFleetNats();
  t = await startTestHub(nats);
  credsA = await joinCluster(t, 'iso-a', { iso: 'yes' });
  credsB = await joinCluster(t, 'iso-b', { iso: 'yes' });
  await rest(t, 'POST', '/api/v1/workloads', t.operatorToken, {
    kind: 'CloneSet',
    name: 'web',
    namespace: 'apps',
    spec: cloneSetSpec(1),
    placement: { clusterSelector: { matchLabels: { iso: 'yes' } } },
  });
  admin = await nats.connectAsHub();
  jsm = await jetstreamManager(admin);
  await eventually('B has its desired object', () =>
    jsm.streams.getMessage(DESIRED_STREAM, { last_by_subj: desiredSubject('iso-b', WEB) }).catch(() => undefined),
  );
  ncA = await connectAs(nats, credsA);
  void (async () => {
    for await (const s of ncA.status()) if (s.type === 'error') errorsA.push(String(s.error));
  })();
});

afterAll(async () => {
  await ncA?.close();
  await admin?.close();
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
});

/** A's request on `subject` fails (refused at the permission check or nobody answers in A's account). */
async function refused(subject: string, body = ''): Promise<string> {
  const err = await ncA.request(subject, body, { timeout: 1500 }).then(
    (m) => {
      throw new Error(`${subject} answered: ${m.string().slice(0, 200)}`);
    },
    (e: unknown) => String(e),
  );
  return err;
}

/** B's stored desired value, decoded. */
async function storedB(): Promise<ReturnType<typeof decodeDesired>> {
  const m = await jsm.streams.getMessage(DESIRED_STREAM, { last_by_subj: desiredSubject('iso-b', WEB) });
  return decodeDesired(m!.data);
}

/** Everything published on `subject` in the hub's account while `during` runs (plus a grace). */
async function publishedOn(subject: string, during: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const sub = admin.subscribe(subject, { callback: (_e, m) => void seen.push(m.string()) });
  await admin.flush();
  await during();
  await new Promise((r) => setTimeout(r, 1000));
  sub.unsubscribe();
  return seen;
}

function connectWith(jwt: string, seed: string, servers = credsA.nats.servers): Promise<NatsConnection> {
  return connect({
    servers,
    tls: nats.tls,
    authenticator: jwtAuthenticator(jwt, enc.encode(seed)),
    maxReconnectAttempts: 0,
  });
}

const connects = (jwt: string, seed: string): Promise<boolean> =>
  connectWith(jwt, seed).then(
    async (nc) => {
      await nc.close();
      return true;
    },
    () => false,
  );

/** The account public key of a user JWT (its issuer_account). */
function accountOf(jwt: string): string {
  const claims = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as {
    nats: { issuer_account: string };
  };
  return claims.nats.issuer_account;
}

describe("with cluster A's key", () => {
  it('reads its own durable and publishes its own status, with PubAcks from the hub’s stream', async () => {
    const js = jetstream(ncA, { checkAPI: false, apiPrefix: credsA.nats.apiPrefix });
    const consumer = await js.consumers.get(DESIRED_STREAM, credsA.nats.consumer);
    const batch = await consumer.fetch({ max_messages: 10, expires: 2000 });
    const got: string[] = [];
    for await (const m of batch) {
      got.push(m.subject);
      m.ack();
    }
    expect(got).toEqual([desiredSubject('iso-a', WEB)]);
    const ack = await js.publish(statusSubject('iso-a', WEB), '{}');
    expect(ack.stream).toBe(STATUS_STREAM);
  });

  it('cannot connect as B: a JWT for B’s account signed by a key of its own, or B’s JWT with A’s seed', async () => {
    const forged = await encodeUser(
      'agent-iso-b',
      fromSeed(enc.encode(credsA.seed)),
      accountOf(credsB.nats.jwt),
      { pub: agentPermissions('iso-b').publish, sub: agentPermissions('iso-b').subscribe },
      { signer: createAccount() },
    );
    expect(await connects(forged, credsA.seed)).toBe(false);
    expect(await connects(credsB.nats.jwt, credsA.seed)).toBe(false);
    expect(await connects(credsA.nats.jwt, credsA.seed)).toBe(true);
  });

  it.each([desiredFilter('iso-b'), '>'])('cannot subscribe to %s', async (subject) => {
    const seen = await publishedOn(desiredSubject('iso-b', WEB), async () => {
      const sub = ncA.subscribe(subject);
      await eventually(
        'the server refuses the subscription',
        () =>
          Promise.resolve(errorsA.some((e) => e.includes(`Permissions Violation for Subscription to "${subject}"`))),
        10_000,
      );
      sub.unsubscribe();
    });
    expect(seen).toEqual([]);
  });

  it.each([
    ['status', statusSubject('iso-b', WEB)],
    ['heartbeat', heartbeatSubject('iso-b')],
  ])("cannot publish B's %s", async (_what, subject) => {
    const js = jetstream(ncA, { checkAPI: false });
    const landed = await publishedOn(subject, async () => {
      await expect(js.publish(subject, '{}', { timeout: 1500 })).rejects.toThrow();
    });
    expect(landed).toEqual([]);
    const info = await jsm.streams.info(STATUS_STREAM, { subjects_filter: subject });
    expect(info.state.subjects?.[subject] ?? 0).toBe(0);
  });

  it.each(['$JS.API', AGENT_JS_API_PREFIX])('cannot read B’s messages with STREAM.MSG.GET (%s)', async (prefix) => {
    const body = JSON.stringify({ last_by_subj: desiredSubject('iso-b', WEB) });
    expect(await refused(`${prefix}.STREAM.MSG.GET.${DESIRED_STREAM}`, body)).toBeTruthy();
  });

  it.each(['$JS.API', AGENT_JS_API_PREFIX])('cannot read B’s messages with DIRECT.GET (%s)', async (prefix) => {
    const body = JSON.stringify({ last_by_subj: desiredSubject('iso-b', WEB) });
    expect(await refused(`${prefix}.DIRECT.GET.${DESIRED_STREAM}`, body)).toBeTruthy();
  });

  it('cannot read B’s durable nor create a consumer filtered on B', async () => {
    const b = agentConsumerName('iso-b');
    await expect(
      jetstream(ncA, { checkAPI: false, apiPrefix: AGENT_JS_API_PREFIX }).consumers.get(DESIRED_STREAM, b),
    ).rejects.toThrow();
    await refused(`${AGENT_JS_API_PREFIX}.CONSUMER.MSG.NEXT.${DESIRED_STREAM}.${b}`, '{"batch":1}');
    const config = { durable_name: 'sneaky', filter_subject: desiredFilter('iso-b') };
    for (const prefix of ['$JS.API', AGENT_JS_API_PREFIX]) {
      await refused(
        `${prefix}.CONSUMER.CREATE.${DESIRED_STREAM}.sneaky.${desiredFilter('iso-b')}`,
        JSON.stringify({ stream_name: DESIRED_STREAM, config }),
      );
    }
    const names: string[] = [];
    for await (const ci of jsm.consumers.list(DESIRED_STREAM)) names.push(ci.name);
    expect(names).not.toContain('sneaky');
  });

  it('cannot get stream info of the hub’s account', async () => {
    for (const prefix of ['$JS.API', AGENT_JS_API_PREFIX]) {
      await refused(`${prefix}.STREAM.INFO.${DESIRED_STREAM}`);
      await refused(`${prefix}.INFO`);
    }
  });

  it('cannot purge or delete the streams nor delete B’s durable', async () => {
    for (const prefix of ['$JS.API', AGENT_JS_API_PREFIX]) {
      await refused(`${prefix}.STREAM.PURGE.${DESIRED_STREAM}`);
      await refused(`${prefix}.STREAM.DELETE.${STATUS_STREAM}`);
      await refused(`${prefix}.CONSUMER.DELETE.${DESIRED_STREAM}.${agentConsumerName('iso-b')}`);
    }
    expect((await jsm.consumers.info(DESIRED_STREAM, agentConsumerName('iso-b'))).name).toBe('agent-iso-b');
    expect((await storedB()).ok).toBe(true);
    expect((await jsm.streams.info(STATUS_STREAM)).config.name).toBe(STATUS_STREAM);
  });

  it('cannot reach $SYS', async () => {
    await refused('$SYS.REQ.SERVER.PING');
    await refused('$SYS.REQ.CLAIMS.LIST');
  });

  it('cannot make the server write into B’s subjects through a forged reply subject', async () => {
    const before = await storedB();
    const repairs = await metricValue(t.registry, 'flotilla_hub_desired_repairs_total');
    const own = `${AGENT_JS_API_PREFIX}.CONSUMER.INFO.${DESIRED_STREAM}.${credsA.nats.consumer}`;
    const landed = await publishedOn(desiredSubject('iso-b', WEB), async () => {
      // Allowed to A; the server answers on the reply subject A chose, in A's own account.
      ncA.publish(own, '', { reply: desiredSubject('iso-b', WEB) });
      ncA.publish(own, '', { reply: heartbeatSubject('iso-b') });
      ncA.publish(`${AGENT_JS_API_PREFIX}.CONSUMER.MSG.NEXT.${DESIRED_STREAM}.${credsA.nats.consumer}`, '{"batch":1}', {
        reply: desiredSubject('iso-b', { ...WEB, name: 'x' }),
      });
      await ncA.flush();
    });
    expect(landed).toEqual([]);
    expect(await storedB()).toEqual(before);
    expect(await metricValue(t.registry, 'flotilla_hub_desired_repairs_total')).toBe(repairs);
  });

  it('cannot make the server deliver into B’s subjects through a push consumer', async () => {
    const config = {
      durable_name: credsA.nats.consumer,
      filter_subject: desiredFilter('iso-a'),
      deliver_subject: heartbeatSubject('iso-b'),
    };
    const landed = await publishedOn(heartbeatSubject('iso-b'), async () => {
      for (const prefix of ['$JS.API', AGENT_JS_API_PREFIX]) {
        await refused(
          `${prefix}.CONSUMER.CREATE.${DESIRED_STREAM}.${credsA.nats.consumer}.${desiredFilter('iso-a')}`,
          JSON.stringify({ stream_name: DESIRED_STREAM, config }),
        );
        await refused(
          `${prefix}.CONSUMER.DURABLE.CREATE.${DESIRED_STREAM}.${credsA.nats.consumer}`,
          JSON.stringify({ stream_name: DESIRED_STREAM, config }),
        );
      }
    });
    expect(landed).toEqual([]);
    expect((await jsm.consumers.info(DESIRED_STREAM, credsA.nats.consumer)).config.deliver_subject).toBeUndefined();
  });
});

describe('user JWTs', () => {
  it('refuses an expired JWT, and the key renews it', async () => {
    const signer = fromSeed(enc.encode(nats.setup.accountSigningSeed));
    const expired = await encodeUser(
      'agent-iso-a',
      fromSeed(enc.encode(credsA.seed)),
      accountOf(credsA.nats.jwt),
      { pub: agentPermissions('iso-a').publish, sub: agentPermissions('iso-a').subscribe },
      { signer, exp: Math.floor(Date.now() / 1000) - 60 },
    );
    expect(await connects(expired, credsA.seed)).toBe(false);
    const renewed = await renewCredentials(t, credsA);
    expect(renewed.nats.jwt).not.toBe(credsA.nats.jwt);
    expect(await connects(renewed.nats.jwt, credsA.seed)).toBe(true);
  });

  it('refuses a tampered JWT (permissions widened in its payload)', async () => {
    const [head, body, sig] = credsA.nats.jwt.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
      nats: { pub: { allow: string[] } };
    };
    claims.nats.pub.allow.push('>');
    const tampered = [head, Buffer.from(JSON.stringify(claims)).toString('base64url'), sig].join('.');
    expect(await connects(tampered, credsA.seed)).toBe(false);
  });

  it('refuses a replayed renewal and one signed by another key, with one answer', async () => {
    const url = `/api/v1/clusters/${credsA.cluster}/credentials/renew`;
    const headers = signedHeaders(credsA.seed, 'POST', url, {});
    const inject = (h: Record<string, string>) => t.hub.app.inject({ method: 'POST', url, headers: h, payload: {} });
    expect((await inject(headers)).statusCode).toBe(200);
    const replay = await inject(headers);
    const foreign = await inject(signedHeaders(newAgentKey().seed, 'POST', url, {}));
    expect(replay.statusCode).toBe(403);
    expect(foreign.statusCode).toBe(403);
    expect(replay.body).toBe(foreign.body);
  });

  it('re-keys: the old key is revoked and its live connection closed; the new key connects', async () => {
    const joined = await joinCluster(t, 'iso-rekey', { iso: 'rekey' });
    const old = await connectWith(joined.nats.jwt, joined.seed);
    const closed = old.closed();
    const next = newAgentKey();
    const url = `/api/v1/clusters/iso-rekey/credentials/rekey`;
    const body = { publicKey: next.publicKey };
    const res = await t.hub.app.inject({
      method: 'POST',
      url,
      headers: signedHeaders(joined.seed, 'POST', url, body),
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(200);
    const rekeyed = res.json<{ nats: { jwt: string } }>();
    await closed;
    expect(await connects(joined.nats.jwt, joined.seed)).toBe(false);
    expect(await connects(rekeyed.nats.jwt, next.seed)).toBe(true);
  });

  it('refuses a key an admin revoked', async () => {
    const joined = await joinCluster(t, 'iso-revoked', { iso: 'revoked' });
    expect(await connects(joined.nats.jwt, joined.seed)).toBe(true);
    await rest(t, 'POST', '/api/v1/clusters/iso-revoked/credentials/revoke', t.adminToken);
    await eventually('the revoked key is refused', async () => !(await connects(joined.nats.jwt, joined.seed)), 10_000);
    const url = '/api/v1/clusters/iso-revoked/credentials/renew';
    const renew = await t.hub.app.inject({
      method: 'POST',
      url,
      headers: signedHeaders(joined.seed, 'POST', url, {}),
      payload: {},
    });
    expect(renew.statusCode).toBe(403);
  });
});

describe('a removed cluster', () => {
  it('has its connection on every NATS node closed within 10 s, and is refused afterwards', async () => {
    const gone = await joinCluster(t, 'iso-gone', { iso: 'gone' });
    const perNode = await Promise.all(
      nats.cluster.nodes.map(async (n) => {
        const nc = await eventually(`connected to ${n.name}`, () =>
          connectWith(gone.nats.jwt, gone.seed, [n.url]).catch(() => undefined),
        );
        return { node: n.name, closed: nc.closed() };
      }),
    );
    const start = Date.now();
    await rest(t, 'DELETE', '/api/v1/clusters/iso-gone', t.operatorToken);
    const closedAfterMs = await Promise.all(perNode.map((p) => p.closed.then(() => Date.now() - start)));
    // The measurement, for the table (the assertion keeps slack for a busy machine).
    console.info(`removed cluster's connections closed after ${JSON.stringify(closedAfterMs)} ms (per node)`);
    expect(Math.max(...closedAfterMs)).toBeLessThan(10_000);
    expect(await connects(gone.nats.jwt, gone.seed)).toBe(false);
  });
});
