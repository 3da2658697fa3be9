/**
 * Publishes many messages to one JetStream stream and waits for every acknowledgement, without
 * a request (and its timer and error objects) per message: all messages go out with replies
 * to one inbox subscription, then one flush, then the acks are counted. A fleet-wide change is
 * one message per cluster, so this is the relay's hot path. Any missing, negative or
 * no-responder ack fails the whole call; the caller retries, and JetStream deduplicates by
 * msgID what already landed.
 */
import { createInbox, headers, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { HubError } from '../errors.js';

export interface StreamMessage {
  subject: string;
  data: Uint8Array;
  msgId: string;
}

const decoder = new TextDecoder();

/** A PubAck is `{"stream":..,"seq":..}`; a failure is `{"error":{...}}` or a 503 (no stream). */
function ackError(m: Msg): string | undefined {
  if (m.headers?.code && m.headers.code >= 400) return `status ${m.headers.code} ${m.headers.description}`;
  try {
    const body = JSON.parse(decoder.decode(m.data)) as { error?: { description?: string }; seq?: number };
    if (body.error) return body.error.description ?? 'error';
    return typeof body.seq === 'number' ? undefined : 'not a publish acknowledgement';
  } catch {
    return 'unreadable acknowledgement';
  }
}

export async function publishAll(
  nc: NatsConnection,
  stream: string,
  messages: readonly StreamMessage[],
  timeoutMs = 10_000,
): Promise<void> {
  if (messages.length === 0) return;
  const inbox = createInbox();
  const pending = new Set(messages.map((_, i) => i));
  const failures: string[] = [];
  let done: () => void = () => undefined;
  const allAcked = new Promise<void>((resolve) => (done = resolve));
  const sub = nc.subscribe(`${inbox}.*`, {
    callback: (_err, m) => {
      const index = Number(m.subject.slice(inbox.length + 1));
      if (!pending.delete(index)) return;
      const error = ackError(m);
      if (error) failures.push(`${messages[index]!.subject}: ${error}`);
      if (pending.size === 0) done();
    },
  });
  try {
    messages.forEach((msg, i) => {
      const h = headers();
      h.set('Nats-Msg-Id', msg.msgId);
      h.set('Nats-Expected-Stream', stream);
      nc.publish(msg.subject, msg.data, { headers: h, reply: `${inbox}.${i}` });
    });
    await nc.flush();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([allAcked, timedOut]);
    clearTimeout(timer);
  } finally {
    sub.unsubscribe();
  }
  if (pending.size > 0 || failures.length > 0) {
    throw new HubError(
      'HUB_ERR_UNAVAILABLE',
      `publishing to ${stream}: ${pending.size} unacknowledged, ${failures.length} refused${failures[0] ? ` (${failures[0]})` : ''}`,
    );
  }
}
