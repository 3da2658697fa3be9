/**
 * Every change of desired state: recomputing it for a workload or a cluster (domain/desired-plan),
 * writing the changed rows and appending the messages that announce them to the outbox, all in
 * the caller's transaction, so "changed in Postgres" and "queued for NATS" commit together. Also
 * queuing stored values again: a cluster's live objects after its agent's link restarted, one
 * object after something else took its subject's place in the stream.
 *
 * Callers open the transaction here (`transaction`, the outbox's: its rows reach the relay after
 * commit) and take the desired-state lock first (`lock`): writes are serialized, and outbox ids
 * follow commit order (db/locks.ts).
 */
import type { Tx } from '../db/client.js';
import { lockDesiredState } from '../db/locks.js';
import { desiredChangeMessages, republishMessage } from '../domain/desired-message.js';
import {
  planDesired,
  type ClusterView,
  type DesiredChange,
  type LiveWorkload,
  type PinnedContent,
} from '../domain/desired-plan.js';
import type { RevisionContent, WorkloadIdentity } from '../domain/manifest.js';
import type { HubMetrics } from '../metrics.js';
import type { Outbox } from '../outbox/outbox.js';
import { clusterPlacements, type ClusterRow } from '../repositories/clusters-repo.js';
import {
  currentDesired,
  desiredRow,
  liveDesiredRows,
  upsertDesired,
  type DesiredObjectKey,
} from '../repositories/desired-repo.js';
import { pinsOf } from '../repositories/rollouts-repo.js';
import { liveWorkloadHeads, revisionsOf, type RevisionRow, type WorkloadRow } from '../repositories/workloads-repo.js';

/** What one workload sync wrote, and how long its two halves took (for the stage histogram). */
export interface DesiredSync {
  /** Desired rows changed (one outbox row each). */
  changed: number;
  /** Reading clusters, current rows and pins, and planning (rendering and hashing manifests). */
  planSeconds: number;
  /** Writing the desired and outbox rows. */
  storeSeconds: number;
}

export interface DesiredChanges {
  /** Runs `work` in one transaction; the outbox rows it appended go to the relay after commit. */
  transaction: Outbox['transaction'];
  /** Takes the desired-state lock; call first in every transaction that changes desired state. */
  lock(tx: Tx): Promise<void>;
  /**
   * Brings every cluster's desired row of one workload in line with the workload as stored in
   * `tx` (a deleted workload's rows turn into tombstones); `r` is its current revision.
   */
  syncWorkload(tx: Tx, w: WorkloadRow, r: RevisionRow): Promise<DesiredSync>;
  /** Brings one cluster's rows of every live workload in line (relabel, accept, removal); returns rows changed. */
  syncCluster(tx: Tx, cluster: Pick<ClusterRow, 'name' | 'labels' | 'state'>): Promise<number>;
  /**
   * Queues every live object of a cluster again for its agent's new link (the message ids name
   * the link, so the stream's duplicate window does not swallow them); returns how many.
   */
  republishCluster(tx: Tx, cluster: string, linkId: string): Promise<number>;
  /**
   * Queues the stored value of one object again (`tag`: the repaired message's stream sequence);
   * false when the hub holds no row for it. Under the lock the row read is the newest and its
   * outbox row sorts after every earlier change.
   */
  repair(tx: Tx, key: DesiredObjectKey, tag: string): Promise<boolean>;
  /**
   * Writes planned changes of one object that no workload sync owns (a rollout's pre-pull jobs:
   * `identity.id` is their owner) and queues their messages.
   */
  writeObject(tx: Tx, identity: WorkloadIdentity, changes: readonly DesiredChange[]): Promise<void>;
}

function clusterView(row: Pick<ClusterRow, 'name' | 'labels' | 'state'>): ClusterView {
  return { name: row.name, labels: row.labels, accepted: row.state === 'accepted' };
}

export function identityOf(w: WorkloadRow): WorkloadIdentity {
  return { id: w.id, kind: w.kind, namespace: w.namespace, name: w.name };
}

export function contentOf(r: RevisionRow): RevisionContent {
  return { revision: r.revision, metadata: r.metadata, spec: r.spec, overrides: r.overrides };
}

/**
 * The workload as clusters should have it: each cluster gets its rollout pin if it has one, else
 * the current revision ('Immediate') or the stable revision ('Rollout'). `r` is the current
 * revision; others are loaded only when needed.
 */
async function liveOf(tx: Tx, w: WorkloadRow, r: RevisionRow, clusterNames?: readonly string[]): Promise<LiveWorkload> {
  const pins = await pinsOf(tx, w.id, clusterNames);
  const base = w.updatePolicy === 'Rollout' ? w.stableRevision : r.revision;
  const wanted = [...new Set([base, ...pins.map((p) => p.revision)])].filter((n) => n !== r.revision);
  const revisions = new Map<number, RevisionContent>([[r.revision, contentOf(r)]]);
  for (const row of await revisionsOf(tx, w.id, wanted)) revisions.set(row.revision, contentOf(row));
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

const seconds = (since: number): number => (performance.now() - since) / 1000;

/** The clusters a sync plans for; `only`: just these clusters' rows are read (a cluster change). */
interface SyncScope {
  clusters: readonly ClusterView[];
  only?: readonly string[];
}

/** Plans one workload's rows (`r`: its current revision), writes them and queues their messages. */
async function write(
  outbox: Pick<Outbox, 'appendIn'>,
  tx: Tx,
  { w, r }: { w: WorkloadRow; r: RevisionRow },
  { clusters, only }: SyncScope,
): Promise<{ changed: number; plannedAt: number }> {
  const identity = identityOf(w);
  const current = await currentDesired(tx, identity, only);
  const changes = planDesired({
    identity,
    live: w.deletedAt ? undefined : await liveOf(tx, w, r, only),
    clusters,
    current,
    lastRevision: r.revision,
  });
  const plannedAt = performance.now();
  const now = new Date();
  await upsertDesired(tx, identity, changes, now);
  await outbox.appendIn(tx, desiredChangeMessages(identity, changes, now));
  return { changed: changes.length, plannedAt };
}

export function createDesiredChanges(outbox: Outbox): DesiredChanges {
  return {
    transaction: (work) => outbox.transaction(work),
    lock: lockDesiredState,

    async syncWorkload(tx, w, r) {
      const t0 = performance.now();
      const clusters = (await clusterPlacements(tx)).map(clusterView);
      const { changed, plannedAt } = await write(outbox, tx, { w, r }, { clusters });
      return { changed, planSeconds: (plannedAt - t0) / 1000, storeSeconds: seconds(plannedAt) };
    },

    async syncCluster(tx, cluster) {
      let changed = 0;
      for (const { workload, revision } of await liveWorkloadHeads(tx)) {
        changed += (
          await write(
            outbox,
            tx,
            { w: workload, r: revision },
            { clusters: [clusterView(cluster)], only: [cluster.name] },
          )
        ).changed;
      }
      return changed;
    },

    async republishCluster(tx, cluster, linkId) {
      const rows = await liveDesiredRows(tx, cluster);
      const now = new Date();
      await outbox.appendIn(
        tx,
        rows.map((row) => republishMessage(row, `link-${linkId}`, now)),
      );
      return rows.length;
    },

    async repair(tx, key, tag) {
      const row = await desiredRow(tx, key);
      if (!row) return false;
      await outbox.appendIn(tx, [republishMessage(row, `repair-${tag}`, new Date())]);
      return true;
    },

    async writeObject(tx, identity, changes) {
      const now = new Date();
      await upsertDesired(tx, identity, changes, now);
      await outbox.appendIn(tx, desiredChangeMessages(identity, changes, now));
    },
  };
}

/** Records a sync's stages (when the caller has metrics). */
export function observeSync(metrics: HubMetrics | undefined, sync: DesiredSync): void {
  if (!metrics || sync.changed === 0) return;
  metrics.desiredStageSeconds.observe({ stage: 'plan' }, sync.planSeconds);
  metrics.desiredStageSeconds.observe({ stage: 'store' }, sync.storeSeconds);
}
