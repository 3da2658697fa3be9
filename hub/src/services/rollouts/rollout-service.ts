/**
 * Starting and controlling rollouts. Each call is one transaction that locks what it changes
 * (the workload for a new rollout, the rollout row for a control), records an event and an audit
 * entry; the scheduler then moves clusters. Controls that do not apply are 409s naming the phase.
 */
import { validateRolloutStrategy, type CreateRolloutRequest, type Rollout, type RolloutStrategy } from '@flotilla/api';
import type { Db, Tx } from '../../db/client.js';
import { matchesSelector } from '../../domain/label-selector.js';
import { HubError, conflict, invalid, notFound } from '../../errors.js';
import { recordAudit } from '../../repositories/audit-repo.js';
import { allClusters } from '../../repositories/clusters-repo.js';
import {
  activeRolloutOf,
  getRollout,
  insertRollout,
  insertRolloutEvents,
  saveRolloutState,
  toApiRollout,
} from '../../repositories/rollouts-repo.js';
import type { Principal } from '../../repositories/tokens-repo.js';
import type { WorkloadAdmission } from '../workload-admission.js';
import { getLiveWorkload, getRevision } from '../../repositories/workloads-repo.js';
import {
  RolloutStateError,
  abort,
  approve,
  freezePlan,
  initialState,
  isTerminalPhase,
  pause,
  resume,
  retry,
  type RolloutControl,
  type RolloutState,
} from '../../domain/rollouts/index.js';

export interface RolloutServiceDeps {
  db: Db;
  now: () => Date;
  /** Called after a rollout changed (wakes the scheduler and event streams). */
  onRolloutChange: (rolloutId: string) => void;
  /**
   * The workload policy: a new rollout's target revision must pass it as it stands now (a
   * revision stored under an exception since removed is refused). Rollbacks are not checked:
   * they return clusters to the revision they ran before.
   */
  admission?: WorkloadAdmission;
}

export interface RolloutService {
  create(actor: Principal, workloadId: string, body: CreateRolloutRequest): Promise<Rollout>;
  control(
    actor: Principal,
    id: string,
    control: RolloutControl,
    body: { reason?: string; wave?: string },
  ): Promise<Rollout>;
  rollback(actor: Principal, id: string): Promise<Rollout>;
}

function stateError(err: unknown): never {
  if (err instanceof RolloutStateError) {
    throw new HubError('HUB_ERR_CONFLICT', err.message, { details: [{ path: 'phase', message: err.phase }] });
  }
  throw err;
}

export function createRolloutService(deps: RolloutServiceDeps): RolloutService {
  const { db, now, onRolloutChange } = deps;

  async function start(
    tx: Tx,
    actor: Principal,
    workloadId: string,
    revisionWanted: number | undefined,
    strategyInput: unknown,
    rollbackOf: string | null,
  ): Promise<Rollout> {
    const w = await getLiveWorkload(tx, workloadId, true);
    if (!w) throw notFound(`workload ${workloadId}`);
    if (w.updatePolicy !== 'Rollout') {
      throw conflict(`workload ${w.id} has updatePolicy ${w.updatePolicy}; set updatePolicy: Rollout to roll it out`);
    }
    const errors = validateRolloutStrategy(strategyInput);
    if (errors.length > 0) {
      throw invalid(
        'the rollout strategy is invalid',
        errors.map((e) => ({ path: `strategy.${e.path}`, message: e.message })),
      );
    }
    const strategy = strategyInput as RolloutStrategy;
    const target = revisionWanted ?? w.currentRevision;
    const revision = await getRevision(tx, w.id, target);
    if (!revision) throw notFound(`revision ${target} of workload ${w.id}`);
    if (rollbackOf === null) await deps.admission?.check(tx, w, revision);
    const active = await activeRolloutOf(tx, w.id);
    if (active) throw conflict(`workload ${w.id} already has an active rollout ${active.id} (${active.phase})`);
    const targeted = (await allClusters(tx))
      .filter((c) => c.state === 'accepted' && matchesSelector(c.labels, w.placement.clusterSelector))
      .map((c) => ({ name: c.name, labels: c.labels }));
    const frozen = freezePlan(strategy, targeted);
    if (!frozen.ok) {
      throw invalid(
        'the rollout plan cannot be frozen for the clusters this workload targets',
        frozen.errors.map((e) => ({ path: `strategy.${e.path}`, message: e.message })),
      );
    }
    const at = now();
    const state = initialState(frozen.plan, at.getTime());
    const row = await insertRollout(tx, {
      workloadId: w.id,
      targetRevision: target,
      previousRevision: w.stableRevision,
      strategy,
      plan: frozen.plan,
      state,
      phase: state.phase,
      rollbackOf,
      createdBy: actor.name,
      createdAt: at,
      updatedAt: at,
    });
    const what = rollbackOf ? `rollback of ${rollbackOf}` : 'rollout';
    await insertRolloutEvents(
      tx,
      row.id,
      state.phase,
      [
        {
          type: 'event',
          level: 'info',
          message: `${what} created by ${actor.name}: revision ${w.stableRevision} → ${target} over ${frozen.plan.waves.length} wave(s)`,
        },
      ],
      at,
    );
    await recordAudit(tx, {
      actor: actor.name,
      action: rollbackOf ? 'rollout.rollback' : 'rollout.create',
      targetType: 'rollout',
      targetId: row.id,
      details: { workloadId: w.id, targetRevision: target, previousRevision: w.stableRevision, rollbackOf },
    });
    return toApiRollout(row);
  }

  return {
    async create(actor, workloadId, body) {
      const result = await db.transaction((tx) => start(tx, actor, workloadId, body.revision, body.strategy, null));
      onRolloutChange(result.id);
      return result;
    },

    async control(actor, id, control, body) {
      const result = await db.transaction(async (tx) => {
        const row = await getRollout(tx, id, true);
        if (!row) throw notFound(`rollout ${id}`);
        const ms = now().getTime();
        let state: RolloutState;
        try {
          switch (control) {
            case 'pause':
              state = pause(row.state, ms, body.reason ? `paused by ${actor.name}: ${body.reason}` : undefined);
              break;
            case 'resume':
              state = resume(row.state, ms);
              break;
            case 'approve':
              state = approve(row.state, row.plan, ms, body.wave);
              break;
            case 'abort':
              state = abort(row.state, ms);
              break;
            case 'retry':
              state = retry(row.state, ms);
              break;
          }
        } catch (err) {
          stateError(err);
        }
        const at = new Date(ms);
        await saveRolloutState(tx, { id: row.id, state }, at);
        await insertRolloutEvents(
          tx,
          row.id,
          state.phase,
          [
            {
              type: 'event',
              level: control === 'abort' ? 'warning' : 'info',
              message: `${control} by ${actor.name}${body.reason ? `: ${body.reason}` : ''} (${row.state.phase} → ${state.phase})`,
            },
          ],
          at,
        );
        await recordAudit(tx, {
          actor: actor.name,
          action: `rollout.${control}`,
          targetType: 'rollout',
          targetId: row.id,
          details: { from: row.state.phase, to: state.phase, ...(body.reason ? { reason: body.reason } : {}) },
        });
        return toApiRollout({ ...row, state, phase: state.phase, updatedAt: at });
      });
      onRolloutChange(result.id);
      return result;
    },

    async rollback(actor, id) {
      const result = await db.transaction(async (tx) => {
        const row = await getRollout(tx, id, true);
        if (!row) throw notFound(`rollout ${id}`);
        if (row.state.phase === 'RolledBack') {
          throw new HubError('HUB_ERR_CONFLICT', `rollout ${id} is already RolledBack`, {
            details: [{ path: 'phase', message: row.state.phase }],
          });
        }
        if (!isTerminalPhase(row.state.phase)) {
          // An active rollout stops where it is first; the new one brings every cluster back.
          const at = now();
          const state = abort(row.state, at.getTime());
          await saveRolloutState(tx, { id: row.id, state }, at);
          await insertRolloutEvents(
            tx,
            row.id,
            state.phase,
            [{ type: 'event', level: 'warning', message: `aborted by ${actor.name} for a rollback` }],
            at,
          );
        }
        return start(tx, actor, row.workloadId, row.previousRevision, row.strategy, row.id);
      });
      onRolloutChange(id);
      onRolloutChange(result.id);
      return result;
    },
  };
}
