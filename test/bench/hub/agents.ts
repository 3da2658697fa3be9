// The simulated agents of the hub benchmark, run in a worker thread so their NATS traffic does
// not share an event loop with the hub. Each agent is a plain NATS client with its cluster's own
// identity and inbox prefix, a named durable consumer (LastPerSubject, own filter) and acks.
// Messages from the main thread: { type: 'start', url, names, password } → { type: 'ready' };
// { type: 'report', perAgent, workloadId, generation } → { type: 'reported', ms }.
// Receipts are posted in batches as { type: 'receipts', items: [{ revision, at }] } with `at` in
// epoch milliseconds (performance.timeOrigin + now(), comparable across threads).
import { parentPort } from 'node:worker_threads';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, type ConsumerMessages } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  DESIRED_STREAM,
  PROTOCOL_VERSION,
  agentConsumerName,
  agentInboxPrefix,
  agentNatsUser,
  decodeDesired,
  desiredFilter,
  encodeMessage,
  statusSubject,
} from '@flotilla/api';

interface Agent {
  name: string;
  nc: NatsConnection;
  messages: ConsumerMessages;
  seen: Set<number>;
}

const port = parentPort!;
const agents: Agent[] = [];
const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let pendingReceipts: { revision: number; at: number }[] = [];
let receiptTimer: NodeJS.Timeout | undefined;
function receipt(revision: number, at: number): void {
  pendingReceipts.push({ revision, at });
  receiptTimer ??= setTimeout(() => {
    receiptTimer = undefined;
    port.postMessage({ type: 'receipts', items: pendingReceipts });
    pendingReceipts = [];
  }, 20);
}

async function startAgent(url: string, name: string, password: string): Promise<Agent> {
  let nc: NatsConnection | undefined;
  for (let i = 0; !nc; i++) {
    try {
      nc = await connect({
        servers: url,
        user: agentNatsUser(name),
        pass: password,
        inboxPrefix: agentInboxPrefix(name),
      });
    } catch (err) {
      if (i > 100) throw err;
      await sleep(100);
    }
  }
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  await jsm.consumers.add(DESIRED_STREAM, {
    durable_name: agentConsumerName(name),
    filter_subject: desiredFilter(name),
    deliver_policy: DeliverPolicy.LastPerSubject,
    ack_policy: AckPolicy.Explicit,
  });
  const consumer = await jetstream(nc, { checkAPI: false }).consumers.get(DESIRED_STREAM, agentConsumerName(name));
  const seen = new Set<number>();
  // A callback rather than an async iterator, and receipts posted in batches: 1,000 clients share
  // this one thread, and per-message promise chains and postMessage calls delayed the receipts of
  // the later agents by the work of the earlier ones (the time is taken first, then the rest).
  const messages = await consumer.consume({
    max_messages: 10,
    callback: (m) => {
      const at = now();
      const d = decodeDesired(m.data);
      if (d.ok && !seen.has(d.value.revision)) {
        seen.add(d.value.revision);
        receipt(d.value.revision, at);
      }
      m.ack();
    },
  });
  return { name, nc, messages, seen };
}

async function report(perAgent: number, workloadId: string, generation: number): Promise<void> {
  const reportedAt = new Date().toISOString();
  // Every agent at once, as independent agents would.
  await Promise.all(
    agents.map(async (a) => {
      const js = jetstream(a.nc, { checkAPI: false });
      await Promise.all(
        Array.from({ length: perAgent }, (_, j) => {
          const key = { kind: 'CloneSet' as const, namespace: 'bench', name: `obj-${j}` };
          return js.publish(
            statusSubject(a.name, key),
            encodeMessage({
              v: PROTOCOL_VERSION,
              cluster: a.name,
              ...key,
              workloadId,
              revision: generation,
              generation,
              observedGeneration: 1,
              counts: {
                replicas: 3,
                readyReplicas: 3,
                updatedReplicas: 3,
                updatedReadyReplicas: 3,
                availableReplicas: 3,
              },
              health: 'Healthy',
              message: '',
              reportedAt,
            }),
            // 20,000 publishes at once on a loaded machine outlast the default 5 s.
            { timeout: 120_000 },
          );
        }),
      );
    }),
  );
}

port.on('message', (msg: { type: string; [k: string]: unknown }) => {
  void (async () => {
    if (msg.type === 'start') {
      const names = msg['names'] as string[];
      for (let i = 0; i < names.length; i += 50) {
        agents.push(
          ...(await Promise.all(
            names.slice(i, i + 50).map((n) => startAgent(msg['url'] as string, n, msg['password'] as string)),
          )),
        );
      }
      port.postMessage({ type: 'ready' });
    } else if (msg.type === 'report') {
      const t0 = now();
      await report(msg['perAgent'] as number, msg['workloadId'] as string, msg['generation'] as number);
      port.postMessage({ type: 'reported', ms: now() - t0 });
    } else if (msg.type === 'stop') {
      for (const a of agents) {
        await a.messages.close();
        await a.nc.close();
      }
      port.postMessage({ type: 'stopped' });
    }
  })();
});
