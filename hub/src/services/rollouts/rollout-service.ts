/**
 * Starting, controlling and reading rollouts. Each change is one transaction that locks what it
 * changes (the workload for a new rollout, the rollout row for a control), records an event and
 * an audit entry; the scheduler then moves clusters. Controls that do not apply are 409s naming
 * the phase.
 */
import type {
  CreateRolloutRequest,
  PageQuery,
  Rollout,
  RolloutEvent,
  RolloutList,
  RolloutControlRequest,
  RolloutPreview,
} from '@flotilla/api';
import type { Principal } from '../../auth/tokens.js';
import type { Db, DbOrTx, Tx } from '../../db/client.js';
import { paginate } from '../../domain/pagination.js';
import {
  RolloutStateError,
  applyControl,
  type RolloutControl,
  type RolloutPhase,
  type RolloutState,
} from '../../domain/rollouts/index.js';
import { revisionSkew } from '../../domain/rollouts/skew.js';
import { HubError, notFound } from '../../errors.js';
import { recordAudit } from '../../repositories/audit-repo.js';
import { observeRollouts } from '../../repositories/rollout-observations.js';
import {
  eventsAfter,
  getRollout,
  listRolloutsOf,
  recordRolloutEvent,
  saveRolloutState,
  toApiRollout,
  toApiRolloutEvent,
  type RolloutRow,
} from '../../repositories/rollouts-repo.js';
import { getLiveWorkload } from '../../repositories/workloads-repo.js';
import type { WorkloadAdmission } from '../workload-admission.js';
import { previewRollout } from './preview-rollout.js';
import { previewRollback, rollbackRollout } from './rollback-rollout.js';
import { startRollout } from './start-rollout.js';

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
  /** A cluster without a heartbeat this long shows as offline in a preview. */
  heartbeatTimeoutMs: number;
}

export interface RolloutService {
  create(actor: Principal, workloadId: string, body: CreateRolloutRequest): Promise<Rollout>;
  /** The plan `create` would freeze now, explained per cluster and wave; starts nothing. */
  preview(workloadId: string, body: CreateRolloutRequest): Promise<RolloutPreview>;
  control(actor: Principal, id: string, control: RolloutControl, body: RolloutControlRequest): Promise<Rollout>;
  rollback(actor: Principal, id: string): Promise<Rollout>;
  /** The plan `rollback` would follow now, explained; starts nothing. */
  previewRollback(id: string): Promise<RolloutPreview>;
  /** A workload's rollouts, newest first. */
  listOf(workloadId: string, query: PageQuery): Promise<RolloutList>;
  get(id: string): Promise<Rollout>;
  /** The rollout's phase now; undefined once it is gone. */
  phaseOf(id: string): Promise<RolloutPhase | undefined>;
  /** Its events after `afterId` in order, at most `limit`. */
  eventsAfter(id: string, afterId: number, limit: number): Promise<RolloutEvent[]>;
}

/** The REST view of rollouts with what their members run now (skew), in a few queries. */
async function viewed(db: DbOrTx, rows: RolloutRow[]): Promise<Rollout[]> {
  if (rows.length === 0) return [];
  const fleet = await observeRollouts(db, rows);
  return rows.map((r) => toApiRollout(r, revisionSkew(r, fleet)));
}

const viewedOne = async (db: DbOrTx, row: RolloutRow): Promise<Rollout> => (await viewed(db, [row]))[0]!;

async function lockedRollout(tx: Tx, id: string): Promise<RolloutRow> {
  const row = await getRollout(tx, id, true);
  if (!row) throw notFound(`rollout ${id}`);
  return row;
}

/** A control that does not apply to the phase is a 409 naming it. */
function controlled(fn: () => RolloutState): RolloutState {
  try {
    return fn();
  } catch (err) {
    if (err instanceof RolloutStateError) {
      throw new HubError('HUB_ERR_CONFLICT', err.message, { details: [{ path: 'phase', message: err.phase }] });
    }
    throw err;
  }
}

async function control(
  deps: RolloutServiceDeps,
  tx: Tx,
  actor: Principal,
  req: { id: string; control: RolloutControl; body: RolloutControlRequest },
): Promise<Rollout> {
  const row = await lockedRollout(tx, req.id);
  const { control, body } = req;
  const at = new Date(deps.now().getTime());
  const state = controlled(() =>
    applyControl(control, row.state, row.plan, at.getTime(), { actor: actor.name, ...body }),
  );
  await saveRolloutState(tx, { id: row.id, state }, at);
  const said = body.reason ? `: ${body.reason}` : '';
  await recordRolloutEvent(
    tx,
    { id: row.id, phase: state.phase },
    control === 'abort' ? 'warning' : 'info',
    `${control} by ${actor.name}${said} (${row.state.phase} → ${state.phase})`,
    at,
  );
  await recordAudit(tx, {
    actor: actor.name,
    action: `rollout.${control}`,
    targetType: 'rollout',
    targetId: row.id,
    details: { from: row.state.phase, to: state.phase, ...(body.reason ? { reason: body.reason } : {}) },
  });
  return viewedOne(tx, { ...row, state, phase: state.phase, updatedAt: at });
}

export function createRolloutService(deps: RolloutServiceDeps): RolloutService {
  const { db, onRolloutChange } = deps;
  return {
    async create(actor, workloadId, body) {
      const row = await db.transaction((tx) =>
        startRollout(deps, tx, actor, {
          workloadId,
          revision: body.revision,
          strategy: body.strategy,
          rollbackOf: null,
        }),
      );
      onRolloutChange(row.id);
      return viewedOne(db, row);
    },
    preview: (workloadId, body) =>
      // A read-only transaction: the same reads and locks as a start, nothing written.
      db.transaction((tx) =>
        previewRollout(deps, tx, { workloadId, revision: body.revision, strategy: body.strategy, rollbackOf: null }),
      ),
    async control(actor, id, what, body) {
      const result = await db.transaction((tx) => control(deps, tx, actor, { id, control: what, body }));
      onRolloutChange(result.id);
      return result;
    },
    async rollback(actor, id) {
      const row = await db.transaction((tx) => rollbackRollout(deps, tx, actor, id));
      onRolloutChange(id);
      onRolloutChange(row.id);
      return viewedOne(db, row);
    },
    previewRollback: (id) => db.transaction((tx) => previewRollback(deps, tx, id)),
    async listOf(workloadId, q) {
      const w = await getLiveWorkload(db, workloadId);
      if (!w) throw notFound(`workload ${workloadId}`);
      const page = await paginate(
        q,
        ['timestamp', 'uuid'],
        (before, limit) => listRolloutsOf(db, w.id, limit, before),
        (r) => [r.createdAt.toISOString(), r.id],
        (r) => r,
      );
      return { ...page, items: await viewed(db, page.items) };
    },
    async get(id) {
      const row = await getRollout(db, id);
      if (!row) throw notFound(`rollout ${id}`);
      return viewedOne(db, row);
    },
    phaseOf: async (id) => (await getRollout(db, id))?.state.phase,
    eventsAfter: async (id, afterId, limit) => (await eventsAfter(db, id, afterId, limit)).map(toApiRolloutEvent),
  };
}
