/**
 * Durable consumption of status reports and heartbeats. Messages are buffered from the hub's
 * durable consumer and flushed in batches: classified, admitted against what the hub placed
 * (status-admission.ts), coalesced per object and per cluster, written in one statement each,
 * then acknowledged. A failed write naks the batch for redelivery; nothing here can crash the hub.
 *
 * flotilla_hub_nats_messages_dropped_total counts every message the hub received and discarded,
 * once, by reason, when the batch holding it is acknowledged (a batch that fails and comes back
 * is counted when it finally goes through). What the STATUS stream itself discards never reaches
 * the hub and is not counted there: the stream keeps one message per subject, so a burst on one
 * subject reaches the hub as the messages it had not yet replaced (newest last).
 */
import type { JetStreamClient, JsMsg, ConsumerMessages } from '@nats-io/jetstream';
import { HUB_STATUS_CONSUMER, STATUS_STREAM } from '@flotilla/api';
import { eq } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import { clusters } from '../db/schema/index.js';
import { planLinkRepublish } from '../domain/link-republish.js';
import { admitStatuses } from '../domain/status-admission.js';
import {
  coalesceHeartbeats,
  coalesceStatus,
  isoMicros,
  statusKey,
  type TimedHeartbeat,
  type TimedStatus,
} from '../domain/status-coalesce.js';
import type { HubMetrics } from '../metrics.js';
import { lockDesiredState } from '../db/locks.js';
import { markLinksRepublished, recordHeartbeats } from '../repositories/clusters-repo.js';
import { republishLive } from '../repositories/desired-repo.js';
import { placementsOf, upsertStatuses } from '../repositories/status-repo.js';
import { classifyMessage, type DropReason } from './classify.js';

export interface StatusIngestDeps {
  db: Db;
  js: JetStreamClient;
  logger: Logger;
  metrics: HubMetrics;
  /** How far a report's reportedAt may lie ahead of when JetStream stored it. */
  clockSkewMs: number;
  /** The least time between two republishes of one cluster's desired objects (link restarts). */
  linkRepublishIntervalMs: number;
  now?: () => Date;
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

/** A batch decoded, ready to admit and write. */
interface DecodedBatch {
  statuses: TimedStatus[];
  beats: TimedHeartbeat[];
  /** Messages dropped so far, by reason (counted once the batch is acknowledged). */
  drops: Map<DropReason, number>;
}

function tally(drops: Map<DropReason, number>, reason: DropReason): void {
  drops.set(reason, (drops.get(reason) ?? 0) + 1);
}

export function createStatusIngest(deps: StatusIngestDeps): StatusIngest {
  const batchSize = deps.batchSize ?? 2000;
  const flushIntervalMs = deps.flushIntervalMs ?? 25;
  const cacheMs = deps.clusterCacheMs ?? 2000;
  const now = deps.now ?? ((): Date => new Date());
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

  /** Decodes and checks one batch (CPU only, apart from the cached cluster list). */
  async function classify(batch: readonly JsMsg[]): Promise<DecodedBatch> {
    const stopClassify = deps.metrics.statusBatchSeconds.startTimer({ stage: 'classify' });
    const names = await acceptedClusters();
    const out: DecodedBatch = { statuses: [], beats: [], drops: new Map() };
    const isAccepted = (name: string): boolean => names.has(name);
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
      if (c.type === 'status') out.statuses.push(c.status);
      else if (c.type === 'heartbeat') out.beats.push(c.heartbeat);
      else {
        tally(out.drops, c.reason);
        deps.logger.debug({ subject: m.subject, reason: c.reason, detail: c.detail }, 'dropped status message');
      }
    }
    deps.metrics.heartbeats.inc(out.beats.length);
    stopClassify();
    return out;
  }

  /** Admits the batch's reports against what the hub placed and writes the newest per object. */
  async function storeStatuses(batch: DecodedBatch): Promise<void> {
    const placements = await placementsOf(deps.db, batch.statuses);
    const { admitted, dropped } = admitStatuses(batch.statuses, (r) => placements.get(statusKey(r.message)));
    for (const d of dropped) {
      tally(batch.drops, d.reason);
      deps.logger.debug(
        { cluster: d.status.message.cluster, name: d.status.message.name, reason: d.reason },
        'dropped status report',
      );
    }
    deps.metrics.statusReports.inc(admitted.length);
    const written = await upsertStatuses(deps.db, coalesceStatus(admitted));
    deps.metrics.statusWritten.inc(written);
    if (written > 0) deps.onStored?.();
  }

  async function store(batch: DecodedBatch): Promise<void> {
    const stopStore = deps.metrics.statusBatchSeconds.startTimer({ stage: 'store' });
    await storeStatuses(batch);
    await storeHeartbeats(batch.beats);
    stopStore();
  }

  /**
   * Heartbeats, and in the same transaction a republish of the live desired objects of every
   * cluster whose agent link restarted (at most one per cluster per interval, planLinkRepublish):
   * stored link state and queued messages commit together, so a failure redelivers the heartbeat
   * and the republish happens exactly once.
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
    const at = now();
    const outcome = await deps.db.transaction(async (tx) => {
      const recorded = await recordHeartbeats(tx, updates);
      const plan = planLinkRepublish(recorded.links, at.getTime(), deps.linkRepublishIntervalMs);
      if (plan.republish.length === 0) return { objects: 0, plan };
      await lockDesiredState(tx);
      let objects = 0;
      for (const { cluster, linkId } of plan.republish) objects += await republishLive(tx, cluster, linkId);
      await markLinksRepublished(tx, plan.republish, at);
      return { objects, plan };
    });
    const { plan, objects } = outcome;
    if (plan.deferred.length > 0) {
      deps.metrics.linkRepublishes.inc({ result: 'deferred' }, plan.deferred.length);
      deps.logger.debug(
        { clusters: plan.deferred },
        'agent links restarted again within the interval; republish deferred',
      );
    }
    if (plan.republish.length === 0) return;
    deps.metrics.linkRepublishes.inc({ result: 'published' }, plan.republish.length);
    deps.logger.info(
      { clusters: plan.republish.map((r) => r.cluster), objects },
      'agent links restarted; republishing their desired state',
    );
    if (objects > 0) deps.onRepublished?.();
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
        const decoded = await classified;
        await store(decoded);
        const stopAck = deps.metrics.statusBatchSeconds.startTimer({ stage: 'ack' });
        for (const m of batch) m.ack();
        stopAck();
        for (const [reason, n] of decoded.drops) deps.metrics.messagesDropped.inc({ reason }, n);
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
