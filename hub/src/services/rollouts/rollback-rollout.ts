/**
 * An operator's rollback of a rollout (`POST /rollouts/:id/rollback`), inside the caller's
 * transaction, and its dry run. An active rollout stops where it is first. A strategy with
 * `rollback: Staged` returns the clusters the rollout moved in reverse wave order
 * (staged-rollback.ts); otherwise a new rollout to the previous revision with the same strategy
 * brings every cluster back. The dry run explains the same plan and writes nothing.
 */
import type { RolloutPreview } from '@flotilla/api';
import type { Principal } from '../../auth/tokens.js';
import type { Tx } from '../../db/client.js';
import { abort, clustersAtTarget, isTerminalPhase } from '../../domain/rollouts/index.js';
import { stagedRollbackPlan } from '../../domain/rollouts/rollback-plan.js';
import { HubError, conflict, notFound } from '../../errors.js';
import { getRollout, recordRolloutEvent, saveRolloutState, type RolloutRow } from '../../repositories/rollouts-repo.js';
import { getRevision, getWorkload } from '../../repositories/workloads-repo.js';
import { previewOf, previewRollout, type PreviewDeps } from './preview-rollout.js';
import { startStagedRollback } from './staged-rollback.js';
import { startRollout } from './start-rollout.js';

const staged = (row: RolloutRow): boolean => row.plan.rollback === 'Staged';

/** The rollout to roll back, locked; one already rolled back is a 409 naming the phase. */
async function rollbackable(tx: Tx, id: string): Promise<RolloutRow> {
  const row = await getRollout(tx, id, true);
  if (!row) throw notFound(`rollout ${id}`);
  if (row.state.phase === 'RolledBack') {
    throw new HubError('HUB_ERR_CONFLICT', `rollout ${id} is already RolledBack`, {
      details: [{ path: 'phase', message: row.state.phase }],
    });
  }
  return row;
}

/** The clusters a staged rollback returns: those the rollout moved; none is a 409. */
function moved(row: RolloutRow): string[] {
  const clusters = clustersAtTarget(row.state);
  if (clusters.length === 0) throw conflict(`rollout ${row.id} moved no cluster; there is nothing to roll back`);
  return clusters;
}

export async function rollbackRollout(deps: PreviewDeps, tx: Tx, actor: Principal, id: string): Promise<RolloutRow> {
  const row = await rollbackable(tx, id);
  const clusters = staged(row) ? moved(row) : [];
  const at = deps.now();
  if (!isTerminalPhase(row.state.phase)) {
    const state = abort(row.state, at.getTime());
    await saveRolloutState(tx, { id: row.id, state }, at);
    const message = `aborted by ${actor.name} for a rollback`;
    await recordRolloutEvent(tx, { id: row.id, phase: state.phase }, 'warning', message, at);
  }
  if (staged(row)) {
    const started = await startStagedRollback(tx, row, clusters, at, actor.name);
    if (!started) throw notFound(`workload ${row.workloadId}`);
    return started;
  }
  return startRollout(deps, tx, actor, {
    workloadId: row.workloadId,
    revision: row.previousRevision,
    strategy: row.strategy,
    rollbackOf: row.id,
  });
}

/** The plan a rollback would follow now, explained per cluster and wave; writes nothing. */
export async function previewRollback(deps: PreviewDeps, tx: Tx, id: string): Promise<RolloutPreview> {
  const row = await rollbackable(tx, id);
  if (!staged(row)) {
    return previewRollout(deps, tx, {
      workloadId: row.workloadId,
      revision: row.previousRevision,
      strategy: row.strategy,
      rollbackOf: row.id,
      replacing: row.id,
    });
  }
  const plan = stagedRollbackPlan(row.plan, moved(row));
  const w = await getWorkload(tx, row.workloadId);
  const target = w && !w.deletedAt ? await getRevision(tx, w.id, row.previousRevision) : undefined;
  if (!w || !target) throw notFound(`workload ${row.workloadId}`);
  return previewOf(deps, tx, { w, target, plan });
}
