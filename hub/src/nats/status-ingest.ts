/**
 * Durable consumption of status reports and heartbeats. Messages are buffered from the hub's
 * durable consumer and flushed in batches: classified (drops are counted and acknowledged so
 * they never come back), coalesced per object and per cluster, written in one statement each,
 * then acknowledged. A failed write naks the batch for redelivery; nothing here can crash the hub.
 */
import type { JetStreamClient, JsMsg, ConsumerMessages } from '@nats-io/jetstream';
import { HUB_STATUS_CONSUMER, STATUS_STREAM } from '@flotilla/api';
import { eq } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import { clusters } from '../db/schema/index.js';
import {
  coalesceHeartbeats,
  coalesceStatus,
  isoMicros,
  type TimedHeartbeat,
  type TimedStatus,
} from '../domain/status-coalesce.js';
import type { HubMetrics } from '../metrics.js';
import { lockDesiredState } from '../db/locks.js';
import { recordHeartbeats } from '../repositories/clusters-repo.js';
import { republishLive } from '../repositories/desired-repo.js';
import { upsertStatuses } from '../repositories/status-repo.js';
import { classifyMessage } from './classify.js';

export interface StatusIngestDeps {
  db: Db;
  js: JetStreamClient;
  logger: Logger;
  metrics: HubMetrics;
  /** Flush when this many messages are buffered… */
  batchSize?: number;
  /** …or after this long. */
  flushIntervalMs?: number;
  /** How long the set of accepted clusters is cached. */
  clusterCacheMs?: number;
  /** Called after a batch stored status reports (wakes the rollout scheduler). */
  onStored?: () => void;
  /** Called after desired objects were queued again for restarted agent links (wakes the relay). */
  onRepublished?: () => void;
}

export interface StatusIngest {
  start(): Promise<void>;
  stop(): Promise<void>;
}

const NANOS_PER_MS = 1_000_000;

/** A batch decoded and coalesced, ready to write. */
interface DecodedBatch {
  statuses: TimedStatus[];
  beats: TimedHeartbeat[];
}

export function createStatusIngest(deps: StatusIngestDeps): StatusIngest {
  const batchSize = deps.batchSize ?? 2000;
  const flushIntervalMs = deps.flushIntervalMs ?? 25;
  const cacheMs = deps.clusterCacheMs ?? 2000;
  const buffer: JsMsg[] = [];
  let messages: ConsumerMessages | undefined;
  let timer: NodeJS.Timeout | undefined;
  let flushing: Promise<void> = Promise.resolve();
  /** Batches taken from the buffer and not yet written (one writing, at most one waiting). */
  let taken = 0;
  let accepted: { names: Set<string>; at: number } = { names: new Set(), at: 0 };

  async function acceptedClusters(): Promise<Set<string>> {
    if (Date.now() - accepted.at < cacheMs) return accepted.names;
    const rows = await deps.db.select({ name: clusters.name }).from(clusters).where(eq(clusters.state, 'accepted'));
    accepted = { names: new Set(rows.map((r) => r.name)), at: Date.now() };
    return accepted.names;
  }

  /** Decodes, checks and coalesces one batch (CPU only, apart from the cached cluster list). */
  async function classify(batch: readonly JsMsg[]): Promise<DecodedBatch> {
    const stopClassify = deps.metrics.statusBatchSeconds.startTimer({ stage: 'classify' });
    const names = await acceptedClusters();
    const statuses: TimedStatus[] = [];
    const beats: TimedHeartbeat[] = [];
    for (const m of batch) {
      const c = classifyMessage(
        // Sub-millisecond precision kept: heartbeats order by it (isoMicros).
        { subject: m.subject, data: m.data, storedAtMs: Number(m.info.timestampNanos) / NANOS_PER_MS },
        (name) => names.has(name),
      );
      if (c.type === 'status') statuses.push(c.status);
      else if (c.type === 'heartbeat') beats.push(c.heartbeat);
      else {
        deps.metrics.messagesDropped.inc({ reason: c.reason });
        deps.logger.debug({ subject: m.subject, reason: c.reason, detail: c.detail }, 'dropped status message');
      }
    }
    deps.metrics.statusReports.inc(statuses.length);
    deps.metrics.heartbeats.inc(beats.length);
    const out = { statuses: coalesceStatus(statuses), beats };
    stopClassify();
    return out;
  }

  async function store(batch: DecodedBatch): Promise<void> {
    const stopStore = deps.metrics.statusBatchSeconds.startTimer({ stage: 'store' });
    const written = await upsertStatuses(deps.db, batch.statuses);
    deps.metrics.statusWritten.inc(written);
    if (written > 0) deps.onStored?.();
    await storeHeartbeats(batch.beats);
    stopStore();
  }

  /**
   * Heartbeats, and in the same transaction a republish of the live desired objects of every
   * cluster whose agent link restarted: stored link id and queued messages commit together, so
   * a failure redelivers the heartbeat and the republish happens exactly once.
   */
  async function storeHeartbeats(beats: TimedHeartbeat[]): Promise<void> {
    const updates = coalesceHeartbeats(beats).map((b) => ({
      cluster: b.message.cluster,
      at: isoMicros(b.sentAtMs),
      agentVersion: b.message.agentVersion,
      kubernetesVersion: b.message.kubernetesVersion,
      ...(b.message.linkId ? { linkId: b.message.linkId } : {}),
    }));
    if (updates.length === 0) return;
    const republished = await deps.db.transaction(async (tx) => {
      const recorded = await recordHeartbeats(tx, updates);
      if (recorded.linkRestarted.length === 0) return 0;
      await lockDesiredState(tx);
      let n = 0;
      for (const { cluster, linkId } of recorded.linkRestarted) n += await republishLive(tx, cluster, linkId);
      deps.logger.info(
        { clusters: recorded.linkRestarted.map((r) => r.cluster), objects: n },
        'agent links restarted; republishing their desired state',
      );
      return n;
    });
    if (republished > 0) deps.onRepublished?.();
  }

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
    const classified = classify(batch);
    classified.catch(() => undefined); // handled below, in order
    flushing = flushing.then(async () => {
      try {
        await store(await classified);
        const stopAck = deps.metrics.statusBatchSeconds.startTimer({ stage: 'ack' });
        for (const m of batch) m.ack();
        stopAck();
      } catch (err) {
        deps.logger.warn({ err, messages: batch.length }, 'storing status batch failed; redelivering');
        for (const m of batch) m.nak(1000);
      } finally {
        taken--;
        flush();
      }
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
      messages = await consumer.consume({ max_messages: batchSize * 2, callback: onMessage });
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
