/**
 * Pre-pull of the next wave (strategy.prePull), the engine's part: once every cluster of the
 * running wave was moved and soaks (or is done), the next wave's pre-pull is placed; when that
 * wave's turn comes it waits until each of its clusters pulled (or failed to, or cannot report),
 * at most maxWaitSeconds from the moment it could start, then ends the pre-pull and starts. The
 * first wave is not pre-pulled: nothing soaks before it. Pure; the acting code keeps the
 * ImagePullJobs in line with `prePullClusters`.
 */
import type {
  ClusterObservation,
  FrozenPlan,
  ObservedPrePull,
  FrozenWave,
  RolloutAction,
  RolloutState,
  WaveState,
} from './types.js';
import { isTerminalPhase } from './types.js';

/** What of the engine's step the pre-pull reads and writes. */
export interface PrePullStep {
  readonly plan: FrozenPlan;
  readonly s: RolloutState;
  readonly now: number;
  readonly actions: RolloutAction[];
  event(level: 'info' | 'warning', message: string, wave?: string, cluster?: string): void;
  observe(name: string): ClusterObservation;
}

/** Clusters moved and now soaking or done: the wave's own updates are over. */
const SETTLED = new Set(['Soaking', 'Succeeded', 'Failed', 'Skipped', 'RolledBack']);

/** Places the next wave's pre-pull once wave `i` has moved all its clusters. */
export function placeNextPrePull(step: PrePullStep, i: number): void {
  const next = step.s.waves[i + 1];
  const w = step.plan.waves[i]!;
  if (!step.plan.prePull || !next || next.prePull || next.phase !== 'Pending') return;
  if (!w.members.every((m) => SETTLED.has(step.s.clusters[m]!.phase))) return;
  placePrePull(step, i + 1);
}

function placePrePull(step: PrePullStep, i: number): void {
  const w = step.plan.waves[i]!;
  step.s.waves[i]!.prePull = { placedAt: step.now };
  step.actions.push({ type: 'prePull', wave: w.name, place: true });
  step.event('info', `pre-pull of the target revision's images placed on wave "${w.name}"`, w.name);
}

/** Why a cluster's pull is over: undefined while it still pulls and can say so. */
function settledPull(o: ClusterObservation): string | undefined {
  if (o.removed) return 'removed';
  // A hub that has only just started observing cannot tell offline from not heard yet.
  if (o.unsure) return undefined;
  if (!o.online) return 'offline';
  if (o.prePull?.state === 'Pulled') return 'pulled';
  if (o.prePull?.state === 'Failed') return `failed: ${o.prePull.message}`;
  return undefined;
}

/**
 * Whether the wave may start as far as its pre-pull goes; false while it waits (its clusters say
 * they wait for the pre-pull). Ends the pre-pull when the wave may start.
 */
export function prePullAllows(step: PrePullStep, w: FrozenWave, ws: WaveState): boolean {
  const pp = ws.prePull;
  if (!step.plan.prePull || !pp || pp.endedAt !== undefined) return true;
  const first = pp.waitFrom === undefined;
  pp.waitFrom ??= step.now;
  const until = pp.waitFrom + step.plan.prePull.maxWaitSeconds * 1000;
  const pulling = w.members.filter((m) => settledPull(step.observe(m)) === undefined);
  if (pulling.length > 0 && step.now < until) {
    for (const m of w.members) step.s.clusters[m]!.blocked = { reason: 'prePull', until };
    step.s.message = `wave "${w.name}" waits for the pre-pull of its images on ${pulling.join(', ')} (at most until ${new Date(until).toISOString()})`;
    if (first) step.event('info', step.s.message, w.name);
    return false;
  }
  endPrePull(step, w, ws, pulling);
  return true;
}

function endPrePull(step: PrePullStep, w: FrozenWave, ws: WaveState, pulling: string[]): void {
  ws.prePull!.endedAt = step.now;
  step.actions.push({ type: 'prePull', wave: w.name, place: false });
  const failed = w.members.flatMap((m) => {
    const why = settledPull(step.observe(m));
    return why?.startsWith('failed') ? [`${m} (${why})`] : [];
  });
  if (pulling.length > 0) {
    const secs = step.plan.prePull!.maxWaitSeconds;
    step.event('warning', `pre-pull not finished within ${secs}s on ${pulling.join(', ')}; starting anyway`, w.name);
  } else if (failed.length > 0) {
    step.event('warning', `pre-pull failed on ${failed.join(', ')}; starting anyway`, w.name);
  } else step.event('info', `pre-pull of wave "${w.name}" finished`, w.name);
}

/**
 * The clusters that should hold the rollout's pre-pull jobs now: members of waves whose pre-pull
 * is placed and not ended, while the rollout is not finished.
 */
export function prePullClusters(plan: FrozenPlan, state: RolloutState): string[] {
  if (isTerminalPhase(state.phase)) return [];
  return plan.waves.flatMap((w, i) => {
    const pp = state.waves[i]?.prePull;
    return pp && pp.endedAt === undefined ? w.members : [];
  });
}

/** One pre-pull job of a cluster as reported for the generation the hub sent (health absent: not yet). */
export interface ReportedPull {
  name: string;
  health: string | undefined;
  message: string;
}

/**
 * A cluster's pre-pull from the health of its jobs (one per image): any failed job fails it, all
 * healthy (and reported for the generation sent) pull it, anything else still pulls.
 */
export function combinePulls(jobs: readonly ReportedPull[]): ObservedPrePull {
  const failed = jobs.find((j) => j.health === 'Degraded');
  if (failed) return { state: 'Failed', message: `${failed.name}: ${failed.message}` };
  const done = jobs.filter((j) => j.health === 'Healthy').length;
  if (jobs.length > 0 && done === jobs.length) return { state: 'Pulled', message: `${done} image(s) pulled` };
  return { state: 'Pulling', message: `${done} of ${jobs.length} image(s) pulled` };
}
