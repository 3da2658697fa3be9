// The simulated agents of the hub benchmark, run as a child process (bench.ts forks it) so their
// NATS traffic neither shares an event loop with the hub nor hides in the hub's CPU time. Each
// agent joins as the real one does (agent/src/hublink/registration.ts): it makes its own nkey,
// registers over the hub's HTTP listener with the public key, is accepted (here with the
// operator's token, standing in for the operator), claims with a request signed by its key, and
// connects over TLS with the user JWT it got and the seed that never left it. It then reads the
// named durable the hub created for it (hub/src/nats/agent-consumers.ts) through its account's
// imports, as the real agent does.
// Messages from the parent: { type: 'join', hubUrl, bootstrapToken, operatorToken, caFile, names }
// → { type: 'joined' }; { type: 'start' } → { type: 'ready' }; { type: 'pause' } → { type: 'paused' }
// (every agent stops reading its durable, connections stay) and { type: 'resume' } → { type:
// 'resumed' } (each reads its durable again: the bench swaps durables in between);
// { type: 'report', names } → { type: 'reported', ms }: every agent reports on each named object as
// the hub placed it on its cluster (the generation it received), as the real status reporter does.
// Receipts are sent in batches as { type: 'receipts', items: [{ name, revision, at }] } with `at` in
// epoch milliseconds (performance.timeOrigin + now(), comparable across processes).
import { jetstream, type ConsumerMessages } from '@nats-io/jetstream';
import { connect, jwtAuthenticator, type Msg, type NatsConnection } from '@nats-io/transport-node';
import {
  DESIRED_STREAM,
  PROTOCOL_VERSION,
  SIGNATURE_HEADER,
  agentConsumerName,
  agentInboxPrefix,
  decodeDesired,
  encodeMessage,
  newAgentKey,
  signRequest,
  statusSubject,
  type AgentCredentials,
} from '@flotilla/api';

interface Agent {
  name: string;
  creds: AgentCredentials;
  nc: NatsConnection;
  messages: ConsumerMessages | undefined;
  /** Per object name: the newest desired message received (what the agent would apply). */
  received: Map<string, { workloadId: string; revision: number; generation: number }>;
}

interface Joined {
  name: string;
  seed: string;
  creds: AgentCredentials;
}

interface JoinRequest {
  hubUrl: string;
  bootstrapToken: string;
  operatorToken: string;
  caFile: string;
  names: string[];
}

const agents: Agent[] = [];
let joined: Joined[] = [];
let caFile = '';
const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const send = (m: Record<string, unknown>): void => void process.send!(m);

let pendingReceipts: { name: string; revision: number; at: number }[] = [];
let receiptTimer: NodeJS.Timeout | undefined;
function receipt(name: string, revision: number, at: number): void {
  pendingReceipts.push({ name, revision, at });
  receiptTimer ??= setTimeout(() => {
    receiptTimer = undefined;
    send({ type: 'receipts', items: pendingReceipts });
    pendingReceipts = [];
  }, 20);
}

/** A POST as the agent makes it: a 503 (the hub busy) is retried after its Retry-After. */
async function post<T>(url: string, token: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    if (res.status === 503 && attempt < 20) {
      await res.body?.cancel();
      await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000);
      continue;
    }
    if (res.status >= 300) throw new Error(`POST ${url}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  }
}

/** Register with a fresh key → accepted → signed claim: the credentials the real agent stores. */
async function joinAgent(r: JoinRequest, name: string): Promise<Joined> {
  const key = newAgentKey();
  const reg = await post<{ registrationSecret: string }>(`${r.hubUrl}/api/v1/clusters/register`, r.bootstrapToken, {
    name,
    labels: { bench: 'yes' },
    publicKey: key.publicKey,
  });
  await post(`${r.hubUrl}/api/v1/clusters/${name}/accept`, r.operatorToken, {});
  const path = `/api/v1/clusters/${name}/claim`;
  const body = { registrationSecret: reg.registrationSecret };
  const signature = signRequest(key.seed, { method: 'POST', path, body }, Date.now());
  const creds = await post<AgentCredentials>(`${r.hubUrl}${path}`, r.bootstrapToken, body, {
    [SIGNATURE_HEADER]: signature,
  });
  return { name, seed: key.seed, creds };
}

async function startAgent({ name, seed, creds }: Joined): Promise<Agent> {
  let nc: NatsConnection | undefined;
  for (let i = 0; !nc; i++) {
    try {
      nc = await connect({
        servers: creds.nats.servers,
        tls: { caFile },
        authenticator: jwtAuthenticator(creds.nats.jwt, new TextEncoder().encode(seed)),
        inboxPrefix: creds.nats.inboxPrefix,
      });
    } catch (err) {
      if (i > 100) throw err;
      await sleep(100);
    }
  }
  const agent: Agent = { name, creds, nc, messages: undefined, received: new Map() };
  await consumeDesired(agent);
  return agent;
}

/** Reads the agent's durable from where the server has it (a new durable: every object's latest). */
async function consumeDesired(a: Agent): Promise<void> {
  const consumer = await jetstream(a.nc, { checkAPI: false, apiPrefix: a.creds.nats.apiPrefix }).consumers.get(
    DESIRED_STREAM,
    agentConsumerName(a.name),
  );
  // A callback rather than an async iterator, and receipts sent in batches: 1,000 clients share
  // this one thread, and per-message promise chains and IPC calls delayed the receipts of the
  // later agents by the work of the earlier ones (the time is taken first, then the rest).
  a.messages = await consumer.consume({
    max_messages: 100,
    callback: (m) => {
      const at = now();
      const d = decodeDesired(m.data);
      if (d.ok && (a.received.get(d.value.name)?.revision ?? 0) < d.value.revision) {
        const { workloadId, revision, generation } = d.value;
        a.received.set(d.value.name, { workloadId, revision, generation });
        receipt(d.value.name, revision, at);
      }
      m.ack();
    },
  });
}

/**
 * One agent's reports on the named objects, as JetStream publishes acknowledged on the agent's own
 * inbox: all sent, then the acks counted. A request per message (js.publish) costs a timer and a
 * promise each, and with 20,000 of them in one thread the generator, not the hub, set the rate.
 * Each report carries the workload, revision and generation the agent received for that object.
 */
async function reportAgent(a: Agent, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  const reportedAt = new Date().toISOString();
  const inbox = `${agentInboxPrefix(a.name)}.status`;
  let acked = 0;
  let refused = 0;
  let done: () => void = () => undefined;
  const all = new Promise<void>((resolve) => (done = resolve));
  const sub = a.nc.subscribe(`${inbox}.*`, {
    callback: (_err, m: Msg) => {
      // A refusal is a 503 status (no stream) or an error body; an ack names the stream.
      if ((m.headers?.code ?? 0) >= 400 || !m.string().includes('"seq"')) refused++;
      else acked++;
      if (acked + refused === names.length) done();
    },
  });
  names.forEach((name, j) => {
    const got = a.received.get(name);
    if (!got) throw new Error(`${a.name}: never received ${name}, cannot report on it`);
    const key = { kind: 'CloneSet' as const, namespace: 'bench', name };
    a.nc.publish(
      statusSubject(a.name, key),
      encodeMessage({
        v: PROTOCOL_VERSION,
        cluster: a.name,
        ...key,
        workloadId: got.workloadId,
        revision: got.revision,
        generation: got.generation,
        observedGeneration: 1,
        counts: { replicas: 3, readyReplicas: 3, updatedReplicas: 3, updatedReadyReplicas: 3, availableReplicas: 3 },
        health: 'Healthy',
        message: '',
        reportedAt,
      }),
      { reply: `${inbox}.${j}` },
    );
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([all, new Promise<void>((resolve) => (timer = setTimeout(resolve, 120_000)))]);
  clearTimeout(timer);
  sub.unsubscribe();
  if (acked < names.length)
    throw new Error(`${a.name}: ${names.length - acked} status reports not acknowledged (${refused} refused)`);
}

process.on('message', (msg: { type: string; [k: string]: unknown }) => {
  void (async () => {
    if (msg.type === 'join') {
      const r = msg as unknown as JoinRequest;
      caFile = r.caFile;
      for (let i = 0; i < r.names.length; i += 50) {
        joined.push(...(await Promise.all(r.names.slice(i, i + 50).map((n) => joinAgent(r, n)))));
      }
      send({ type: 'joined' });
    } else if (msg.type === 'start') {
      for (let i = 0; i < joined.length; i += 50) {
        agents.push(...(await Promise.all(joined.slice(i, i + 50).map(startAgent))));
      }
      joined = [];
      send({ type: 'ready' });
    } else if (msg.type === 'report') {
      const t0 = now();
      // Every agent at once, as independent agents would.
      await Promise.all(agents.map((a) => reportAgent(a, msg['names'] as string[])));
      send({ type: 'reported', ms: now() - t0 });
    } else if (msg.type === 'pause') {
      await Promise.all(agents.map(async (a) => void (await a.messages?.close())));
      send({ type: 'paused' });
    } else if (msg.type === 'resume') {
      for (let i = 0; i < agents.length; i += 50) await Promise.all(agents.slice(i, i + 50).map(consumeDesired));
      send({ type: 'resumed' });
    } else if (msg.type === 'stop') {
      for (const a of agents) {
        await a.messages?.close();
        await a.nc.close();
      }
      send({ type: 'stopped' });
    }
  })().catch((err: unknown) => {
    console.error('[agents]', err);
    process.exit(1);
  });
});
