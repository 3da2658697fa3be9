/**
 * Watches the DESIRED stream for messages the hub did not publish and has them put right
 * (services/desired-repair.ts judges and republishes; this deletes what the hub never placed). An agent
 * can make nats-server publish a JetStream API answer on another cluster's desired subject (the
 * reply subject of a request it is allowed to send), and the stream then keeps that answer as the
 * object's last value (docs/adr/0008-hub-owned-consumers.md). The hub knows what it published:
 * every message is checked against the stored row (domain/desired-check.ts) and a foreign one is
 * replaced by the stored value through the outbox (so the relay's ordering holds), or deleted
 * when the hub never placed anything on that subject.
 *
 * Reads through an ordered consumer: the last message of every subject first (a sweep of what
 * is there at start), then every new message. Batches are fetched one at a time, so a flood
 * waits in the stream, not in memory. Every replica watches; two replicas repairing the same
 * message queue the same message id, and JetStream drops the second. The repair's own publish is
 * the stored value, which the check keeps. A repair the stream refuses (a stored value too large
 * for it) is held back by the relay like any refused row; the watch queues one repair per foreign
 * message it reads, never one per refusal, so it cannot loop (docs/adr/0009).
 */
import {
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  JetStreamError,
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { DESIRED_STREAM, sleep } from '@flotilla/api';
import type { Logger } from 'pino';
import type { RepairReason } from '../domain/desired-check.js';
import type { HubMetrics } from '../metrics.js';
import type { DesiredRepair, Misplaced, SeenDesired } from '../services/desired-repair.js';

export interface DesiredWatchDeps {
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** Judges what was read and queues the stored values again. */
  repair: DesiredRepair;
  logger: Logger;
  metrics: HubMetrics;
  /**
   * Bytes per fetch: bounds what a batch holds in memory. Must exceed the stream's largest
   * message (a larger one would stall the fetch); at most 100 messages are fetched at a time.
   */
  batchBytes: number;
  /** How long a fetch waits for its batch to fill (default 1 s): the most a repair waits. */
  fetchExpiresMs?: number;
  /** Pause before retrying after a failure (default 2 s). */
  retryMs?: number;
}

export interface DesiredWatch {
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Subjects named in a batch's log line. */
const LOGGED_SUBJECTS = 10;

/** Deletes the one message; already gone (replaced, or another replica) is fine. */
async function deleteMessage(jsm: JetStreamManager, seq: number): Promise<void> {
  try {
    await jsm.streams.deleteMessage(DESIRED_STREAM, seq, false);
  } catch (err) {
    if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.NoMessageFound)) throw err;
  }
}

/**
 * Counts the repairs by reason, and logs one line per batch (a flood must not flood the log)
 * naming subjects, never payloads: those are whatever was sent there and may be large or hostile.
 */
function report(deps: Pick<DesiredWatchDeps, 'logger' | 'metrics'>, bad: readonly Misplaced[]): void {
  const reasons: Partial<Record<RepairReason, number>> = {};
  for (const { verdict } of bad) {
    deps.metrics.desiredRepairs.inc({ reason: verdict.reason });
    reasons[verdict.reason] = (reasons[verdict.reason] ?? 0) + 1;
  }
  deps.logger.warn(
    { repaired: bad.length, reasons, subjects: bad.slice(0, LOGGED_SUBJECTS).map((b) => b.seen.subject) },
    'desired-state messages were not what the hub stored; put them right',
  );
}

/** Republishes what has a stored value, deletes what the hub never placed, and reports. */
async function putRight(deps: DesiredWatchDeps, bad: readonly Misplaced[]): Promise<void> {
  await deps.repair.republish(bad);
  for (const { seen, verdict } of bad) {
    if (verdict.action === 'delete') await deleteMessage(deps.jsm, seen.seq);
  }
  report(deps, bad);
}

/** Checks and repairs one batch, retrying until it went through (or the watch stops). */
async function settle(
  deps: DesiredWatchDeps,
  batch: readonly SeenDesired[],
  watch: { stopped(): boolean; pause(): Promise<void> },
): Promise<void> {
  while (!watch.stopped()) {
    try {
      const bad = await deps.repair.judge(batch);
      if (bad.length > 0) await putRight(deps, bad);
      return;
    } catch (err) {
      deps.logger.warn({ err, messages: batch.length }, 'checking desired-state messages failed; retrying');
      await watch.pause();
    }
  }
}

/** The 409 status that ends a byte-bounded fetch whose next message would not fit. */
function isBatchCompleted(err: unknown): boolean {
  // JetStreamStatusError (not exported by the client) carries the status code.
  return (
    err instanceof JetStreamError && (err as { code?: unknown }).code === 409 && /batch completed/i.test(err.message)
  );
}

export function createDesiredWatch(deps: DesiredWatchDeps): DesiredWatch {
  const expires = deps.fetchExpiresMs ?? 1000;
  const retryMs = deps.retryMs ?? 2000;
  const { logger } = deps;
  let stopped = false;
  let fetching: ConsumerMessages | undefined;
  let loop: Promise<void> = Promise.resolve();
  // Aborted by stop(): a pause between retries ends at once.
  let stopping = new AbortController();
  const pause = (): Promise<void> => sleep(retryMs, { signal: stopping.signal });
  const watch = { stopped: () => stopped, pause };

  async function fetchBatch(consumer: Consumer): Promise<SeenDesired[]> {
    const batch: SeenDesired[] = [];
    fetching = await consumer.fetch({ max_bytes: deps.batchBytes, expires });
    try {
      for await (const m of fetching) {
        batch.push({ subject: m.subject, seq: m.seq, data: m.data });
      }
    } catch (err) {
      // A fetch bounded by bytes ends with this status once the next message would not fit:
      // the batch is complete, not failed (the ordered consumer has moved past what it holds).
      if (!isBatchCompleted(err)) throw err;
    }
    return batch;
  }

  async function run(consumer: Consumer): Promise<void> {
    while (!stopped) {
      try {
        const batch = await fetchBatch(consumer);
        if (batch.length > 0) await settle(deps, batch, watch);
      } catch (err) {
        if (stopped) return;
        logger.warn({ err }, 'reading the desired-state stream failed; retrying');
        await pause();
      }
    }
  }

  return {
    async start() {
      const consumer = await deps.js.consumers.get(DESIRED_STREAM, {
        deliver_policy: DeliverPolicy.LastPerSubject,
      });
      stopped = false;
      stopping = new AbortController();
      loop = run(consumer);
    },
    async stop() {
      stopped = true;
      stopping.abort();
      fetching?.stop();
      await loop;
    },
  };
}
