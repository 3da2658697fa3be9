/**
 * Outbox batches: rows are published in id order (ids follow commit order because desired-state
 * writes are serialized), and within one batch only the newest row per subject is published —
 * the stream keeps one message per subject anyway, so older ones would be overwritten at once.
 */
export interface OutboxRow {
  id: number;
  subject: string;
}

export interface OutboxBatchPlan<R extends OutboxRow> {
  /** Rows to publish, in ascending id order. */
  publish: R[];
  /** Every row id of the batch: all are marked sent once the publishes succeed. */
  markSent: number[];
}

export function planOutboxBatch<R extends OutboxRow>(rows: readonly R[]): OutboxBatchPlan<R> {
  const ordered = [...rows].sort((a, b) => a.id - b.id);
  const newest = new Map<string, R>();
  for (const row of ordered) newest.set(row.subject, row);
  const publish = [...newest.values()].sort((a, b) => a.id - b.id);
  return { publish, markSent: ordered.map((r) => r.id) };
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
   * Forgets rows that are sent: the ids just published, and every held id below the batch's
   * last one (unsent ids are read in order, so a held id below it that was not in the batch was
   * published by another replica). Returns when the published held rows were handed over, once
   * per handoff (a change's rows share one time).
   */
  settle(publishedIds: readonly number[]): number[];
  /** Nothing is unsent: every held row was published (by this relay or another replica). */
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
      const last = publishedIds.at(-1);
      if (last !== undefined) for (const id of rows.keys()) if (id < last) rows.delete(id);
      return [...handedAt];
    },
    clear() {
      rows.clear();
    },
  };
}
