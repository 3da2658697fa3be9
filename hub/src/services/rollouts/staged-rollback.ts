/**
 * Starting a staged rollback — in the step that failed a rollout (same transaction), or at an
 * operator's rollback of a rollout whose strategy says `rollback: Staged`: a rollout of its own, to the failed rollout's previous revision, over the clusters it moved in reverse wave
 * order (domain/rollouts/rollback-plan.ts). The failed rollout keeps its pins until the rollback
 * moves each cluster back; the scheduler steps the rollback from its next tick on.
 */
import type { Tx } from '../../db/client.js';
import { initialState } from '../../domain/rollouts/engine.js';
import { stagedRollbackPlan, strategyOfPlan } from '../../domain/rollouts/rollback-plan.js';
import { recordAudit } from '../../repositories/audit-repo.js';
import { insertRollout, recordRolloutEvent, type RolloutRow } from '../../repositories/rollouts-repo.js';
import { getWorkload } from '../../repositories/workloads-repo.js';

/** Who the audit log names for what the scheduler starts by itself. */
const SCHEDULER = 'scheduler';

export async function startStagedRollback(
  tx: Tx,
  failed: RolloutRow,
  moved: readonly string[],
  at: Date,
  actor = SCHEDULER,
): Promise<RolloutRow | undefined> {
  const w = await getWorkload(tx, failed.workloadId);
  if (!w || w.deletedAt) return undefined;
  const plan = stagedRollbackPlan(failed.plan, moved);
  const state = initialState(plan, at.getTime());
  const row = await insertRollout(tx, {
    workloadId: w.id,
    targetRevision: failed.previousRevision,
    previousRevision: w.stableRevision,
    strategy: strategyOfPlan(plan),
    plan,
    state,
    phase: state.phase,
    rollbackOf: failed.id,
    createdBy: actor,
    createdAt: at,
    updatedAt: at,
  });
  const order = plan.waves.map((wave) => `${wave.name}: ${wave.members.join(', ')}`).join('; then ');
  await recordRolloutEvent(
    tx,
    { id: row.id, phase: state.phase },
    'warning',
    `staged rollback of ${failed.id} created by ${actor === SCHEDULER ? 'the scheduler' : actor}: revision ${failed.targetRevision} → ` +
      `${failed.previousRevision}, in reverse wave order (${order})`,
    at,
  );
  await recordAudit(tx, {
    actor,
    action: 'rollout.rollback',
    targetType: 'rollout',
    targetId: row.id,
    details: { workloadId: w.id, rollbackOf: failed.id, staged: true, clusters: [...moved] },
  });
  return row;
}
