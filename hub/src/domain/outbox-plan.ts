/**
 * Outbox batches: rows are published in id order (ids follow commit order because desired-state
 * writes are serialized), and within one batch only the newest row per subject is published —
 * the stream keeps one message per subject anyway, so older ones would be overwritten at once.
 *
 * JetStream answers every message on its own: stored, refused (too large for the stream or for
 * nats-server's max_payload, or a new subject while the stream is full), or no answer in time.
 * One refused message must not hold back the rest, so each outcome is settled by itself
 * (`settleOutboxBatch`):
 * - stored: the row and every older unsent row of its subject are marked sent;
 * - refused: the row stays unsent (it is committed work, never dropped) and is tried again after
 *   a backoff, while later rows go on; every older unsent row of its subject is marked sent, as
 *   the refused row carries the object's whole newer state;
 * - no answer: the row is left as it is and sent again by the next pass (JetStream drops a
 *   duplicate by its msgID).
 * Ordering per subject follows: rows are first tried in id order, and a row's definite outcome
 * retires every older row of its subject, so a refused row retried later can never overwrite a
 * newer value (a newer row either retired it or is still unsent and sorts after it in a batch).
 */
export interface OutboxRow {
  id: number;
  subject: string;
}

/** A message queued for the DESIRED stream: its subject, JetStream msgID and JSON payload text. */
export interface OutboxMessage {
  subject: string;
  msgId: string;
  /** Exactly what is published (stored and sent byte for byte). */
  payload: string;
}

/** A queued message with its row id (ids follow commit order). */
export interface OutboxRecord extends OutboxMessage, OutboxRow {}

export interface OutboxBatchPlan<R extends OutboxRow> {
  /** Rows to publish, in ascending id order: the newest of each subject in the batch. */
  publish: R[];
}

export function planOutboxBatch<R extends OutboxRow>(rows: readonly R[]): OutboxBatchPlan<R> {
  const newest = new Map<string, R>();
  for (const row of [...rows].sort((a, b) => a.id - b.id)) newest.set(row.subject, row);
  return { publish: [...newest.values()].sort((a, b) => a.id - b.id) };
}

/** Why JetStream (or the client, before sending) refused a message: the metric's label. */
export type RefusalReason = 'max_payload' | 'message_size' | 'stream_full' | 'other';

/** What became of one published message. */
export type PublishOutcome =
  | { result: 'acked' }
  /** `detail` is the server's (or client's) description, never the payload. */
  | { result: 'refused'; reason: RefusalReason; detail: string }
  | { result: 'unacked' };

/** Backoff of a refused row: doubles from `baseMs` with every refusal, up to `maxMs`. */
export interface RefusalBackoff {
  baseMs: number;
  maxMs: number;
}

/** The wait before the next attempt of a row refused `refusals` times before (0: the first). */
export function refusalRetryMs(refusals: number, backoff: RefusalBackoff): number {
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(Math.max(refusals, 0), 30));
}

/** A row as settled: its subject and id (rows of the subject up to it are retired). */
export interface SettledRow {
  id: number;
  subject: string;
}

export interface RefusedRow extends SettledRow {
  reason: RefusalReason;
  detail: string;
  /** When to try it again, from now. */
  retryMs: number;
}

export interface OutboxSettlement {
  /** Stored rows: each is marked sent with every older unsent row of its subject. */
  acked: SettledRow[];
  /** Refused rows: kept unsent until `retryMs`; every older unsent row of the subject is marked sent. */
  refused: RefusedRow[];
  /** Rows without an answer: left unsent for the next pass. */
  unacked: number[];
}

/**
 * Settles a published batch. `published[i]` was answered by `outcomes[i]`; `attempts` is how
 * often the row was refused before (it sets the backoff).
 */
export function settleOutboxBatch<R extends OutboxRow & { attempts: number }>(
  published: readonly R[],
  outcomes: readonly PublishOutcome[],
  backoff: RefusalBackoff,
): OutboxSettlement {
  if (outcomes.length !== published.length) {
    throw new Error(`${outcomes.length} outcomes for ${published.length} published rows`);
  }
  const settlement: OutboxSettlement = { acked: [], refused: [], unacked: [] };
  published.forEach((row, i) => {
    const outcome = outcomes[i]!;
    const { id, subject } = row;
    if (outcome.result === 'acked') settlement.acked.push({ id, subject });
    else if (outcome.result === 'unacked') settlement.unacked.push(id);
    else {
      const { reason, detail } = outcome;
      settlement.refused.push({ id, subject, reason, detail, retryMs: refusalRetryMs(row.attempts, backoff) });
    }
  });
  return settlement;
}

/**
 * Rows a writer handed to its relay after commit, kept so the relay publishes them without
 * reading their payloads back. The outbox table stays the truth: the relay asks it which ids
 * are unsent (in order) and takes from here only those; the rest it loads.
 */
export interface HandoffCache<R extends OutboxRow> {
  readonly size: number;
  /** Keeps `rows` (handed over at `at`) unless that would exceed the bound; returns whether it did. */
  add(rows: readonly R[], at: number): boolean;
  /** Splits a batch of unsent ids into rows held here and ids to load from the table. */
  take(ids: readonly number[]): { held: Map<number, R>; missing: number[] };
  /**
   * Forgets rows that are settled: the ids just marked sent, and every held id below the
   * batch's last one (due ids are read in order, so a held id below it that was not in the batch
   * was published by another replica, or is held back after a refusal and is read from the
   * table when due). Returns when the sent held rows were handed over, once per handoff (a
   * change's rows share one time).
   */
  settle(publishedIds: readonly number[]): number[];
  /** Nothing is due: every held row was published, or is held back and read from the table later. */
  clear(): void;
}

export function createHandoffCache<R extends OutboxRow>(maxRows: number): HandoffCache<R> {
  const rows = new Map<number, { row: R; at: number }>();
  return {
    get size() {
      return rows.size;
    },
    add(batch, at) {
      if (rows.size + batch.length > maxRows) return false;
      for (const row of batch) rows.set(row.id, { row, at });
      return true;
    },
    take(ids) {
      const held = new Map<number, R>();
      const missing: number[] = [];
      for (const id of ids) {
        const entry = rows.get(id);
        if (entry) held.set(id, entry.row);
        else missing.push(id);
      }
      return { held, missing };
    },
    settle(publishedIds) {
      const handedAt = new Set<number>();
      for (const id of publishedIds) {
        const entry = rows.get(id);
        if (entry) handedAt.add(entry.at);
        rows.delete(id);
      }
      const last = publishedIds.reduce((max, id) => Math.max(max, id), -Infinity);
      for (const id of rows.keys()) if (id < last) rows.delete(id);
      return [...handedAt];
    },
    clear() {
      rows.clear();
    },
  };
}
