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
 * it loads as before. After each drain it prunes sent rows past the retention (retention.ts).
 */
import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import { createHandoffCache, type OutboxRecord, type RefusalBackoff } from '../domain/outbox-plan.js';
import { releaseRefusedOutbox } from '../repositories/outbox-repo.js';
import type { HubMetrics } from '../metrics.js';
import { createRefusalReporter } from './refusal-report.js';
import { createRelayPass, type OutboxPublisher, type PassResult } from './relay-pass.js';
import { createPruner } from './retention.js';

export interface RelayDeps {
  db: Db;
  publish: OutboxPublisher;
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

/** Rows handed over but not yet published; beyond this the relay reads payloads from the table. */
const MAX_HANDED_OFF = 20_000;

/** Passes until fewer rows than a batch are due; stops early when messages went unanswered. */
function drainer(pass: () => Promise<PassResult>, batchSize: number, logger: Logger): () => Promise<number> {
  return async () => {
    let total = 0;
    for (;;) {
      const { read, marked, unacked } = await pass();
      total += marked.length;
      if (unacked > 0) {
        // Left unsent: the next pass (after the interval) sends them again.
        logger.warn({ unacknowledged: unacked }, 'JetStream did not acknowledge every desired-state message; retrying');
        return total;
      }
      if (read < batchSize) return total;
    }
  };
}

/** Once per hub start: rows refused under earlier limits are due at once. */
function refusedReleaser(db: Db, logger: Logger): () => Promise<void> {
  let released = false;
  return async () => {
    if (released) return;
    const n = await releaseRefusedOutbox(db);
    released = true;
    if (n > 0) logger.info({ rows: n }, 'outbox rows refused before this start are tried again now');
  };
}

/**
 * Runs `work` every `intervalMs`, one run at a time; a kick while idle runs it at once, a kick
 * during a run runs it again right after.
 */
function passLoop(
  work: () => Promise<void>,
  intervalMs: number,
): { start(): void; kick(): void; stop(): Promise<void>; stopped(): boolean } {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = true;
  let kicked = false;
  const loop = (): void => {
    if (stopped) return;
    timer = undefined;
    kicked = false;
    running = work().finally(() => {
      if (stopped) return;
      timer = setTimeout(loop, kicked ? 0 : intervalMs);
    });
  };
  return {
    start() {
      if (!stopped) return;
      stopped = false;
      loop();
    },
    kick() {
      kicked = true;
      if (stopped || !timer) return;
      // Only reschedule when idle (waiting on the timer); a running pass sees `kicked` when it ends.
      clearTimeout(timer);
      timer = undefined;
      loop();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
    stopped: () => stopped,
  };
}

export function createOutboxRelay(deps: RelayDeps): OutboxRelay {
  const batchSize = deps.batchSize ?? 2000;
  const handedOff = createHandoffCache<OutboxRecord>(MAX_HANDED_OFF);
  const pass = createRelayPass({
    db: deps.db,
    publish: deps.publish,
    metrics: deps.metrics,
    batchSize,
    backoff: deps.refusalBackoff ?? DEFAULT_REFUSAL_BACKOFF,
    handedOff,
    reportRefusals: createRefusalReporter({
      metrics: deps.metrics,
      logger: deps.logger,
      intervalMs: deps.refusalLogIntervalMs ?? 30_000,
    }),
  });
  const drain = drainer(pass, batchSize, deps.logger);
  const releaseRefused = refusedReleaser(deps.db, deps.logger);
  const pruneDue = createPruner({
    db: deps.db,
    metrics: deps.metrics,
    retentionSeconds: deps.retentionSeconds ?? 3600,
    stopped: () => loop.stopped(),
  });
  const loop = passLoop(
    () =>
      releaseRefused()
        .then(drain)
        .then(pruneDue)
        .catch((err: unknown) => deps.logger.warn({ err }, 'outbox relay pass failed; retrying')),
    deps.intervalMs,
  );
  return {
    start: () => loop.start(),
    handoff(rows) {
      // Past the bound the rows are simply read back from the table, as after a restart.
      if (rows.length > 0) handedOff.add(rows, performance.now());
      loop.kick();
    },
    kick: () => loop.kick(),
    drain,
    stop: () => loop.stop(),
  };
}
