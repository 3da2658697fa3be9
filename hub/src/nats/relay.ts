/**
 * The outbox relay: publishes committed outbox rows to the DESIRED stream and marks them sent.
 * Publishing happens inside a transaction holding the relay lock, and rows are marked only
 * after JetStream acknowledged them, so a crash anywhere loses nothing: unmarked rows are
 * published again by the next relay and JetStream drops the duplicates by `msgID`.
 * Each message is settled by itself (domain/outbox-plan.ts): a refused one (too large, or a new
 * subject while the stream is full) stays unsent and is held back with a backoff while later
 * rows go on, and is tried again at once when a hub starts (with possibly new limits).
 * A writer in this process hands its committed rows over (`handoff`), so the relay reads only
 * which ids are due and not their payloads; rows it does not hold (other replicas, a restart)
 * it loads as before. Rows sent longer ago than the retention are deleted, so the table holds
 * the unsent work and a recent history, not every change ever made.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { DESIRED_STREAM } from '@flotilla/api';
import type { Logger } from 'pino';
import type { Db, Tx } from '../db/client.js';
import { tryLockRelay } from '../db/locks.js';
import {
  createHandoffCache,
  planOutboxBatch,
  settleOutboxBatch,
  type RefusalBackoff,
  type RefusedRow,
} from '../domain/outbox-plan.js';
import {
  dueOutboxIds,
  outboxRowsById,
  pruneSentOutbox,
  releaseRefusedOutbox,
  settleOutbox,
  type OutboxRecord,
} from '../repositories/outbox-repo.js';
import type { HubMetrics } from '../metrics.js';
import { publishAll } from './bulk-publish.js';
import { createRefusalReporter } from './refusal-report.js';

export interface RelayDeps {
  db: Db;
  nc: NatsConnection;
  logger: Logger;
  metrics: HubMetrics;
  intervalMs: number;
  batchSize?: number;
  /** Sent rows older than this are deleted; JetStream holds the messages from then on. */
  retentionSeconds?: number;
  /** How long a refused row is held back (default 1 s, doubling per refusal up to 30 s). */
  refusalBackoff?: RefusalBackoff;
  /** At most one log line about refusals per this long (default 30 s); all are counted. */
  refusalLogIntervalMs?: number;
}

const DEFAULT_REFUSAL_BACKOFF: RefusalBackoff = { baseMs: 1000, maxMs: 30_000 };

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
  /** Passes until no more rows are due (or another replica holds the relay lock); returns rows marked sent. */
  drain(): Promise<number>;
  stop(): Promise<void>;
}

const encoder = new TextEncoder();

/** Rows handed over but not yet published; beyond this the relay reads payloads from the table. */
const MAX_HANDED_OFF = 20_000;

/** One pass: rows read (due), ids marked sent, rows without an answer, rows refused. */
interface PassResult {
  read: number;
  marked: number[];
  unacked: number;
  refused: RefusedRow[];
}

const NOTHING: PassResult = { read: 0, marked: [], unacked: 0, refused: [] };

type BatchRow = OutboxRecord & { attempts: number };

export function createOutboxRelay(deps: RelayDeps): OutboxRelay {
  const batchSize = deps.batchSize ?? 2000;
  const backoff = deps.refusalBackoff ?? DEFAULT_REFUSAL_BACKOFF;
  const handedOff = createHandoffCache<OutboxRecord>(MAX_HANDED_OFF);
  const reportRefusals = createRefusalReporter({
    metrics: deps.metrics,
    logger: deps.logger,
    intervalMs: deps.refusalLogIntervalMs ?? 30_000,
  });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = true;
  let kicked = false;
  let refusedReleased = false;

  /** The due rows of one batch in id order: payloads from memory where held, else loaded. */
  async function readBatch(tx: Tx): Promise<BatchRow[]> {
    const due = await dueOutboxIds(tx, batchSize);
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

  /** Publishes one batch and settles every message's outcome. */
  async function pass(): Promise<PassResult> {
    let stopMark: (() => number) | undefined;
    const result = await deps.db.transaction(async (tx): Promise<PassResult> => {
      if (!(await tryLockRelay(tx))) return NOTHING;
      const stopRead = deps.metrics.desiredStageSeconds.startTimer({ stage: 'relay_read' });
      const batch = await readBatch(tx);
      if (batch.length === 0) return NOTHING;
      stopRead();
      const plan = planOutboxBatch(batch);
      const stopPublish = deps.metrics.relayPublishSeconds.startTimer();
      const outcomes = await publishAll(
        deps.nc,
        DESIRED_STREAM,
        plan.publish.map((row) => ({ subject: row.subject, data: encoder.encode(row.payload), msgId: row.msgId })),
      );
      stopPublish();
      const settlement = settleOutboxBatch(plan.publish, outcomes, backoff);
      stopMark = deps.metrics.desiredStageSeconds.startTimer({ stage: 'relay_mark' });
      const marked = await settleOutbox(tx, settlement);
      deps.metrics.outboxPublished.inc(settlement.acked.length);
      return { read: batch.length, marked, unacked: settlement.unacked.length, refused: settlement.refused };
    });
    stopMark?.();
    reportRefusals(result.refused);
    // Sent and committed: from the writer's commit to here is what the outbox adds to a change.
    const at = performance.now();
    for (const handedAt of handedOff.settle(result.marked)) {
      deps.metrics.desiredStageSeconds.observe({ stage: 'handoff' }, (at - handedAt) / 1000);
    }
    return result;
  }

  /** Passes until fewer rows than a batch are due; stops early when messages went unanswered. */
  const drain = async (): Promise<number> => {
    let total = 0;
    for (;;) {
      const { read, marked, unacked } = await pass();
      total += marked.length;
      if (unacked > 0) {
        // Left unsent: the next pass (after the interval) sends them again.
        deps.logger.warn(
          { unacknowledged: unacked },
          'JetStream did not acknowledge every desired-state message; retrying',
        );
        return total;
      }
      if (read < batchSize) return total;
    }
  };

  /** Once per hub start: rows refused under earlier limits are due at once. */
  const releaseRefused = async (): Promise<void> => {
    if (refusedReleased) return;
    const n = await releaseRefusedOutbox(deps.db);
    refusedReleased = true;
    if (n > 0) deps.logger.info({ rows: n }, 'outbox rows refused before this start are tried again now');
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
    running = releaseRefused()
      .then(drain)
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
