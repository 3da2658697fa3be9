/**
 * What the scheduler decides for one rollout at one moment, from what the hub observes of its
 * workload and member clusters: the engine's next state and actions (engine.ts), and what kind of
 * change that is: a transition, or new wording only (written at most every few seconds, as each
 * write is a transaction the ticks that matter would wait for), and whether carrying it out
 * writes pins and desired state or only the rollout's own rows. Pure.
 */
import type { MaintenanceWindow, ObjectHealth, WaitReason } from '@flotilla/api';
import { compileWindows, windowState } from '../maintenance-windows.js';
import { advance } from './engine.js';
import { observeCluster, type ObservedDesired } from './observe.js';
import type { ClusterObservation, FrozenPlan, ObservedPrePull, RolloutAction, RolloutState } from './types.js';
import { countWaits } from './waits.js';

/** A step that would only reword messages is written at most this often per rollout. */
export const MESSAGE_REFRESH_MS = 3000;

/** The rollout as the scheduler steps it. */
export interface RolloutRun {
  /** Absent in some unit tests: then no analysis is observed. */
  id?: string;
  workloadId: string;
  targetRevision: number;
  plan: FrozenPlan;
  state: RolloutState;
}

/** A stored status report as the scheduler reads it. */
export interface StoredStatus {
  revision: number;
  generation: number;
  health: string;
  message: string;
  storedAt: Date;
}

/** A workload a rollout's workload depends on, resolved to the live workload (if any). */
export interface ViewedDependency {
  label: string;
  workloadId: string | undefined;
}

/** What the hub knows of the rollouts' workloads and member clusters (read in a few queries). */
export interface FleetView {
  /** Ids of the workloads that exist. */
  workloads: ReadonlySet<string>;
  /** The dependencies of each rollout's workload (absent: none). */
  dependencies?: ReadonlyMap<string, readonly ViewedDependency[]>;
  /** Desired rows and status reports by memberKey(workloadId, cluster). */
  desired: ReadonlyMap<string, ObservedDesired>;
  status: ReadonlyMap<string, StoredStatus>;
  clusters: ReadonlyMap<string, ViewedCluster>;
  /** What the analysis runner measured, by analysisKey(rollout, cluster, attempt). */
  analysis?: ReadonlyMap<string, MeasuredAnalysis>;
  /** The pre-pull of clusters holding a rollout's ImagePullJobs, by memberKey(rollout, cluster). */
  prePull?: ReadonlyMap<string, ObservedPrePull>;
}

export type MeasuredAnalysis = NonNullable<ClusterObservation['analysis']>;

export const analysisKey = (rolloutId: string, cluster: string, attempt: number): string =>
  `${rolloutId}/${cluster}/${attempt}`;

/** The measured analysis of a cluster whose analysis attempt is running. */
function analysisOf(run: RolloutRun, name: string, view: FleetView): MeasuredAnalysis | undefined {
  const a = run.state.clusters[name]?.analysis;
  if (!a || a.verdict !== 'Running' || run.id === undefined) return undefined;
  return view.analysis?.get(analysisKey(run.id, name, a.attempt));
}

export interface ViewedCluster {
  state: string;
  lastHeartbeatAt: Date | null;
  /** Absent or empty: the cluster may be started at any time. */
  maintenanceWindows?: readonly MaintenanceWindow[];
}

/**
 * The windows of a cluster whose turn may come in this step: Pending in the current wave or a
 * later one (a step that finishes a wave starts the next at once). Others need none.
 */
function windowOf(run: RolloutRun, name: string, cluster: ViewedCluster | undefined, at: Date) {
  const cs = run.state.clusters[name];
  const windows = cluster?.maintenanceWindows ?? [];
  if (windows.length === 0 || cs?.phase !== 'Pending' || cs.wave < run.state.currentWave) return undefined;
  return windowState(compileWindows(windows), at.getTime());
}

/** The pre-pull of a cluster holding the rollout's ImagePullJobs (keyed by rollout, not workload). */
function prePullOf(run: RolloutRun, name: string, view: FleetView): Pick<ClusterObservation, 'prePull'> {
  const prePull = run.id === undefined ? undefined : view.prePull?.get(memberKey(run.id, name));
  return prePull ? { prePull } : {};
}

export const memberKey = (workloadId: string, cluster: string): string => `${workloadId}/${cluster}`;

/** A cluster whose turn may come in this step (see windowOf). */
function mayStart(run: RolloutRun, name: string): boolean {
  const cs = run.state.clusters[name];
  return cs?.phase === 'Pending' && cs.wave >= run.state.currentWave;
}

/**
 * The dependencies of the rollout's workload in one cluster: each is ready when the cluster
 * reports it healthy at the revision and generation the hub last sent there.
 */
function dependenciesIn(run: RolloutRun, name: string, view: FleetView): ClusterObservation['dependencies'] {
  const deps = view.dependencies?.get(run.workloadId) ?? [];
  if (deps.length === 0 || !mayStart(run, name)) return undefined;
  const out = { missing: [] as string[], waiting: [] as string[] };
  for (const d of deps) {
    const desired = d.workloadId === undefined ? undefined : view.desired.get(memberKey(d.workloadId, name));
    if (!desired || desired.deleted) {
      out.missing.push(d.label);
      continue;
    }
    const st = view.status.get(memberKey(d.workloadId!, name));
    const ready =
      st !== undefined &&
      st.revision === desired.revision &&
      st.generation >= desired.generation &&
      st.health === 'Healthy';
    if (!ready) out.waiting.push(d.label);
  }
  return out;
}

/** How the scheduler judges heartbeats and freshness (see ObserveInput). */
export interface Liveness {
  heartbeatTimeoutMs: number;
  observingSince: Date | undefined;
  freshnessMs?: number;
  deafSince?: number;
}

/**
 * How the hub judges what it hears now. It has observed since it took the lead; back from
 * deafness, heartbeats sent meanwhile may still be queued, so observing starts again then.
 */
export function livenessOf(input: {
  heartbeatTimeoutMs: number;
  freshnessMs: number | undefined;
  leaderSince: Date | undefined;
  /** Whether the hub hears NATS, and since when it does (or does not); absent: always. */
  hearing: { hearing: boolean; since: number } | undefined;
}): Liveness {
  const { hearing: h, leaderSince } = input;
  const observingSince = h?.hearing && leaderSince ? new Date(Math.max(leaderSince.getTime(), h.since)) : leaderSince;
  return {
    heartbeatTimeoutMs: input.heartbeatTimeoutMs,
    observingSince,
    ...(input.freshnessMs === undefined ? {} : { freshnessMs: input.freshnessMs }),
    ...(h && !h.hearing ? { deafSince: h.since } : {}),
  };
}

/** The observation of every member cluster of the rollout (none when its workload is gone). */
export function observeMembers(
  run: RolloutRun,
  view: FleetView,
  at: Date,
  liveness: Liveness,
): Record<string, ClusterObservation> {
  const out: Record<string, ClusterObservation> = {};
  if (!view.workloads.has(run.workloadId)) return out;
  for (const name of run.plan.waves.flatMap((wave) => wave.members)) {
    const st = view.status.get(memberKey(run.workloadId, name));
    const cluster = view.clusters.get(name);
    const window = windowOf(run, name, cluster, at);
    out[name] = observeCluster({
      targetRevision: run.targetRevision,
      clusterState: cluster?.state ?? 'removed',
      lastHeartbeatAt: cluster?.lastHeartbeatAt ?? null,
      desired: view.desired.get(memberKey(run.workloadId, name)),
      status: st ? { ...st, health: st.health as ObjectHealth } : undefined,
      now: at,
      heartbeatTimeoutMs: liveness.heartbeatTimeoutMs,
      ...(liveness.observingSince ? { observingSince: liveness.observingSince } : {}),
      ...(liveness.freshnessMs === undefined ? {} : { freshnessMs: liveness.freshnessMs }),
      ...(liveness.deafSince === undefined ? {} : { deafSince: liveness.deafSince }),
    });
    if (window) out[name].window = window;
    const dependencies = dependenciesIn(run, name, view);
    if (dependencies) out[name].dependencies = dependencies;
    const analysis = analysisOf(run, name, view);
    if (analysis) out[name].analysis = analysis;
    Object.assign(out[name], prePullOf(run, name, view));
  }
  return out;
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
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

export interface Decision {
  state: RolloutState;
  actions: RolloutAction[];
  /** Anything differs from the committed state. */
  changed: boolean;
  /** Actions, or a phase, step or time changed (not only a message). */
  transition: boolean;
}

/** The engine's next step for one rollout, and what kind of change it is. */
export function decide(run: RolloutRun, view: FleetView, at: Date, liveness: Liveness): Decision {
  const { state, actions } = advance(run.plan, run.state, observeMembers(run, view, at, liveness), at.getTime());
  const changed = actions.length > 0 || !same({ ...state, updatedAt: 0 }, { ...run.state, updatedAt: 0 });
  const transition = changed && (actions.length > 0 || !same(transitions(state), transitions(run.state)));
  return { state, actions, changed, transition };
}

/** Whether a decision is written now: a transition always, new wording alone every few seconds. */
export function isDue(d: Decision, run: RolloutRun, at: Date): boolean {
  return d.transition || (d.changed && at.getTime() - run.state.updatedAt >= MESSAGE_REFRESH_MS);
}

/** Whether carrying out a step writes pins and desired state (not only the rollout's own rows). */
export function writesDesired(state: RolloutState, actions: readonly RolloutAction[]): boolean {
  // A staged rollback starts a rollout that moves clusters: it runs under the lock like a move;
  // placing or removing pre-pull jobs writes desired state.
  return (
    actions.some((a) => a.type === 'setRevision' || a.type === 'stagedRollback' || a.type === 'prePull') ||
    state.phase === 'Succeeded' ||
    state.phase === 'RolledBack'
  );
}

/** A tick's rollouts by what stepping them would do. */
export interface Triage<R> {
  /** Member clusters waiting, by reason, as this observation decides (all rollouts together). */
  waits: Partial<Record<WaitReason, number>>;
  /** Nothing due: not stepped this tick. */
  idle: R[];
  /** Changes of the rollout's own rows only: stepped side by side without the desired-state lock. */
  stateOnly: R[];
  /** Changes of pins and desired state: stepped one after the other under the lock. */
  withDesired: R[];
}

/**
 * Sorts the rollouts of a tick by one lock-free observation of all of them; each one that is
 * due is stepped in its own locked transaction that observes again. Paused rollouts are never
 * due; they count only in the waits.
 */
export function triage<R extends RolloutRun>(
  runs: readonly R[],
  view: FleetView,
  at: Date,
  liveness: Liveness,
): Triage<R> {
  const out: Triage<R> = { waits: {}, idle: [], stateOnly: [], withDesired: [] };
  for (const run of runs) {
    const d = decide(run, view, at, liveness);
    for (const [reason, n] of Object.entries(countWaits(run.plan, d.state)) as [WaitReason, number][]) {
      out.waits[reason] = (out.waits[reason] ?? 0) + n;
    }
    if (!isDue(d, run, at)) out.idle.push(run);
    else (writesDesired(d.state, d.actions) ? out.withDesired : out.stateOnly).push(run);
  }
  return out;
}
