/**
 * Durable consumption of status reports and heartbeats. Messages are buffered from the hub's
 * durable consumer and flushed in batches: classified (domain/status-classify.ts), stored
 * (services/status-intake.ts: admitted against what the hub placed, coalesced per object and per
 * cluster, written in one statement each), then acknowledged. A failed write naks the batch for
 * redelivery; nothing here can crash the hub.
 *
 * flotilla_hub_nats_messages_dropped_total counts every message the hub received and discarded,
 * once, by reason, when the batch holding it is acknowledged (a batch that fails and comes back
 * is counted when it finally goes through). What the STATUS stream itself discards never reaches
 * the hub and is not counted there: the stream keeps one message per subject, so a burst on one
 * subject reaches the hub as the messages it had not yet replaced (newest last).
 */
import type { JetStreamClient, JsMsg, ConsumerMessages } from '@nats-io/jetstream';
import { HUB_STATUS_CONSUMER, STATUS_STREAM } from '@flotilla/api';
import type { Logger } from 'pino';
import { createClusterRateLimiter, type ClusterRateLimiter } from '../domain/cluster-rate.js';
import { classifyMessage, tally, type DecodedBatch } from '../domain/status-classify.js';
import type { BucketRule } from '../domain/token-bucket.js';
import type { HubMetrics } from '../metrics.js';
import type { StatusIntake } from '../services/status-intake.js';

export interface StatusIngestDeps {
  js: JetStreamClient;
  /** Stores each classified batch (and knows the accepted clusters). */
  intake: StatusIntake;
  logger: Logger;
  metrics: HubMetrics;
  /** How far a report's reportedAt may lie ahead of when JetStream stored it. */
  clockSkewMs: number;
  /** Each cluster's budget of status reports (a flood from one is dropped, not stored). */
  perClusterRate: BucketRule;
  now?: () => number;
  /** Flush when this many messages are buffered… */
  batchSize?: number;
  /** …or after this long. */
  flushIntervalMs?: number;
}

export interface StatusIngest {
  start(): Promise<void>;
  stop(): Promise<void>;
}

const NANOS_PER_MS = 1_000_000;

/** Decodes and checks one batch (CPU only, apart from the cached cluster list). */
async function classify(
  deps: StatusIngestDeps,
  limiter: ClusterRateLimiter,
  batch: readonly JsMsg[],
): Promise<DecodedBatch> {
  const stopClassify = deps.metrics.statusBatchSeconds.startTimer({ stage: 'classify' });
  const names = await deps.intake.acceptedClusters();
  const out: DecodedBatch = { statuses: [], beats: [], drops: new Map() };
  const isAccepted = (name: string): boolean => names.has(name);
  const now = (deps.now ?? Date.now)();
  for (const m of batch) {
    const c = classifyMessage(
      // Sub-millisecond precision kept: heartbeats and reports order by it (isoMicros).
      {
        subject: m.subject,
        data: m.data,
        storedAtMs: Number(m.info.timestampNanos) / NANOS_PER_MS,
        streamSequence: m.seq,
      },
      { isAccepted, clockSkewMs: deps.clockSkewMs },
    );
    if (c.type === 'status') {
      const cluster = c.status.message.cluster;
      if (limiter.admit(cluster, now)) out.statuses.push(c.status);
      else {
        tally(out.drops, 'rate_limit');
        deps.metrics.statusRateLimited.inc({ cluster });
      }
    } else if (c.type === 'heartbeat') out.beats.push(c.heartbeat);
    else {
      tally(out.drops, c.reason);
      deps.logger.debug({ subject: m.subject, reason: c.reason, detail: c.detail }, 'dropped status message');
    }
  }
  deps.metrics.heartbeats.inc(out.beats.length);
  stopClassify();
  return out;
}

/** Stores a decoded batch, then acknowledges it and counts its drops; a failure naks it for redelivery. */
async function settle(
  deps: StatusIngestDeps,
  batch: readonly JsMsg[],
  classified: Promise<DecodedBatch>,
): Promise<void> {
  try {
    const decoded = await classified;
    await deps.intake.store(decoded);
    const stopAck = deps.metrics.statusBatchSeconds.startTimer({ stage: 'ack' });
    for (const m of batch) m.ack();
    stopAck();
    for (const [reason, n] of decoded.drops) deps.metrics.messagesDropped.inc({ reason }, n);
  } catch (err) {
    deps.logger.warn({ err, messages: batch.length }, 'storing status batch failed; redelivering');
    for (const m of batch) m.nak(1000);
  }
}

export function createStatusIngest(deps: StatusIngestDeps): StatusIngest {
  const batchSize = deps.batchSize ?? 2000;
  const limiter = createClusterRateLimiter(deps.perClusterRate);
  const flushIntervalMs = deps.flushIntervalMs ?? 25;
  const buffer: JsMsg[] = [];
  let messages: ConsumerMessages | undefined;
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();
  /** Batches taken from the buffer and not yet written (one writing, at most one waiting). */
  let taken = 0;

  function flush(): void {
    if (timer) clearTimeout(timer);
    timer = undefined;
    // One batch writing and one waiting behind it is enough: under load, messages gather in the
    // buffer meanwhile and go as one larger batch when the write ends, instead of a small batch
    // per flush interval queueing behind a slow write (fewer, bigger statements).
    if (buffer.length === 0 || taken >= 2) return;
    const batch = buffer.splice(0, batchSize);
    taken++;
    deps.metrics.statusBatchSize.observe(batch.length);
    // Decoding this batch overlaps the write of the one before (the hub's CPU and Postgres work
    // side by side); writes and acks stay one batch at a time, in order.
    const classified = classify(deps, limiter, batch);
    classified.catch(() => undefined); // handled in settle, in order
    flushing = flushing.then(async () => {
      await settle(deps, batch, classified);
      taken--;
      flush();
    });
  }

  function onMessage(m: JsMsg): void {
    buffer.push(m);
    if (buffer.length >= batchSize) flush();
    else timer ??= setTimeout(flush, flushIntervalMs);
  }

  return {
    async start() {
      const consumer = await deps.js.consumers.get(STATUS_STREAM, HUB_STATUS_CONSUMER);
      // Pulls expire after 10 s (the client's default is 30 s): after a restart of the whole NATS
      // cluster the pending pulls are gone, and the client notices missed heartbeats only after
      // two of them (half the expiry each), so this is how long the hub reads nothing.
      messages = await consumer.consume({ max_messages: batchSize * 2, expires: 10_000, callback: onMessage });
    },
    async stop() {
      await messages?.close();
      flush();
      // Each write flushes what gathered behind it: wait until the chain stops growing.
      let last: Promise<void>;
      do {
        last = flushing;
        await last;
      } while (last !== flushing);
    },
  };
}
