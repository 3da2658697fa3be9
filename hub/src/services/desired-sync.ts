/**
 * Recomputes desired state inside a transaction and writes the changes with their outbox rows.
 * Callers run these in the same transaction as the change that triggered them (workload write,
 * relabel, accept, removal), so "changed in Postgres" and "queued for NATS" commit together.
 */
import { and, eq, isNull } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import { lockDesiredState } from '../db/locks.js';
import { workloadRevisions, workloads } from '../db/schema/index.js';
import { planDesired, type ClusterView, type LiveWorkload } from '../domain/desired-plan.js';
import type { WorkloadIdentity } from '../domain/manifest.js';
import { allClusters, type ClusterRow } from '../repositories/clusters-repo.js';
import { currentDesired, writeDesiredChanges } from '../repositories/desired-repo.js';
import type { RevisionRow, WorkloadRow } from '../repositories/workloads-repo.js';

function clusterView(row: ClusterRow): ClusterView {
  return { name: row.name, labels: row.labels, accepted: row.state === 'accepted' };
}

function identityOf(w: WorkloadRow): WorkloadIdentity {
  return { id: w.id, kind: w.kind, namespace: w.namespace, name: w.name };
}

function liveOf(w: WorkloadRow, r: RevisionRow): LiveWorkload {
  return {
    identity: identityOf(w),
    content: { revision: r.revision, metadata: r.metadata, spec: r.spec, overrides: r.overrides },
    selector: w.placement.clusterSelector,
  };
}

/** Takes the desired-state lock; call first in every transaction that changes desired state. */
export async function beginDesiredChange(tx: Tx): Promise<void> {
  await lockDesiredState(tx);
}

/**
 * Brings every cluster's desired row of one workload in line with the workload as stored in
 * `tx` (deleted workloads turn into tombstones). Returns the number of changed rows.
 */
export async function syncWorkload(tx: Tx, w: WorkloadRow, r: RevisionRow): Promise<number> {
  const identity = identityOf(w);
  const clusters = (await allClusters(tx)).map(clusterView);
  const current = await currentDesired(tx, identity);
  const changes = planDesired({
    identity,
    live: w.deletedAt ? undefined : liveOf(w, r),
    clusters,
    current,
    lastRevision: r.revision,
  });
  await writeDesiredChanges(tx, identity, changes);
  return changes.length;
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
      live: liveOf(workload, revision),
      clusters: [clusterView(cluster)],
      current,
      lastRevision: revision.revision,
    });
    await writeDesiredChanges(tx, identity, changes);
    changed += changes.length;
  }
  return changed;
}
