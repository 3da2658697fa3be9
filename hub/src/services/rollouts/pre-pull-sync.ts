/**
 * Keeps a rollout's pre-pull ImagePullJobs in line with its state (domain/rollouts/pre-pull.ts
 * says which clusters hold them, domain/pre-pull-jobs.ts what they are): placed through the same
 * desired rows and outbox as workloads, removed by tombstones when the wave starts or the
 * rollout is over. Runs in the caller's transaction, after the desired-state lock.
 */
import type { DbOrTx, Tx } from '../../db/client.js';
import { renderManifest } from '../../domain/manifest.js';
import { planPrePull, prePullJobs, prePullKey, type PrePullKey } from '../../domain/pre-pull-jobs.js';
import { prePullClusters } from '../../domain/rollouts/pre-pull.js';
import type { FrozenPlan, RolloutState } from '../../domain/rollouts/types.js';
import { endedWithPrePulls, prePullRows, PRE_PULL_KIND } from '../../repositories/pre-pull-repo.js';
import { getRollout } from '../../repositories/rollouts-repo.js';
import { getRevision, getWorkload } from '../../repositories/workloads-repo.js';
import { contentOf, identityOf, type DesiredChanges } from '../desired-sync.js';

type Obj = Record<string, unknown>;

export interface PrePullRollout {
  id: string;
  workloadId: string;
  targetRevision: number;
  plan: FrozenPlan;
}

/** The jobs the rollout's clusters should hold now, by prePullKey. */
async function wantedJobs(
  tx: Tx,
  row: PrePullRollout,
  state: RolloutState,
): Promise<Map<string, { key: PrePullKey; manifest: Obj }>> {
  const out = new Map<string, { key: PrePullKey; manifest: Obj }>();
  const clusters = prePullClusters(row.plan, state);
  if (clusters.length === 0) return out;
  const w = await getWorkload(tx, row.workloadId);
  const r = w && !w.deletedAt ? await getRevision(tx, w.id, row.targetRevision) : undefined;
  if (!w || !r) return out;
  for (const cluster of clusters) {
    const manifest = renderManifest(identityOf(w), contentOf(r), cluster);
    for (const job of prePullJobs({ rolloutId: row.id, manifest, revision: r.revision, cluster })) {
      const meta = job.metadata as { name: string; namespace: string };
      const key = { cluster, namespace: meta.namespace, name: meta.name };
      out.set(prePullKey(key), { key, manifest: job });
    }
  }
  return out;
}

/** Brings the rollout's pre-pull rows in line with `state`; returns rows changed. */
export async function syncPrePull(
  desired: DesiredChanges,
  tx: Tx,
  row: PrePullRollout,
  state: RolloutState,
): Promise<number> {
  const changes = planPrePull(await wantedJobs(tx, row, state), await prePullRows(tx, row.id), row.targetRevision);
  for (const c of changes) {
    await desired.writeObject(tx, { id: row.id, kind: PRE_PULL_KIND, namespace: c.namespace, name: c.name }, c.changes);
  }
  return changes.reduce((n, c) => n + c.changes.length, 0);
}

/**
 * Removes the jobs of rollouts that ended outside a scheduler step (an operator's abort, a
 * rollback that replaced them); returns rows changed. Takes the desired-state lock (and reads
 * again under it) only when there is something to remove.
 */
export async function sweepEndedPrePulls(db: DbOrTx, desired: DesiredChanges): Promise<number> {
  // Almost every tick finds none: one read, no transaction.
  if ((await endedWithPrePulls(db)).length === 0) return 0;
  return desired.transaction(async (tx) => {
    await desired.lock(tx);
    const ids = await endedWithPrePulls(tx);
    let changed = 0;
    for (const id of ids) {
      const row = await getRollout(tx, id);
      if (row) changed += await syncPrePull(desired, tx, row, row.state);
    }
    return changed;
  });
}
