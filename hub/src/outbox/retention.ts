/**
 * Retention of sent outbox rows: rows sent longer ago than the retention are deleted, so the
 * table holds the unsent work and a recent history, not every change ever made (JetStream holds
 * the messages from then on). Every replica prunes (deleting is idempotent), at most once per
 * minute (or per retention, when that is shorter), in batches that never hold long locks.
 */
import type { Db } from '../db/client.js';
import type { HubMetrics } from '../metrics.js';
import { pruneSentOutbox } from '../repositories/outbox-repo.js';

/** Deletes per statement, so pruning a large backlog never holds long locks. */
const PRUNE_BATCH = 5000;
/** The most often a relay prunes (a short retention prunes as often as it expires rows). */
const PRUNE_EVERY_MS = 60_000;

/** Prunes when due; a running prune stops between batches once `stopped()` says so. */
export function createPruner(deps: {
  db: Db;
  metrics: Pick<HubMetrics, 'outboxPruned'>;
  retentionSeconds: number;
  stopped: () => boolean;
}): () => Promise<void> {
  const pruneEveryMs = Math.min(PRUNE_EVERY_MS, deps.retentionSeconds * 1000);
  let prunedAt = -Infinity;
  return async () => {
    if (performance.now() - prunedAt < pruneEveryMs) return;
    prunedAt = performance.now();
    for (;;) {
      const n = await pruneSentOutbox(deps.db, deps.retentionSeconds, PRUNE_BATCH);
      deps.metrics.outboxPruned.inc(n);
      if (n < PRUNE_BATCH || deps.stopped()) return;
    }
  };
}
