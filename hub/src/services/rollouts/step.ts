/**
 * One step of one rollout, in one transaction: lock the row, observe its clusters, decide
 * (domain/rollouts/decide.ts), carry out the actions (pins, the stable revision, desired state
 * and its outbox rows), record the events and save the new state — all committed together, so a
 * hub that stops at any point resumes from exactly what was committed, never repeating or
 * skipping a cluster.
 */
import type { Tx } from '../../db/client.js';
import { decide, writesDesired, type Decision, type Liveness } from '../../domain/rollouts/decide.js';
import { isSteppablePhase, type RolloutAction } from '../../domain/rollouts/types.js';
import type { HubMetrics } from '../../metrics.js';
import { observeRollouts } from '../../repositories/rollout-observations.js';
import {
  deletePins,
  getRollout,
  insertRolloutEvents,
  saveRolloutState,
  upsertPin,
  type RolloutRow,
} from '../../repositories/rollouts-repo.js';
import { getRevision, getWorkload, setStableRevision } from '../../repositories/workloads-repo.js';
import { observeSync, type DesiredChanges, type DesiredSync } from '../desired-sync.js';
import type { RolloutNotifier } from './notifier.js';
import { syncPrePull } from './pre-pull-sync.js';
import { startStagedRollback } from './staged-rollback.js';

export interface StepOutcome {
  rolloutId: string;
  changed: boolean;
  desiredChanged: number;
}

/** A step that found it must write desired state but did not hold the lock (it changed nothing). */
export type StepResult = StepOutcome & { needsDesired?: true };

export interface StepDeps {
  desired: DesiredChanges;
  now: () => Date;
  /** How the hub judges what it hears, at the moment of the decision. */
  liveness: () => Liveness;
  metrics?: HubMetrics | undefined;
  notifier?: RolloutNotifier | undefined;
}

/** Pins, stable revision, pre-pull jobs and desired state of a step that writes them; returns the sync. */
async function carryOut(
  deps: StepDeps,
  tx: Tx,
  row: RolloutRow,
  d: Decision,
  at: Date,
): Promise<DesiredSync | undefined> {
  const w = await getWorkload(tx, row.workloadId, true);
  let pinsChanged = false;
  for (const a of d.actions) {
    if (a.type !== 'setRevision') continue;
    const revision = a.revision === 'target' ? row.targetRevision : row.previousRevision;
    await upsertPin(
      tx,
      { workloadId: row.workloadId, clusterName: a.cluster, revision, partition: a.partition ?? null },
      at,
    );
    pinsChanged = true;
  }
  if (d.state.phase === 'Succeeded') await setStableRevision(tx, row.workloadId, row.targetRevision, at);
  if (d.state.phase === 'Succeeded' || d.state.phase === 'RolledBack') {
    await deletePins(tx, row.workloadId);
    pinsChanged = true;
  }
  const prePulled = row.plan.prePull ? await syncPrePull(deps.desired, tx, row, d.state) : 0;
  if (!pinsChanged || !w || w.deletedAt)
    return prePulled > 0 ? { changed: prePulled, planSeconds: 0, storeSeconds: 0 } : undefined;
  const head = (await getWorkload(tx, w.id))!;
  const revision = await getRevision(tx, w.id, head.currentRevision);
  return deps.desired.syncWorkload(tx, head, revision!);
}

/**
 * Steps one rollout. `lockDesired` false is for a step expected to change only the rollout's own
 * state: it takes no desired-state lock, so such steps run side by side; if it turns out to need
 * desired writes after all, it changes nothing and says `needsDesired`.
 */
export async function stepRollout(deps: StepDeps, rolloutId: string, lockDesired: boolean): Promise<StepResult> {
  const at = deps.now();
  const unchanged = { rolloutId, changed: false, desiredChanged: 0 };
  let sync: DesiredSync | undefined;
  let rollbackId: string | undefined;
  const outcome = await deps.desired.transaction(async (tx): Promise<StepResult> => {
    // The desired-state lock comes first in every writer of desired state (REST, cluster
    // changes, here): it keeps outbox order = commit order and lock order the same everywhere.
    if (lockDesired) await deps.desired.lock(tx);
    const row = await getRollout(tx, rolloutId, true);
    if (!row || !isSteppablePhase(row.state.phase)) return unchanged;
    const d = decide(row, await observeRollouts(tx, [row]), at, deps.liveness());
    if (!d.changed) return unchanged;
    const needsDesired = writesDesired(d.state, d.actions);
    if (needsDesired && !lockDesired) return { ...unchanged, needsDesired: true };
    if (needsDesired) sync = await carryOut(deps, tx, row, d, at);
    const events = d.actions.filter((a): a is Extract<RolloutAction, { type: 'event' }> => a.type === 'event');
    await insertRolloutEvents(tx, row.id, d.state.phase, events, at);
    await saveRolloutState(tx, { id: row.id, state: d.state }, at);
    // After the save: the failed rollout is no longer active, so its rollback may be.
    for (const a of d.actions) {
      if (a.type === 'stagedRollback') rollbackId = (await startStagedRollback(tx, row, a.clusters, at))?.id;
    }
    return { rolloutId, changed: true, desiredChanged: sync?.changed ?? 0 };
  });
  if (sync) observeSync(deps.metrics, sync);
  if (outcome.changed) deps.notifier?.notify(rolloutId);
  if (rollbackId) deps.notifier?.notify(rollbackId);
  return outcome;
}
