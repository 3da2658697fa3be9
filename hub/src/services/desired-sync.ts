/**
 * Recomputes desired state inside a transaction and writes the changes with their outbox rows.
 * Callers run these in the same transaction as the change that triggered them (workload write,
 * relabel, accept, removal), so "changed in Postgres" and "queued for NATS" commit together.
 */
import { and, eq, inArray, isNull } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import { lockDesiredState } from '../db/locks.js';
import { rolloutPins, workloadRevisions, workloads } from '../db/schema/index.js';
import { planDesired, type ClusterView, type LiveWorkload, type PinnedContent } from '../domain/desired-plan.js';
import type { RevisionContent } from '../domain/manifest.js';
import type { WorkloadIdentity } from '../domain/manifest.js';
import { clusterPlacements, type ClusterRow } from '../repositories/clusters-repo.js';
import { currentDesired, writeDesiredChanges } from '../repositories/desired-repo.js';
import type { OutboxRecord } from '../repositories/outbox-repo.js';
import type { HubMetrics } from '../metrics.js';
import type { RevisionRow, WorkloadRow } from '../repositories/workloads-repo.js';

function clusterView(row: Pick<ClusterRow, 'name' | 'labels' | 'state'>): ClusterView {
  return { name: row.name, labels: row.labels, accepted: row.state === 'accepted' };
}

function identityOf(w: WorkloadRow): WorkloadIdentity {
  return { id: w.id, kind: w.kind, namespace: w.namespace, name: w.name };
}

function contentOf(r: RevisionRow): RevisionContent {
  return { revision: r.revision, metadata: r.metadata, spec: r.spec, overrides: r.overrides };
}

/**
 * The workload as clusters should have it: each cluster gets its rollout pin if it has one, else
 * the current revision ('Immediate') or the stable revision ('Rollout'). `r` is the current
 * revision; others are loaded only when needed.
 */
async function liveOf(tx: Tx, w: WorkloadRow, r: RevisionRow, clusterNames?: readonly string[]): Promise<LiveWorkload> {
  const pins = await tx
    .select()
    .from(rolloutPins)
    .where(
      and(
        eq(rolloutPins.workloadId, w.id),
        clusterNames ? inArray(rolloutPins.clusterName, [...clusterNames]) : undefined,
      ),
    );
  const base = w.updatePolicy === 'Rollout' ? w.stableRevision : r.revision;
  const wanted = [...new Set([base, ...pins.map((p) => p.revision)])].filter((n) => n !== r.revision);
  const revisions = new Map<number, RevisionContent>([[r.revision, contentOf(r)]]);
  if (wanted.length > 0) {
    const rows = await tx
      .select()
      .from(workloadRevisions)
      .where(and(eq(workloadRevisions.workloadId, w.id), inArray(workloadRevisions.revision, wanted)));
    for (const row of rows) revisions.set(row.revision, contentOf(row));
  }
  const pinned = new Map<string, PinnedContent>();
  for (const p of pins) {
    const content = revisions.get(p.revision);
    if (content) pinned.set(p.clusterName, { content, ...(p.partition !== null ? { partition: p.partition } : {}) });
  }
  return {
    identity: identityOf(w),
    content: revisions.get(base) ?? contentOf(r),
    selector: w.placement.clusterSelector,
    pinned,
  };
}

/** Takes the desired-state lock; call first in every transaction that changes desired state. */
export async function beginDesiredChange(tx: Tx): Promise<void> {
  await lockDesiredState(tx);
}

/** What one sync wrote, and how long its two halves took (for the stage histogram). */
export interface DesiredSync {
  /** Desired rows changed (one outbox row each). */
  changed: number;
  /** The outbox rows written, for the relay to publish from memory once the transaction commits. */
  outbox: OutboxRecord[];
  /** Reading clusters, current rows and pins, and planning (rendering and hashing manifests). */
  planSeconds: number;
  /** Writing the desired and outbox rows. */
  storeSeconds: number;
}

const seconds = (since: number): number => (performance.now() - since) / 1000;

/**
 * Brings every cluster's desired row of one workload in line with the workload as stored in
 * `tx` (deleted workloads turn into tombstones).
 */
export async function syncWorkload(tx: Tx, w: WorkloadRow, r: RevisionRow): Promise<DesiredSync> {
  const t0 = performance.now();
  const identity = identityOf(w);
  const clusters = (await clusterPlacements(tx)).map(clusterView);
  const current = await currentDesired(tx, identity);
  const changes = planDesired({
    identity,
    live: w.deletedAt ? undefined : await liveOf(tx, w, r),
    clusters,
    current,
    lastRevision: r.revision,
  });
  const t1 = performance.now();
  const outbox = await writeDesiredChanges(tx, identity, changes);
  return { changed: changes.length, outbox, planSeconds: (t1 - t0) / 1000, storeSeconds: seconds(t1) };
}

/** Records a sync's stages (when the caller has metrics). */
export function observeSync(metrics: HubMetrics | undefined, sync: DesiredSync): void {
  if (!metrics || sync.changed === 0) return;
  metrics.desiredStageSeconds.observe({ stage: 'plan' }, sync.planSeconds);
  metrics.desiredStageSeconds.observe({ stage: 'store' }, sync.storeSeconds);
}

/** Brings one cluster's desired rows of every live workload in line (after relabel/accept/removal). */
export async function syncCluster(tx: Tx, cluster: ClusterRow): Promise<number> {
  const rows = await tx
    .select({ workload: workloads, revision: workloadRevisions })
    .from(workloads)
    .innerJoin(
      workloadRevisions,
      and(eq(workloadRevisions.workloadId, workloads.id), eq(workloadRevisions.revision, workloads.currentRevision)),
    )
    .where(isNull(workloads.deletedAt));
  let changed = 0;
  for (const { workload, revision } of rows) {
    const identity = identityOf(workload);
    const current = await currentDesired(tx, identity, [cluster.name]);
    const changes = planDesired({
      identity,
      live: await liveOf(tx, workload, revision, [cluster.name]),
      clusters: [clusterView(cluster)],
      current,
      lastRevision: revision.revision,
    });
    await writeDesiredChanges(tx, identity, changes);
    changed += changes.length;
  }
  return changed;
}
