/** Rollouts, their events and the per-cluster pins a rollout holds. */
import { and, asc, desc, eq, gt, inArray, sql } from 'drizzle-orm';
import type { Rollout, RolloutEvent } from '@flotilla/api';
import type { DbOrTx } from '../db/client.js';
import { rolloutEvents, rolloutPins, rollouts } from '../db/schema/index.js';
import {
  ACTIVE_ROLLOUT_PHASES,
  type FrozenPlan,
  type FrozenWave,
  type RolloutAction,
  type RolloutPhase,
  type RolloutState,
} from '../domain/rollouts/types.js';
import { waveSettings } from '../domain/rollouts/plan.js';
import type { RevisionSkew } from '../domain/rollouts/skew.js';
import { countWaits, waitOf } from '../domain/rollouts/waits.js';
import { conflict, isUniqueViolation } from '../errors.js';
import { isWorkloadId } from './workloads-repo.js';

type StoredRollout = typeof rollouts.$inferSelect;
/** A rollout row with its plan and state typed (the table stores them as jsonb). */
export type RolloutRow = Omit<StoredRollout, 'plan' | 'state'> & { plan: FrozenPlan; state: RolloutState };
export type RolloutEventRow = typeof rolloutEvents.$inferSelect;
export type NewRollout = Omit<typeof rollouts.$inferInsert, 'plan' | 'state'> & {
  plan: FrozenPlan;
  state: RolloutState;
};

/** The hub writes plan and state only through this repository, always as these types. */
const typed = (r: StoredRollout): RolloutRow => r as RolloutRow;

export const isRolloutId = isWorkloadId;

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

/** A member cluster's status: its state, what it waits for and which revision it runs. */
function toApiCluster(state: RolloutState, name: string, wave: FrozenWave, revisions: RevisionSkew | undefined) {
  const cs = state.clusters[name]!;
  const wait = waitOf(state, name);
  const rev = revisions?.members.get(name);
  return {
    name,
    wave: wave.name,
    phase: cs.phase,
    step: cs.step,
    startedAt: iso(cs.startedAt),
    deadlineAt: iso(cs.deadlineAt),
    healthySince: iso(cs.healthySince),
    finishedAt: iso(cs.finishedAt),
    message: cs.message,
    waitingFor: wait?.reason ?? null,
    waitingUntil: iso(wait?.until),
    desiredRevision: rev?.desired ?? null,
    runningRevision: rev?.running ?? null,
    analysis: cs.analysis ? { ...cs.analysis, count: wave.analysis?.count ?? 0 } : null,
  };
}

/**
 * The REST view of a rollout; `revisions` (what the hub sends each member and what it reports
 * running) comes from rollout-observations.ts, absent: unknown (null, no skew).
 */
export function toApiRollout(r: RolloutRow, revisions?: RevisionSkew): Rollout {
  const { plan, state } = r;
  return {
    id: r.id,
    workloadId: r.workloadId,
    targetRevision: r.targetRevision,
    previousRevision: r.previousRevision,
    rollbackOf: r.rollbackOf,
    strategy: r.strategy,
    phase: state.phase,
    currentWave: plan.waves[state.currentWave]?.name ?? null,
    message: state.message,
    failureBudget: plan.failureBudget,
    onFailure: plan.onFailure,
    offlinePolicy: plan.offlinePolicy,
    waves: plan.waves.map((w, i) => {
      const ws = state.waves[i]!;
      return {
        ...waveSettings(w),
        phase: ws.phase,
        approvedBefore: ws.approvedBefore,
        approvedAfter: ws.approvedAfter,
        startedAt: iso(ws.startedAt),
        finishedAt: iso(ws.finishedAt),
        message: ws.message,
        ...(ws.prePull
          ? {
              prePull: {
                placedAt: iso(ws.prePull.placedAt)!,
                waitFrom: iso(ws.prePull.waitFrom),
                endedAt: iso(ws.prePull.endedAt),
              },
            }
          : {}),
      };
    }),
    clusters: plan.waves.flatMap((w) => w.members.map((name) => toApiCluster(state, name, w, revisions))),
    waits: countWaits(plan, state),
    revisions: revisions?.revisions ?? [],
    skew: revisions?.skew ?? false,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    createdBy: r.createdBy,
  };
}

export function toApiRolloutEvent(e: RolloutEventRow): RolloutEvent {
  return {
    id: String(e.id),
    rolloutId: e.rolloutId,
    at: e.at.toISOString(),
    level: e.level,
    message: e.message,
    wave: e.wave,
    cluster: e.cluster,
    phase: e.phase,
  };
}

export async function insertRollout(db: DbOrTx, r: NewRollout): Promise<RolloutRow> {
  try {
    const [row] = await db.insert(rollouts).values(r).returning();
    return typed(row!);
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict(`workload ${r.workloadId} already has an active rollout`);
    throw err;
  }
}

export async function getRollout(db: DbOrTx, id: string, forUpdate = false): Promise<RolloutRow | undefined> {
  if (!isRolloutId(id)) return undefined;
  const q = db.select().from(rollouts).where(eq(rollouts.id, id)).limit(1);
  const [row] = forUpdate ? await q.for('update') : await q;
  return row && typed(row);
}

export async function activeRolloutOf(db: DbOrTx, workloadId: string): Promise<RolloutRow | undefined> {
  const [row] = await db
    .select()
    .from(rollouts)
    .where(and(eq(rollouts.workloadId, workloadId), inArray(rollouts.phase, [...ACTIVE_ROLLOUT_PHASES])))
    .limit(1);
  return row && typed(row);
}

/** Active rollouts, oldest first: the scheduler steps them (paused ones do not move) and counts their waits. */
export async function activeRollouts(db: DbOrTx): Promise<RolloutRow[]> {
  const rows = await db
    .select()
    .from(rollouts)
    .where(inArray(rollouts.phase, [...ACTIVE_ROLLOUT_PHASES]))
    .orderBy(asc(rollouts.createdAt));
  return rows.map(typed);
}

/** Newest first; `before` (createdAt ISO, id) continues a page; `limit + 1` rows. */
export async function listRolloutsOf(
  db: DbOrTx,
  workloadId: string,
  limit: number,
  before: [string, string] | undefined,
): Promise<RolloutRow[]> {
  const rows = await db
    .select()
    .from(rollouts)
    .where(
      and(
        eq(rollouts.workloadId, workloadId),
        before
          ? sql`(${rollouts.createdAt}, ${rollouts.id}) < (${before[0]}::timestamptz, ${before[1]}::uuid)`
          : undefined,
      ),
    )
    .orderBy(desc(rollouts.createdAt), desc(rollouts.id))
    .limit(limit + 1);
  return rows.map(typed);
}

export async function saveRolloutState(db: DbOrTx, r: Pick<RolloutRow, 'id' | 'state'>, now: Date): Promise<void> {
  await db.update(rollouts).set({ state: r.state, phase: r.state.phase, updatedAt: now }).where(eq(rollouts.id, r.id));
}

export async function insertRolloutEvents(
  db: DbOrTx,
  rolloutId: string,
  phase: RolloutPhase,
  events: readonly Extract<RolloutAction, { type: 'event' }>[],
  at: Date,
): Promise<void> {
  if (events.length === 0) return;
  await db.insert(rolloutEvents).values(
    events.map((e) => ({
      rolloutId,
      at,
      level: e.level,
      message: e.message,
      wave: e.wave ?? null,
      cluster: e.cluster ?? null,
      phase,
    })),
  );
}

export async function eventsAfter(
  db: DbOrTx,
  rolloutId: string,
  afterId: number,
  limit = 1000,
): Promise<RolloutEventRow[]> {
  return db
    .select()
    .from(rolloutEvents)
    .where(and(eq(rolloutEvents.rolloutId, rolloutId), gt(rolloutEvents.id, afterId)))
    .orderBy(asc(rolloutEvents.id))
    .limit(limit);
}

export async function upsertPin(
  db: DbOrTx,
  pin: { workloadId: string; clusterName: string; revision: number; partition: number | string | null },
  now: Date,
): Promise<void> {
  await db
    .insert(rolloutPins)
    .values({ ...pin, updatedAt: now })
    .onConflictDoUpdate({
      target: [rolloutPins.workloadId, rolloutPins.clusterName],
      set: { revision: pin.revision, partition: pin.partition, updatedAt: now },
    });
}

export async function deletePins(db: DbOrTx, workloadId: string): Promise<void> {
  await db.delete(rolloutPins).where(eq(rolloutPins.workloadId, workloadId));
}

export type PinRow = typeof rolloutPins.$inferSelect;

/** The pins rollouts hold on one workload, optionally only those of some clusters. */
export async function pinsOf(db: DbOrTx, workloadId: string, clusterNames?: readonly string[]): Promise<PinRow[]> {
  return db
    .select()
    .from(rolloutPins)
    .where(
      and(
        eq(rolloutPins.workloadId, workloadId),
        clusterNames ? inArray(rolloutPins.clusterName, [...clusterNames]) : undefined,
      ),
    );
}

/** Records one event of a rollout (a control, its creation). */
export function recordRolloutEvent(
  db: DbOrTx,
  rollout: { id: string; phase: RolloutPhase },
  level: 'info' | 'warning',
  message: string,
  at: Date,
): Promise<void> {
  return insertRolloutEvents(db, rollout.id, rollout.phase, [{ type: 'event', level, message }], at);
}
