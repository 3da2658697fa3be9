/**
 * The desired rows of rollouts' pre-pull ImagePullJobs (domain/pre-pull-jobs.ts): their
 * `workload_id` is the owning rollout's id, so they never mix with a workload's own rows. Reads
 * the rows of one rollout, what the clusters report of the live ones, and the rollouts that
 * ended with jobs still placed.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../db/client.js';
import { desiredObjects } from '../db/schema/index.js';
import type { CurrentDesired } from '../domain/desired-plan.js';
import { prePullKey, type PrePullKey } from '../domain/pre-pull-jobs.js';
import { memberKey } from '../domain/rollouts/decide.js';
import { combinePulls, type ReportedPull } from '../domain/rollouts/pre-pull.js';
import { TERMINAL_ROLLOUT_PHASES, type ObservedPrePull } from '../domain/rollouts/types.js';

export const PRE_PULL_KIND = 'ImagePullJob';

/** Every row (tombstones included) of the rollout's pre-pull jobs, by prePullKey. */
export async function prePullRows(
  db: DbOrTx,
  rolloutId: string,
): Promise<Map<string, { key: PrePullKey; row: CurrentDesired }>> {
  const rows = await db
    .select({
      cluster: desiredObjects.clusterName,
      namespace: desiredObjects.namespace,
      name: desiredObjects.name,
      generation: desiredObjects.generation,
      deleted: desiredObjects.deleted,
      manifestHash: desiredObjects.manifestHash,
    })
    .from(desiredObjects)
    .where(and(eq(desiredObjects.workloadId, rolloutId), eq(desiredObjects.kind, PRE_PULL_KIND)));
  return new Map(
    rows.map(({ cluster, namespace, name, ...row }) => {
      const key = { cluster, namespace, name };
      return [prePullKey(key), { key, row }];
    }),
  );
}

/**
 * The pre-pull of each cluster holding live jobs of these rollouts, by memberKey(rollout,
 * cluster): a report counts only when it is about the generation last sent.
 */
export async function observePrePulls(
  db: DbOrTx,
  rolloutIds: readonly string[],
): Promise<Map<string, ObservedPrePull>> {
  const out = new Map<string, ObservedPrePull>();
  if (rolloutIds.length === 0) return out;
  const res = await db.execute<{
    owner: string;
    cluster: string;
    name: string;
    health: string | null;
    message: string | null;
  }>(sql`
    select d.workload_id::text as owner, d.cluster_name as cluster, d.name, s.health, s.message
      from desired_objects d
      left join object_status s
        on s.cluster_name = d.cluster_name and s.kind = d.kind and s.namespace = d.namespace and s.name = d.name
       and s.generation >= d.generation
     where d.workload_id = any(${sql.param([...rolloutIds])}::uuid[]) and d.kind = ${PRE_PULL_KIND} and not d.deleted`);
  const jobs = new Map<string, ReportedPull[]>();
  for (const r of res.rows) {
    const k = memberKey(r.owner, r.cluster);
    jobs.set(k, [...(jobs.get(k) ?? []), { name: r.name, health: r.health ?? undefined, message: r.message ?? '' }]);
  }
  for (const [k, list] of jobs) out.set(k, combinePulls(list));
  return out;
}

/**
 * Rollouts that are over (aborted, finished) yet still have live pre-pull jobs: only rollouts
 * whose plan pre-pulls are looked at, each through the desired rows' workload index.
 */
export async function endedWithPrePulls(db: DbOrTx): Promise<string[]> {
  const res = await db.execute<{ id: string }>(sql`
    select r.id::text as id from rollouts r
     where r.phase = any(${sql.param([...TERMINAL_ROLLOUT_PHASES])}::text[]) and r.plan ? 'prePull'
       and exists (select 1 from desired_objects d
                    where d.workload_id = r.id and d.kind = ${PRE_PULL_KIND} and not d.deleted)`);
  return res.rows.map((r) => r.id);
}
