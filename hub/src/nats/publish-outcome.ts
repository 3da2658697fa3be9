/**
 * What the answer to one published message means for the relay (domain/outbox-plan.ts). A
 * PubAck is `{"stream":..,"seq":..}` (a duplicate's too); a refusal is
 * `{"error":{"code":..,"err_code":..,"description":..}}`; a status-only 503 means no stream
 * answered (JetStream unavailable, or no stream for the subject), which is nothing the message
 * did and is retried like a missing answer. The client refuses a message above nats-server's
 * max_payload before sending it, by throwing from `publish`.
 */
import { InvalidArgumentError, InvalidSubjectError } from '@nats-io/transport-node';
import type { PublishOutcome, RefusalReason } from '../domain/outbox-plan.js';

/** nats-server's JSStreamMessageExceedsMaximumErr: larger than the stream's max_msg_size. */
const JS_MESSAGE_TOO_LARGE = 10054;
/**
 * nats-server's JSStreamStoreFailedF; with `discard: New` it carries "maximum messages
 * exceeded" or "maximum bytes exceeded" when the stream is full.
 */
const JS_STORE_FAILED = 10077;

/** Descriptions are the server's or the client's; bounded, as they go into logs and rows. */
const MAX_DETAIL = 200;

/** The parts of a reply the relay reads. */
export interface AckReply {
  /** The status of a status-only message (503 no responders), if any. */
  status?: number;
  statusDescription?: string;
  data: Uint8Array;
}

const decoder = new TextDecoder();

function refused(reason: RefusalReason, detail: string): PublishOutcome {
  return { result: 'refused', reason, detail: detail.slice(0, MAX_DETAIL) };
}

interface ApiError {
  err_code?: unknown;
  description?: unknown;
}

function apiRefusal(error: ApiError): PublishOutcome {
  const description = typeof error.description === 'string' ? error.description : 'error';
  if (error.err_code === JS_MESSAGE_TOO_LARGE) return refused('message_size', description);
  if (error.err_code === JS_STORE_FAILED && /maximum (messages|bytes)/.test(description)) {
    return refused('stream_full', description);
  }
  return refused('other', typeof error.err_code === 'number' ? `${description} (${error.err_code})` : description);
}

export function ackOutcome(reply: AckReply): PublishOutcome {
  if (reply.status !== undefined && reply.status >= 400) {
    if (reply.status === 503) return { result: 'unacked' };
    return refused('other', `status ${reply.status} ${reply.statusDescription ?? ''}`.trim());
  }
  let body: unknown;
  try {
    body = JSON.parse(decoder.decode(reply.data));
  } catch {
    return refused('other', 'unreadable acknowledgement');
  }
  if (typeof body !== 'object' || body === null) return refused('other', 'not a publish acknowledgement');
  const ack = body as { error?: unknown; seq?: unknown };
  if (typeof ack.error === 'object' && ack.error !== null) return apiRefusal(ack.error);
  return typeof ack.seq === 'number' ? { result: 'acked' } : refused('other', 'not a publish acknowledgement');
}

/**
 * A synchronous throw of `publish`: the message's own fault (too large for max_payload, a bad
 * subject) is a refusal; anything else (a closed or draining connection) is undefined: the
 * connection's problem, which fails the whole pass.
 */
export function publishErrorOutcome(err: unknown): PublishOutcome | undefined {
  if (err instanceof InvalidArgumentError && err.message.includes('max_payload')) {
    return refused('max_payload', err.message);
  }
  if (err instanceof InvalidSubjectError) return refused('other', err.message);
  return undefined;
}
