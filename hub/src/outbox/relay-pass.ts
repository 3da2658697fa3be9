/**
 * One pass of the outbox relay: in a transaction holding the relay lock, read the due rows (from
 * the writer's handoff where held, else from the table), publish the newest row per subject,
 * settle every message's outcome (domain/outbox-plan.ts) and commit. After the commit, refusals
 * are reported and the handoff cache forgets what was settled.
 */
import type { Db, Tx } from '../db/client.js';
import { tryLockRelay } from '../db/locks.js';
import {
  planOutboxBatch,
  settleOutboxBatch,
  type HandoffCache,
  type OutboxRecord,
  type PublishOutcome,
  type RefusalBackoff,
  type RefusedRow,
} from '../domain/outbox-plan.js';
import type { HubMetrics } from '../metrics.js';
import { dueOutboxIds, outboxRowsById, settleOutbox } from '../repositories/outbox-repo.js';
import type { RefusalReporter } from './refusal-report.js';

/**
 * Publishes desired messages to the DESIRED stream: `outcomes[i]` answers `rows[i]`, and one
 * refused message never fails the others. Throws only when nothing can be published (the
 * connection is closed or draining). The NATS implementation is nats/desired-publisher.ts.
 */
export type OutboxPublisher = (rows: readonly OutboxRecord[]) => Promise<PublishOutcome[]>;

/** What one pass did: rows read (due), ids marked sent, rows without an answer, rows refused. */
export interface PassResult {
  read: number;
  marked: number[];
  unacked: number;
  refused: RefusedRow[];
}

export interface RelayPassDeps {
  db: Db;
  publish: OutboxPublisher;
  metrics: HubMetrics;
  batchSize: number;
  backoff: RefusalBackoff;
  handedOff: HandoffCache<OutboxRecord>;
  reportRefusals: RefusalReporter;
}

const NOTHING: PassResult = { read: 0, marked: [], unacked: 0, refused: [] };

type BatchRow = OutboxRecord & { attempts: number };

/** Returns a pass; a pass that finds the lock taken (another replica publishes) does nothing. */
export function createRelayPass(deps: RelayPassDeps): () => Promise<PassResult> {
  const { metrics, handedOff } = deps;

  /** The due rows of one batch in id order: payloads from memory where held, else loaded. */
  async function readBatch(tx: Tx): Promise<BatchRow[]> {
    const due = await dueOutboxIds(tx, deps.batchSize);
    if (due.length === 0) {
      handedOff.clear();
      return [];
    }
    const { held, missing } = handedOff.take(due.map((d) => d.id));
    const loaded = new Map((await outboxRowsById(tx, missing)).map((r) => [r.id, r]));
    const rows: BatchRow[] = [];
    for (const { id, attempts } of due) {
      const row = held.get(id) ?? loaded.get(id);
      if (row) rows.push({ ...row, attempts });
    }
    return rows;
  }

  return async () => {
    let stopMark: (() => number) | undefined;
    const result = await deps.db.transaction(async (tx): Promise<PassResult> => {
      if (!(await tryLockRelay(tx))) return NOTHING;
      const stopRead = metrics.desiredStageSeconds.startTimer({ stage: 'relay_read' });
      const batch = await readBatch(tx);
      if (batch.length === 0) return NOTHING;
      stopRead();
      const plan = planOutboxBatch(batch);
      const stopPublish = metrics.relayPublishSeconds.startTimer();
      const outcomes = await deps.publish(plan.publish);
      stopPublish();
      const settlement = settleOutboxBatch(plan.publish, outcomes, deps.backoff);
      stopMark = metrics.desiredStageSeconds.startTimer({ stage: 'relay_mark' });
      const marked = await settleOutbox(tx, settlement);
      metrics.outboxPublished.inc(settlement.acked.length);
      return { read: batch.length, marked, unacked: settlement.unacked.length, refused: settlement.refused };
    });
    stopMark?.();
    deps.reportRefusals(result.refused);
    // Sent and committed: from the writer's commit to here is what the outbox adds to a change.
    const at = performance.now();
    for (const handedAt of handedOff.settle(result.marked)) {
      metrics.desiredStageSeconds.observe({ stage: 'handoff' }, (at - handedAt) / 1000);
    }
    return result;
  };
}
