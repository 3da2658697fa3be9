/**
 * Publishes many messages to one JetStream stream and waits for every acknowledgement, without
 * a request (and its timer and error objects) per message: all messages go out with replies
 * to one inbox subscription, then one flush, then the acks are counted. A fleet-wide change is
 * one message per cluster, so this is the relay's hot path.
 *
 * Every message gets its own outcome (publish-outcome.ts): acknowledged, refused (by the stream,
 * or by the client above max_payload before it is sent) or unacknowledged when the timeout
 * passes, so one bad message never fails the others. Only a connection that cannot publish at
 * all (closed, draining) throws.
 */
import { sleep } from '@flotilla/api';
import { createInbox, headers, type NatsConnection } from '@nats-io/transport-node';
import type { PublishOutcome } from '../domain/outbox-plan.js';
import { ackOutcome, publishErrorOutcome } from './publish-outcome.js';

export interface StreamMessage {
  subject: string;
  data: Uint8Array;
  msgId: string;
}

/** Sends one message; a refusal by the client is returned, any other throw propagates. */
function send(nc: NatsConnection, stream: string, msg: StreamMessage, reply: string): PublishOutcome | undefined {
  const h = headers();
  h.set('Nats-Msg-Id', msg.msgId);
  h.set('Nats-Expected-Stream', stream);
  try {
    nc.publish(msg.subject, msg.data, { headers: h, reply });
    return undefined;
  } catch (err) {
    const outcome = publishErrorOutcome(err);
    if (!outcome) throw err;
    return outcome;
  }
}

/** Returns `messages[i]`'s outcome at index i. */
export async function publishAll(
  nc: NatsConnection,
  stream: string,
  messages: readonly StreamMessage[],
  timeoutMs = 10_000,
): Promise<PublishOutcome[]> {
  const outcomes: (PublishOutcome | undefined)[] = messages.map(() => undefined);
  if (messages.length === 0) return [];
  const inbox = createInbox();
  const pending = new Set<number>();
  let done: () => void = () => undefined;
  const allAnswered = new Promise<void>((resolve) => (done = resolve));
  const sub = nc.subscribe(`${inbox}.*`, {
    callback: (_err, m) => {
      const index = Number(m.subject.slice(inbox.length + 1));
      if (!pending.delete(index)) return;
      outcomes[index] = ackOutcome({
        ...(m.headers?.code ? { status: m.headers.code, statusDescription: m.headers.description } : {}),
        data: m.data,
      });
      if (pending.size === 0) done();
    },
  });
  try {
    messages.forEach((msg, i) => {
      pending.add(i);
      const refused = send(nc, stream, msg, `${inbox}.${i}`);
      if (refused) {
        pending.delete(i);
        outcomes[i] = refused;
      }
    });
    if (pending.size > 0) {
      await nc.flush();
      const answered = new AbortController();
      await Promise.race([allAnswered, sleep(timeoutMs, { signal: answered.signal })]);
      answered.abort();
    }
  } finally {
    sub.unsubscribe();
  }
  return outcomes.map((o) => o ?? { result: 'unacked' });
}
