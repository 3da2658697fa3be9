/**
 * Starting a rollout (or a rollback) of a workload, inside the caller's transaction: the
 * workload is locked and must roll out by rollouts, the strategy must be valid, the target
 * revision exist and (for a new rollout) pass the workload policy as it stands now, and no other
 * rollout may be active. The plan is frozen over the accepted clusters the workload targets now;
 * the rollout row, its first event and the audit entry are written together.
 */
import { validateRolloutStrategy, type RolloutStrategy } from '@flotilla/api';
import type { Principal } from '../../auth/tokens.js';
import type { Tx } from '../../db/client.js';
import { matchesSelector } from '../../domain/label-selector.js';
import { freezePlan, initialState, type FrozenPlan } from '../../domain/rollouts/index.js';
import { strategyKindProblems } from '../../domain/rollouts/kind-rules.js';
import { conflict, invalid, notFound } from '../../errors.js';
import { recordAudit } from '../../repositories/audit-repo.js';
import { allClusters } from '../../repositories/clusters-repo.js';
import {
  activeRolloutOf,
  insertRollout,
  recordRolloutEvent,
  type RolloutRow,
} from '../../repositories/rollouts-repo.js';
import { getLiveWorkload, getRevision, type RevisionRow, type WorkloadRow } from '../../repositories/workloads-repo.js';
import type { WorkloadAdmission } from '../workload-admission.js';

export interface StartRequest {
  workloadId: string;
  /** Default: the workload's current revision. */
  revision: number | undefined;
  /** A RolloutStrategy as the client sent it (validated here). */
  strategy: unknown;
  /** The rollout this one rolls back (rollbacks skip the policy check: clusters go back). */
  rollbackOf: string | null;
  /** An active rollout this start replaces (a rollback's dry run: the real one aborts it first). */
  replacing?: string;
}

const strategyProblems = (errors: readonly { path: string; message: string }[]) =>
  errors.map((e) => ({ path: `strategy.${e.path}`, message: e.message }));

/** The workload, locked, if it may start a rollout. */
async function rollingWorkload(tx: Tx, id: string): Promise<WorkloadRow> {
  const w = await getLiveWorkload(tx, id, true);
  if (!w) throw notFound(`workload ${id}`);
  if (w.updatePolicy !== 'Rollout') {
    throw conflict(`workload ${w.id} has updatePolicy ${w.updatePolicy}; set updatePolicy: Rollout to roll it out`);
  }
  return w;
}

/** The plan over the accepted clusters the workload targets now. */
async function freezeFor(tx: Tx, w: WorkloadRow, strategy: RolloutStrategy): Promise<FrozenPlan> {
  const targeted = (await allClusters(tx))
    .filter((c) => c.state === 'accepted' && matchesSelector(c.labels, w.placement.clusterSelector))
    .map((c) => ({ name: c.name, labels: c.labels }));
  const frozen = freezePlan(strategy, targeted);
  if (!frozen.ok) {
    throw invalid(
      'the rollout plan cannot be frozen for the clusters this workload targets',
      strategyProblems(frozen.errors),
    );
  }
  return frozen.plan;
}

/** What a start checked and froze, before anything is written. */
export interface PreparedStart {
  w: WorkloadRow;
  strategy: RolloutStrategy;
  target: RevisionRow;
  plan: FrozenPlan;
}

/**
 * Every check of a start and the plan it freezes, writing nothing: a real start stores exactly
 * this, a dry run explains it (preview-rollout.ts).
 */
export async function prepareStart(
  deps: { admission?: WorkloadAdmission | undefined },
  tx: Tx,
  req: StartRequest,
): Promise<PreparedStart> {
  const w = await rollingWorkload(tx, req.workloadId);
  const errors = validateRolloutStrategy(req.strategy);
  if (errors.length > 0) throw invalid('the rollout strategy is invalid', strategyProblems(errors));
  const strategy = req.strategy as RolloutStrategy;
  const kindErrors = strategyKindProblems(w.kind, strategy);
  if (kindErrors.length > 0) throw invalid('the rollout strategy is invalid', kindErrors);
  const number = req.revision ?? w.currentRevision;
  const target = await getRevision(tx, w.id, number);
  if (!target) throw notFound(`revision ${number} of workload ${w.id}`);
  if (req.rollbackOf === null) await deps.admission?.check(tx, w, target);
  const active = await activeRolloutOf(tx, w.id);
  if (active && active.id !== req.replacing)
    throw conflict(`workload ${w.id} already has an active rollout ${active.id} (${active.phase})`);
  return { w, strategy, target, plan: await freezeFor(tx, w, strategy) };
}

export async function startRollout(
  deps: { admission?: WorkloadAdmission | undefined; now: () => Date },
  tx: Tx,
  actor: Principal,
  req: StartRequest,
): Promise<RolloutRow> {
  const { w, strategy, target: revision, plan } = await prepareStart(deps, tx, req);
  const target = revision.revision;
  const at = deps.now();
  const state = initialState(plan, at.getTime());
  const { rollbackOf } = req;
  const row = await insertRollout(tx, {
    workloadId: w.id,
    targetRevision: target,
    previousRevision: w.stableRevision,
    strategy,
    plan,
    state,
    phase: state.phase,
    rollbackOf,
    createdBy: actor.name,
    createdAt: at,
    updatedAt: at,
  });
  const what = rollbackOf ? `rollback of ${rollbackOf}` : 'rollout';
  const waves = `${plan.waves.length} wave(s)`;
  await recordRolloutEvent(
    tx,
    { id: row.id, phase: state.phase },
    'info',
    `${what} created by ${actor.name}: revision ${w.stableRevision} → ${target} over ${waves}`,
    at,
  );
  await recordAudit(tx, {
    actor: actor.name,
    action: rollbackOf ? 'rollout.rollback' : 'rollout.create',
    targetType: 'rollout',
    targetId: row.id,
    details: { workloadId: w.id, targetRevision: target, previousRevision: w.stableRevision, rollbackOf },
  });
  return row;
}
