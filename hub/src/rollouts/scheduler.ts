/**
 * The rollout scheduler: one active instance among hub replicas (a session advisory lock held on
 * a dedicated connection; standbys retry each tick). Each tick steps every active rollout in its
 * own transaction: lock the row, observe its clusters, `advance`, write pins and desired state
 * (with outbox rows), events and the new state — all committed together, so a hub that stops at
 * any point resumes from exactly what was committed, never repeating or skipping a cluster.
 */
import { and, eq, inArray } from 'drizzle-orm';
import type { ObjectHealth } from '@flotilla/api';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Db, Tx } from '../db/client.js';
import { clusters, desiredObjects, objectStatus, workloads } from '../db/schema/index.js';
import {
  deletePins,
  getRollout,
  insertRolloutEvents,
  saveRolloutState,
  steppableRolloutIds,
  upsertPin,
  type RolloutRow,
} from '../repositories/rollouts-repo.js';
import { getRevision } from '../repositories/workloads-repo.js';
import { beginDesiredChange, syncWorkload } from '../services/desired-sync.js';
import { advance } from './engine.js';
import type { RolloutNotifier } from './notifier.js';
import { observeCluster } from './observe.js';
import type { ClusterObservation, RolloutAction } from './types.js';

export const SCHEDULER_LOCK = 0x666c6f7403; // "flot" + 3
/** Kicks (status stored, controls) are coalesced over this long. */
const KICK_DELAY_MS = 50;

export interface RolloutSchedulerDeps {
  db: Db;
  /** Leadership needs its own connection: the session lock lives as long as it does. */
  pool: pg.Pool;
  logger: Logger;
  heartbeatTimeoutMs: number;
  tickMs: number;
  now?: () => Date;
  /** After a step changed desired state (wakes the outbox relay). */
  onDesiredChange: () => void;
  notifier?: RolloutNotifier;
}

export interface StepOutcome {
  rolloutId: string;
  changed: boolean;
  desiredChanged: number;
}

export interface RolloutScheduler {
  start(): void;
  /** Stops ticking, waits for a running tick and releases leadership. */
  stop(): Promise<void>;
  /** Asks for a tick soon (status arrived, a control was applied). */
  kick(): void;
  /** One pass over every active rollout if this instance leads; returns what it did. */
  tick(): Promise<StepOutcome[]>;
  /** Steps one rollout (leadership is the caller's business; tests use it directly). */
  step(rolloutId: string): Promise<StepOutcome>;
  isLeader(): boolean;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function createRolloutScheduler(deps: RolloutSchedulerDeps): RolloutScheduler {
  const now = deps.now ?? ((): Date => new Date());
  let leader: pg.PoolClient | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = true;
  let kicked = false;
  let ticking = false;
  let kickPending = false;

  async function lead(): Promise<boolean> {
    if (leader) return true;
    const client = await deps.pool.connect();
    try {
      const res = await client.query<{ locked: boolean }>('select pg_try_advisory_lock($1) as locked', [
        SCHEDULER_LOCK,
      ]);
      if (res.rows[0]?.locked !== true) {
        client.release();
        return false;
      }
    } catch (err) {
      client.release(err as Error);
      throw err;
    }
    client.on('error', (err) => {
      deps.logger.warn({ err }, 'scheduler leadership connection lost');
      if (leader === client) leader = undefined;
    });
    leader = client;
    deps.logger.info('rollout scheduler is the active instance');
    return true;
  }

  async function resign(): Promise<void> {
    const client = leader;
    leader = undefined;
    if (!client) return;
    try {
      await client.query('select pg_advisory_unlock($1)', [SCHEDULER_LOCK]);
      client.release();
    } catch (err) {
      client.release(err as Error);
    }
  }

  async function observe(
    tx: Tx,
    row: RolloutRow,
    members: string[],
    at: Date,
  ): Promise<Record<string, ClusterObservation>> {
    const [w] = await tx.select().from(workloads).where(eq(workloads.id, row.workloadId)).limit(1);
    if (!w || members.length === 0) return {};
    const object = and(
      eq(desiredObjects.kind, w.kind),
      eq(desiredObjects.namespace, w.namespace),
      eq(desiredObjects.name, w.name),
      inArray(desiredObjects.clusterName, members),
    );
    const desired = await tx.select().from(desiredObjects).where(object);
    const status = await tx
      .select()
      .from(objectStatus)
      .where(
        and(
          eq(objectStatus.kind, w.kind),
          eq(objectStatus.namespace, w.namespace),
          eq(objectStatus.name, w.name),
          inArray(objectStatus.clusterName, members),
        ),
      );
    const cls = await tx
      .select({ name: clusters.name, state: clusters.state, lastHeartbeatAt: clusters.lastHeartbeatAt })
      .from(clusters)
      .where(inArray(clusters.name, members));
    const d = new Map(desired.map((r) => [r.clusterName, r]));
    const s = new Map(status.map((r) => [r.clusterName, r]));
    const c = new Map(cls.map((r) => [r.name, r]));
    const out: Record<string, ClusterObservation> = {};
    for (const name of members) {
      const dr = d.get(name);
      const sr = s.get(name);
      const cr = c.get(name);
      out[name] = observeCluster({
        targetRevision: row.targetRevision,
        clusterState: cr?.state ?? 'removed',
        lastHeartbeatAt: cr?.lastHeartbeatAt ?? null,
        desired: dr && dr.workloadId === row.workloadId ? dr : undefined,
        status:
          sr && sr.workloadId === row.workloadId
            ? {
                revision: sr.revision,
                generation: sr.generation,
                health: sr.health as ObjectHealth,
                message: sr.message,
              }
            : undefined,
        now: at,
        heartbeatTimeoutMs: deps.heartbeatTimeoutMs,
      });
    }
    return out;
  }

  async function step(rolloutId: string): Promise<StepOutcome> {
    const at = now();
    const outcome = await deps.db.transaction(async (tx) => {
      // Desired state is written below; the desired-state lock keeps outbox order = commit order.
      await beginDesiredChange(tx);
      const row = await getRollout(tx, rolloutId, true);
      if (!row || (row.state.phase !== 'Progressing' && row.state.phase !== 'WaitingApproval'))
        return { rolloutId, changed: false, desiredChanged: 0 };
      const members = row.plan.waves.flatMap((w) => w.members);
      const observations = await observe(tx, row, members, at);
      const { state, actions } = advance(row.plan, row.state, observations, at.getTime());
      if (actions.length === 0 && same({ ...state, updatedAt: 0 }, { ...row.state, updatedAt: 0 }))
        return { rolloutId, changed: false, desiredChanged: 0 };
      const [w] = await tx.select().from(workloads).where(eq(workloads.id, row.workloadId)).for('update');
      let pinsChanged = false;
      for (const a of actions) {
        if (a.type !== 'setRevision') continue;
        await upsertPin(
          tx,
          {
            workloadId: row.workloadId,
            clusterName: a.cluster,
            revision: a.revision === 'target' ? row.targetRevision : row.previousRevision,
            partition: a.partition ?? null,
          },
          at,
        );
        pinsChanged = true;
      }
      if (state.phase === 'Succeeded') {
        await tx
          .update(workloads)
          .set({ stableRevision: row.targetRevision, updatedAt: at })
          .where(eq(workloads.id, row.workloadId));
        await deletePins(tx, row.workloadId);
        pinsChanged = true;
      } else if (state.phase === 'RolledBack') {
        await deletePins(tx, row.workloadId);
        pinsChanged = true;
      }
      let desiredChanged = 0;
      if (pinsChanged && w && !w.deletedAt) {
        const [head] = await tx.select().from(workloads).where(eq(workloads.id, w.id));
        const revision = await getRevision(tx, w.id, head!.currentRevision);
        desiredChanged = await syncWorkload(tx, head!, revision!);
      }
      const events = actions.filter((a): a is Extract<RolloutAction, { type: 'event' }> => a.type === 'event');
      await insertRolloutEvents(tx, row.id, state.phase, events, at);
      await saveRolloutState(tx, { id: row.id, state }, at);
      return { rolloutId, changed: true, desiredChanged };
    });
    if (outcome.desiredChanged > 0) deps.onDesiredChange();
    if (outcome.changed) deps.notifier?.notify(rolloutId);
    return outcome;
  }

  async function tick(): Promise<StepOutcome[]> {
    if (!(await lead())) return [];
    const out: StepOutcome[] = [];
    for (const id of await steppableRolloutIds(deps.db)) {
      try {
        out.push(await step(id));
      } catch (err) {
        deps.logger.warn({ err, rollout: id }, 'rollout step failed; retrying next tick');
      }
    }
    return out;
  }

  function schedule(delay: number): void {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(loop, delay);
  }

  function loop(): void {
    timer = undefined;
    kickPending = false;
    if (stopped || ticking) return;
    ticking = true;
    kicked = false;
    running = tick()
      .catch((err: unknown) => deps.logger.warn({ err }, 'rollout scheduler tick failed'))
      .finally(() => {
        ticking = false;
        schedule(kicked ? KICK_DELAY_MS : deps.tickMs);
      });
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
      await resign();
    },
    kick() {
      if (stopped) return;
      if (ticking) kicked = true;
      else if (!timer || !kickPending) {
        kickPending = true;
        schedule(KICK_DELAY_MS);
      }
    },
    tick,
    step,
    isLeader: () => leader !== undefined,
  };
}
