/**
 * Revision skew of a rollout's member clusters: which revision the hub sends each one and which
 * revision its agent last reported running, and how many run each revision. A rollout whose
 * members run more than one revision is skewed (mid-rollout that is expected; after the rollout,
 * a cluster left behind). Pure.
 */
import { memberKey, type FleetView, type RolloutRun } from './decide.js';

export interface MemberRevision {
  /** What the hub sends the cluster now; absent when nothing (or a tombstone) is sent. */
  desired?: number;
  /** What the cluster's agent last reported running; absent before its first report. */
  running?: number;
}

export interface RevisionSkew {
  members: Map<string, MemberRevision>;
  /** Clusters per running revision, lowest revision first. */
  revisions: { revision: number; clusters: number }[];
  skew: boolean;
}

export function revisionSkew(run: Pick<RolloutRun, 'workloadId' | 'plan'>, view: FleetView): RevisionSkew {
  const members = new Map<string, MemberRevision>();
  const counts = new Map<number, number>();
  for (const name of run.plan.waves.flatMap((w) => w.members)) {
    const d = view.desired.get(memberKey(run.workloadId, name));
    const running = view.status.get(memberKey(run.workloadId, name))?.revision;
    members.set(name, {
      ...(d && !d.deleted ? { desired: d.revision } : {}),
      ...(running === undefined ? {} : { running }),
    });
    if (running !== undefined) counts.set(running, (counts.get(running) ?? 0) + 1);
  }
  const revisions = [...counts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([revision, clusters]) => ({ revision, clusters }));
  return { members, revisions, skew: revisions.length > 1 };
}
