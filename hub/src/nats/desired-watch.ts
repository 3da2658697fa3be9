/**
 * Watches the DESIRED stream for messages the hub did not publish and puts them right. An agent
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
  type Consumer,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { DESIRED_STREAM, parseDesiredSubject } from '@flotilla/api';
import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import { lockDesiredState } from '../db/locks.js';
import { checkDesired, type DesiredVerdict, type RepairReason } from '../domain/desired-check.js';
import type { HubMetrics } from '../metrics.js';
import { queueDesiredRepair, storedDesired, type DesiredObjectKey } from '../repositories/desired-repo.js';

export interface DesiredWatchDeps {
  db: Db;
  js: JetStreamClient;
  jsm: JetStreamManager;
  logger: Logger;
  metrics: HubMetrics;
  /** Called after repairs were queued in the outbox (wakes the relay). */
  onRepaired: () => void;
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

interface Seen {
  subject: string;
  seq: number;
  data: Uint8Array;
}

type Judged = { seen: Seen; verdict: Exclude<DesiredVerdict, { action: 'keep' }> };

/** Subjects named in a batch's log line. */
const LOGGED_SUBJECTS = 10;

export function createDesiredWatch(deps: DesiredWatchDeps): DesiredWatch {
  const expires = deps.fetchExpiresMs ?? 1000;
  const retryMs = deps.retryMs ?? 2000;
  const { logger, metrics } = deps;
  let stopped = false;
  let fetching: ConsumerMessages | undefined;
  let loop: Promise<void> = Promise.resolve();
  let wake: () => void = () => undefined;

  const pause = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      wake = () => {
        clearTimeout(t);
        resolve();
      };
    });

  /** The messages of a batch that are not what the hub stored. */
  async function judge(batch: readonly Seen[]): Promise<Judged[]> {
    const keys = batch.map((m) => parseDesiredSubject(m.subject)).filter((k): k is DesiredObjectKey => !!k);
    const stored = await storedDesired(deps.db, keys);
    const out: Judged[] = [];
    for (const seen of batch) {
      const verdict = checkDesired(seen.subject, seen.data, (k) => stored.get(k));
      if (verdict.action !== 'keep') out.push({ seen, verdict });
    }
    return out;
  }

  /** Deletes the one message; already gone (replaced, or another replica) is fine. */
  async function deleteMessage(seq: number): Promise<void> {
    try {
      await deps.jsm.streams.deleteMessage(DESIRED_STREAM, seq, false);
    } catch (err) {
      if (!(err instanceof JetStreamApiError && err.code === JetStreamApiCodes.NoMessageFound)) throw err;
    }
  }

  async function repair(bad: readonly Judged[]): Promise<void> {
    const republish = bad.filter((b) => b.verdict.action === 'republish');
    if (republish.length > 0) {
      await deps.db.transaction(async (tx) => {
        await lockDesiredState(tx);
        for (const { seen, verdict } of republish) {
          // The check saw a row; were it gone by now, the message is left for the next look.
          if (verdict.action === 'republish') await queueDesiredRepair(tx, verdict.key, String(seen.seq));
        }
      });
      deps.onRepaired();
    }
    for (const { seen, verdict } of bad) {
      if (verdict.action === 'delete') await deleteMessage(seen.seq);
    }
    const reasons: Partial<Record<RepairReason, number>> = {};
    for (const { verdict } of bad) {
      metrics.desiredRepairs.inc({ reason: verdict.reason });
      reasons[verdict.reason] = (reasons[verdict.reason] ?? 0) + 1;
    }
    // One line per batch (a flood must not flood the log), naming subjects, never payloads: those
    // are whatever was sent there and may be large or hostile.
    logger.warn(
      { repaired: bad.length, reasons, subjects: bad.slice(0, LOGGED_SUBJECTS).map((b) => b.seen.subject) },
      'desired-state messages were not what the hub stored; put them right',
    );
  }

  /** Checks and repairs one batch, retrying until it went through (or the watch stops). */
  async function settle(batch: readonly Seen[]): Promise<void> {
    while (!stopped) {
      try {
        const bad = await judge(batch);
        if (bad.length > 0) await repair(bad);
        return;
      } catch (err) {
        logger.warn({ err, messages: batch.length }, 'checking desired-state messages failed; retrying');
        await pause(retryMs);
      }
    }
  }

  async function fetchBatch(consumer: Consumer): Promise<Seen[]> {
    const batch: Seen[] = [];
    fetching = await consumer.fetch({ max_bytes: deps.batchBytes, expires });
    for await (const m of fetching) {
      batch.push({ subject: m.subject, seq: m.seq, data: m.data });
    }
    return batch;
  }

  async function run(consumer: Consumer): Promise<void> {
    while (!stopped) {
      try {
        const batch = await fetchBatch(consumer);
        if (batch.length > 0) await settle(batch);
      } catch (err) {
        if (stopped) return;
        logger.warn({ err }, 'reading the desired-state stream failed; retrying');
        await pause(retryMs);
      }
    }
  }

  return {
    async start() {
      const consumer = await deps.js.consumers.get(DESIRED_STREAM, {
        deliver_policy: DeliverPolicy.LastPerSubject,
      });
      stopped = false;
      loop = run(consumer);
    },
    async stop() {
      stopped = true;
      wake();
      fetching?.stop();
      await loop;
    },
  };
}
