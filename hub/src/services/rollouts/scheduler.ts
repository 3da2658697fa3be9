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
import type { Db, Tx } from '../../db/client.js';
import { LOCK_KEYS } from '../../db/locks.js';
import { clusters, desiredObjects, objectStatus, workloads } from '../../db/schema/index.js';
import {
  deletePins,
  getRollout,
  insertRolloutEvents,
  saveRolloutState,
  steppableRollouts,
  upsertPin,
  type RolloutRow,
} from '../../repositories/rollouts-repo.js';
import { getRevision } from '../../repositories/workloads-repo.js';
import { observeSync, type DesiredChanges, type DesiredSync } from '../desired-sync.js';
import type { HearingState } from '../../health/nats-hearing.js';
import type { HubMetrics } from '../../metrics.js';
import { advance } from '../../domain/rollouts/engine.js';
import { createLeadership } from './leadership.js';
import type { RolloutNotifier } from './notifier.js';
import { observeCluster } from '../../domain/rollouts/observe.js';
import type { ClusterObservation, RolloutAction, RolloutState } from '../../domain/rollouts/types.js';

/** Kicks (status stored, controls) are coalesced over this long. */
const KICK_DELAY_MS = 50;
/**
 * A step that would only reword messages is written at most this often per rollout: with many
 * active rollouts, each write is a transaction the ticks that matter would wait for.
 */
const MESSAGE_REFRESH_MS = 3000;
/** Steps that change only their rollout's state run this many at a time (pool connections). */
const STATE_STEP_CONCURRENCY = 4;

export interface RolloutSchedulerDeps {
  db: Db;
  /** Leadership needs its own connection: the session lock lives as long as it does. */
  pool: pg.Pool;
  logger: Logger;
  heartbeatTimeoutMs: number;
  tickMs: number;
  now?: () => Date;
  /** Steps run in its transactions; pins and desired state change through it. */
  desired: DesiredChanges;
  metrics?: HubMetrics;
  notifier?: RolloutNotifier;
  /** Soak and step pauses count only while the hub heard a cluster within this long; absent: no rule. */
  freshnessMs?: number;
  /** Whether the hub hears NATS now (nats-hearing.ts); absent: always. */
  hearing?: () => HearingState;
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
  const leadership = createLeadership({
    pool: deps.pool,
    key: LOCK_KEYS.scheduler,
    logger: deps.logger,
    now,
    what: 'rollout scheduler',
  });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = true;
  let kicked = false;
  let ticking = false;
  let kickPending = false;

  /** How the hub judges what it hears, now: heartbeat timeout, freshness, whether it hears NATS. */
  function liveness(): Liveness {
    const h = deps.hearing?.();
    const leaderSince = leadership.since();
    // Back from deafness, heartbeats sent meanwhile may still be queued: observing starts again.
    const observingSince = h?.hearing && leaderSince ? new Date(Math.max(leaderSince.getTime(), h.since)) : leaderSince;
    return {
      heartbeatTimeoutMs: deps.heartbeatTimeoutMs,
      observingSince,
      ...(deps.freshnessMs === undefined ? {} : { freshnessMs: deps.freshnessMs }),
      ...(h && !h.hearing ? { deafSince: h.since } : {}),
    };
  }

  /**
   * Steps one rollout in one transaction. `lockDesired` false is for a step expected to change
   * only the rollout's own state: it takes no desired-state lock, so such steps run side by side;
   * if it turns out to need desired writes after all, it changes nothing and says `needsDesired`.
   */
  async function stepOnce(rolloutId: string, lockDesired: boolean): Promise<StepOutcome & { needsDesired?: true }> {
    const at = now();
    let sync: DesiredSync | undefined;
    const outcome = await deps.desired.transaction(async (tx) => {
      // The desired-state lock comes first in every writer of desired state (REST, cluster
      // changes, here): it keeps outbox order = commit order and lock order the same everywhere.
      if (lockDesired) await deps.desired.lock(tx);
      const row = await getRollout(tx, rolloutId, true);
      if (!row || (row.state.phase !== 'Progressing' && row.state.phase !== 'WaitingApproval'))
        return { rolloutId, changed: false, desiredChanged: 0 };
      const observed = await loadObservations(tx, [row]);
      const { state, actions, changed } = decide(row, observed, at, liveness());
      if (!changed) return { rolloutId, changed: false, desiredChanged: 0 };
      if (!lockDesired && writesDesired(state, actions))
        return { rolloutId, changed: false, desiredChanged: 0, needsDesired: true as const };
      const [w] = lockDesired
        ? await tx.select().from(workloads).where(eq(workloads.id, row.workloadId)).for('update')
        : [];
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
        sync = await deps.desired.syncWorkload(tx, head!, revision!);
        desiredChanged = sync.changed;
      }
      const events = actions.filter((a): a is Extract<RolloutAction, { type: 'event' }> => a.type === 'event');
      await insertRolloutEvents(tx, row.id, state.phase, events, at);
      await saveRolloutState(tx, { id: row.id, state }, at);
      return { rolloutId, changed: true, desiredChanged };
    });
    if (sync) observeSync(deps.metrics, sync);
    if (outcome.changed) deps.notifier?.notify(rolloutId);
    return outcome;
  }

  const step = (rolloutId: string): Promise<StepOutcome> => stepOnce(rolloutId, true);

  async function guardedStep(rolloutId: string, lockDesired: boolean): Promise<StepOutcome & { needsDesired?: true }> {
    try {
      return await stepOnce(rolloutId, lockDesired);
    } catch (err) {
      deps.logger.warn({ err, rollout: rolloutId }, 'rollout step failed; retrying next tick');
      return { rolloutId, changed: false, desiredChanged: 0 };
    }
  }

  /**
   * One pass: a single lock-free read of every active rollout and what the hub observes of its
   * clusters decides which rollouts would change; only those are stepped (each in its own locked
   * transaction that observes again). Most ticks change nothing for most rollouts (soaking,
   * waiting for agents), and skipping their transactions keeps a tick over many rollouts short.
   */
  async function tick(): Promise<StepOutcome[]> {
    if (!(await leadership.lead())) return [];
    const at = now();
    const rows = await steppableRollouts(deps.db);
    if (rows.length === 0) return [];
    const observed = await loadObservations(deps.db, rows);
    const out: StepOutcome[] = [];
    const stateOnly: string[] = [];
    const withDesired: string[] = [];
    const live = liveness();
    for (const row of rows) {
      const d = decide(row, observed, at, live);
      // New wording alone (e.g. "2 of 4 pods updated") is written at most every few seconds.
      const due = d.transition || (d.changed && at.getTime() - row.state.updatedAt >= MESSAGE_REFRESH_MS);
      if (!due) out.push({ rolloutId: row.id, changed: false, desiredChanged: 0 });
      else (writesDesired(d.state, d.actions) ? withDesired : stateOnly).push(row.id);
    }
    // Steps that touch only their own rollout run a few at a time; steps that write desired state
    // serialize on the desired-state lock anyway, so they run one after the other.
    const parallel = await mapLimit(stateOnly, STATE_STEP_CONCURRENCY, (id) => guardedStep(id, false));
    for (const o of parallel) {
      if (o.needsDesired) withDesired.push(o.rolloutId);
      else out.push(o);
    }
    for (const id of withDesired) out.push(await guardedStep(id, true));
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
      await leadership.resign();
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
    isLeader: () => leadership.isLeader(),
  };
}

type WorkloadRow = typeof workloads.$inferSelect;
type DesiredRow = typeof desiredObjects.$inferSelect;
type StatusRow = typeof objectStatus.$inferSelect;
type ClusterRow = Pick<typeof clusters.$inferSelect, 'name' | 'state' | 'lastHeartbeatAt'>;

/** What the hub knows of the rollouts' workloads and member clusters, read in four queries. */
interface Observed {
  workloads: Map<string, WorkloadRow>;
  /** By `${workloadId}/${cluster}`. */
  desired: Map<string, DesiredRow>;
  status: Map<string, StatusRow>;
  clusters: Map<string, ClusterRow>;
}

async function loadObservations(q: Db | Tx, rows: readonly RolloutRow[]): Promise<Observed> {
  const workloadIds = [...new Set(rows.map((r) => r.workloadId))];
  const members = [...new Set(rows.flatMap((r) => r.plan.waves.flatMap((w) => w.members)))];
  const key = (workloadId: string, cluster: string): string => `${workloadId}/${cluster}`;
  const observed: Observed = { workloads: new Map(), desired: new Map(), status: new Map(), clusters: new Map() };
  const ws = await q.select().from(workloads).where(inArray(workloads.id, workloadIds));
  for (const w of ws) observed.workloads.set(w.id, w);
  if (members.length === 0) return observed;
  // A workload's kind/namespace/name never change, so rows of these workload ids are exactly
  // the rows of the objects they own (a same-named object of another workload never counts).
  const desired = await q
    .select()
    .from(desiredObjects)
    .where(and(inArray(desiredObjects.workloadId, workloadIds), inArray(desiredObjects.clusterName, members)));
  for (const d of desired) observed.desired.set(key(d.workloadId, d.clusterName), d);
  const status = await q
    .select()
    .from(objectStatus)
    .where(and(inArray(objectStatus.clusterName, members), inArray(objectStatus.workloadId, workloadIds)));
  for (const st of status) observed.status.set(key(st.workloadId, st.clusterName), st);
  const cls = await q
    .select({ name: clusters.name, state: clusters.state, lastHeartbeatAt: clusters.lastHeartbeatAt })
    .from(clusters)
    .where(inArray(clusters.name, members));
  for (const c of cls) observed.clusters.set(c.name, c);
  return observed;
}

/** How the scheduler judges heartbeats and freshness (see ObserveInput). */
interface Liveness {
  heartbeatTimeoutMs: number;
  observingSince: Date | undefined;
  freshnessMs?: number;
  deafSince?: number;
}

function observationsOf(
  row: RolloutRow,
  observed: Observed,
  at: Date,
  liveness: Liveness,
): Record<string, ClusterObservation> {
  const w = observed.workloads.get(row.workloadId);
  const out: Record<string, ClusterObservation> = {};
  if (!w) return out;
  for (const name of row.plan.waves.flatMap((wave) => wave.members)) {
    const dr = observed.desired.get(`${w.id}/${name}`);
    const sr = observed.status.get(`${w.id}/${name}`);
    const cr = observed.clusters.get(name);
    out[name] = observeCluster({
      targetRevision: row.targetRevision,
      clusterState: cr?.state ?? 'removed',
      lastHeartbeatAt: cr?.lastHeartbeatAt ?? null,
      desired: dr,
      status: sr
        ? {
            revision: sr.revision,
            generation: sr.generation,
            health: sr.health as ObjectHealth,
            message: sr.message,
            storedAt: sr.storedAt,
          }
        : undefined,
      now: at,
      heartbeatTimeoutMs: liveness.heartbeatTimeoutMs,
      ...(liveness.observingSince ? { observingSince: liveness.observingSince } : {}),
      ...(liveness.freshnessMs === undefined ? {} : { freshnessMs: liveness.freshnessMs }),
      ...(liveness.deafSince === undefined ? {} : { deafSince: liveness.deafSince }),
    });
  }
  return out;
}

/** The state without its messages and step time, to tell real transitions from new wording. */
function transitions(state: RolloutState): unknown {
  return {
    ...state,
    message: '',
    updatedAt: 0,
    waves: state.waves.map((w) => ({ ...w, message: '' })),
    clusters: Object.fromEntries(Object.entries(state.clusters).map(([n, c]) => [n, { ...c, message: '' }])),
  };
}

interface Decision {
  state: RolloutState;
  actions: RolloutAction[];
  /** Anything differs from the committed state. */
  changed: boolean;
  /** Actions, or a phase, step or time changed (not only a message). */
  transition: boolean;
}

/** The engine's next step for one rollout, and what kind of change it is. */
function decide(row: RolloutRow, observed: Observed, at: Date, liveness: Liveness): Decision {
  const { state, actions } = advance(row.plan, row.state, observationsOf(row, observed, at, liveness), at.getTime());
  const changed = actions.length > 0 || !same({ ...state, updatedAt: 0 }, { ...row.state, updatedAt: 0 });
  const transition = changed && (actions.length > 0 || !same(transitions(state), transitions(row.state)));
  return { state, actions, changed, transition };
}

/** Whether carrying out a step writes pins and desired state (not only the rollout's own rows). */
function writesDesired(state: RolloutState, actions: readonly RolloutAction[]): boolean {
  return actions.some((a) => a.type === 'setRevision') || state.phase === 'Succeeded' || state.phase === 'RolledBack';
}

/** Runs `fn` over `items` with at most `limit` at once; results in input order. */
async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
