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
