/**
 * The outbox relay: publishes committed outbox rows to the DESIRED stream and marks them sent.
 * Publishing happens inside a transaction holding the relay lock, and rows are marked only
 * after JetStream acknowledged them, so a crash anywhere loses nothing: unmarked rows are
 * published again by the next relay and JetStream drops the duplicates by `msgID`.
 * A writer in this process hands its committed rows over (`handoff`), so the relay reads only
 * which ids are unsent and not their payloads; rows it does not hold (other replicas, a restart)
 * it loads as before. Rows sent longer ago than the retention are deleted, so the table holds
 * the unsent work and a recent history, not every change ever made.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { DESIRED_STREAM } from '@flotilla/api';
import type { Logger } from 'pino';
import type { Db, Tx } from '../db/client.js';
import { tryLockRelay } from '../db/locks.js';
import { createHandoffCache, planOutboxBatch } from '../domain/outbox-plan.js';
import {
  markOutboxSent,
  outboxRowsById,
  pruneSentOutbox,
  unsentOutboxIds,
  type OutboxRecord,
} from '../repositories/outbox-repo.js';
import type { HubMetrics } from '../metrics.js';
import { publishAll } from './bulk-publish.js';

export interface RelayDeps {
  db: Db;
  nc: NatsConnection;
  logger: Logger;
  metrics: HubMetrics;
  intervalMs: number;
  batchSize?: number;
  /** Sent rows older than this are deleted; JetStream holds the messages from then on. */
  retentionSeconds?: number;
}

/** Deletes per statement, so pruning a large backlog never holds long locks. */
const PRUNE_BATCH = 5000;
/** The most often a relay prunes (a short retention prunes as often as it expires rows). */
const PRUNE_EVERY_MS = 60_000;

export interface OutboxRelay {
  start(): void;
  /** Runs a pass soon (after a desired-state change). */
  kick(): void;
  /**
   * Runs a pass soon, with rows this process just committed: the relay publishes them from
   * memory instead of reading them back (the table still decides what is unsent).
   */
  handoff(rows: readonly OutboxRecord[]): void;
  /** One pass until the outbox is drained (or another replica holds the relay lock). */
  drain(): Promise<number>;
  stop(): Promise<void>;
}

const encoder = new TextEncoder();

/** Rows handed over but not yet published; beyond this the relay reads payloads from the table. */
const MAX_HANDED_OFF = 20_000;

export function createOutboxRelay(deps: RelayDeps): OutboxRelay {
  const batchSize = deps.batchSize ?? 2000;
  const handedOff = createHandoffCache<OutboxRecord>(MAX_HANDED_OFF);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = true;
  let kicked = false;

  /** The unsent rows of one batch in id order: payloads from memory where held, else loaded. */
  async function readBatch(tx: Tx): Promise<OutboxRecord[]> {
    const ids = await unsentOutboxIds(tx, batchSize);
    if (ids.length === 0) {
      handedOff.clear();
      return [];
    }
    const { held, missing } = handedOff.take(ids);
    const loaded = new Map((await outboxRowsById(tx, missing)).map((r) => [r.id, r]));
    return ids.map((id) => held.get(id) ?? loaded.get(id)).filter((r): r is OutboxRecord => r !== undefined);
  }

  /** Publishes one batch; returns how many rows it covered (0: empty or locked elsewhere). */
  async function pass(): Promise<number> {
    let stopMark: (() => number) | undefined;
    const rows = await deps.db.transaction(async (tx) => {
      if (!(await tryLockRelay(tx))) return [];
      const stopRead = deps.metrics.desiredStageSeconds.startTimer({ stage: 'relay_read' });
      const batch = await readBatch(tx);
      if (batch.length === 0) return [];
      stopRead();
      const plan = planOutboxBatch(batch);
      const stopPublish = deps.metrics.relayPublishSeconds.startTimer();
      await publishAll(
        deps.nc,
        DESIRED_STREAM,
        plan.publish.map((row) => ({ subject: row.subject, data: encoder.encode(row.payload), msgId: row.msgId })),
      );
      stopPublish();
      stopMark = deps.metrics.desiredStageSeconds.startTimer({ stage: 'relay_mark' });
      await markOutboxSent(tx, plan.markSent);
      deps.metrics.outboxPublished.inc(plan.publish.length);
      return plan.markSent;
    });
    stopMark?.();
    // Sent and committed: from the writer's commit to here is what the outbox adds to a change.
    const at = performance.now();
    for (const handedAt of handedOff.settle(rows)) {
      deps.metrics.desiredStageSeconds.observe({ stage: 'handoff' }, (at - handedAt) / 1000);
    }
    return rows.length;
  }

  const drain = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const n = await pass();
      total += n;
      if (n < batchSize) return total;
    }
  };

  const retentionSeconds = deps.retentionSeconds ?? 3600;
  const pruneEveryMs = Math.min(PRUNE_EVERY_MS, retentionSeconds * 1000);
  let prunedAt = -Infinity;
  /** Every replica prunes (deleting is idempotent); at most once per pruneEveryMs. */
  const pruneDue = async (): Promise<void> => {
    if (performance.now() - prunedAt < pruneEveryMs) return;
    prunedAt = performance.now();
    for (;;) {
      const n = await pruneSentOutbox(deps.db, retentionSeconds, PRUNE_BATCH);
      deps.metrics.outboxPruned.inc(n);
      if (n < PRUNE_BATCH || stopped) return;
    }
  };

  const loop = (): void => {
    if (stopped) return;
    timer = undefined;
    kicked = false;
    running = drain()
      .then(pruneDue)
      .catch((err: unknown) => deps.logger.warn({ err }, 'outbox relay pass failed; retrying'))
      .finally(() => {
        if (stopped) return;
        timer = setTimeout(loop, kicked ? 0 : deps.intervalMs);
      });
  };

  const kick = (): void => {
    kicked = true;
    if (stopped || !timer) return;
    // Only reschedule when idle (waiting on the timer); a running pass sees `kicked` when it ends.
    clearTimeout(timer);
    timer = undefined;
    loop();
  };

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      loop();
    },
    handoff(rows) {
      // Past the bound the rows are simply read back from the table, as after a restart.
      if (rows.length > 0) handedOff.add(rows, performance.now());
      kick();
    },
    kick,
    drain,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
  };
}
