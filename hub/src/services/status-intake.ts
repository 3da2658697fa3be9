/**
 * Storing what agents report, a decoded batch at a time (nats/status-ingest.ts consumes, decodes
 * and acknowledges): status reports admitted against what the hub placed (status-admission.ts)
 * and coalesced to the newest per object, then heartbeats with, in the same transaction, a
 * republish of the live desired objects of every cluster whose agent link restarted.
 */
import type { Logger } from 'pino';
import type { Db } from '../db/client.js';
import { planLinkRepublish } from '../domain/link-republish.js';
import { tally, type DecodedBatch } from '../domain/status-classify.js';
import { admitStatuses } from '../domain/status-admission.js';
import {
  coalesceHeartbeats,
  coalesceStatus,
  isoMicros,
  statusKey,
  type TimedHeartbeat,
} from '../domain/status-coalesce.js';
import type { HubMetrics } from '../metrics.js';
import { acceptedClusterNames, markLinksRepublished, recordHeartbeats } from '../repositories/clusters-repo.js';
import { placementsOf, upsertStatuses } from '../repositories/status-repo.js';
import type { DesiredChanges } from './desired-sync.js';

export interface StatusIntake {
  /** Names of the accepted clusters (cached briefly): reports from others are dropped. */
  acceptedClusters(): Promise<Set<string>>;
  /** Stores a batch: its admitted reports, then its heartbeats; adds the drops to the batch. */
  store(batch: DecodedBatch): Promise<void>;
}

export interface StatusIntakeDeps {
  db: Db;
  /** The republish of restarted links' objects (and its transaction). */
  desired: DesiredChanges;
  logger: Logger;
  metrics: HubMetrics;
  /** The least time between two republishes of one cluster's desired objects (link restarts). */
  linkRepublishIntervalMs: number;
  now?: () => Date;
  /** How long the set of accepted clusters is cached. */
  clusterCacheMs?: number;
  /** Called after a batch stored status reports (wakes the rollout scheduler). */
  onStored?: () => void;
}

/** Admits the batch's reports against what the hub placed and writes the newest per object. */
async function storeStatuses(deps: StatusIntakeDeps, batch: DecodedBatch): Promise<void> {
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

/**
 * Heartbeats, and in the same transaction a republish of the live desired objects of every
 * cluster whose agent link restarted (at most one per cluster per interval, planLinkRepublish):
 * stored link state and queued messages commit together, so a failure redelivers the heartbeat
 * and the republish happens exactly once.
 */
async function storeHeartbeats(deps: StatusIntakeDeps, beats: TimedHeartbeat[], at: Date): Promise<void> {
  const updates = coalesceHeartbeats(beats).map((b) => ({
    cluster: b.message.cluster,
    at: isoMicros(b.sentAtMs),
    agentVersion: b.message.agentVersion,
    kubernetesVersion: b.message.kubernetesVersion,
    ...(b.message.linkId ? { linkId: b.message.linkId } : {}),
  }));
  if (updates.length === 0) return;
  const { plan, objects } = await deps.desired.transaction(async (tx) => {
    const recorded = await recordHeartbeats(tx, updates);
    const plan = planLinkRepublish(recorded.links, at.getTime(), deps.linkRepublishIntervalMs);
    if (plan.republish.length === 0) return { objects: 0, plan };
    await deps.desired.lock(tx);
    let objects = 0;
    for (const { cluster, linkId } of plan.republish) {
      objects += await deps.desired.republishCluster(tx, cluster, linkId);
    }
    await markLinksRepublished(tx, plan.republish, at);
    return { objects, plan };
  });
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
}

export function createStatusIntake(deps: StatusIntakeDeps): StatusIntake {
  const cacheMs = deps.clusterCacheMs ?? 2000;
  const now = deps.now ?? ((): Date => new Date());
  let accepted: { names: Set<string>; at: number } = { names: new Set(), at: 0 };

  return {
    async acceptedClusters() {
      if (Date.now() - accepted.at < cacheMs) return accepted.names;
      accepted = { names: new Set(await acceptedClusterNames(deps.db)), at: Date.now() };
      return accepted.names;
    },
    async store(batch) {
      const stopStore = deps.metrics.statusBatchSeconds.startTimer({ stage: 'store' });
      await storeStatuses(deps, batch);
      await storeHeartbeats(deps, batch.beats, now());
      stopStore();
    },
  };
}
