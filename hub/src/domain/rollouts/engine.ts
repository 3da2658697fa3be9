/**
 * The rollout scheduler's decision function: from the frozen plan, the committed state and what
 * the hub observes of each cluster now, the next state and the actions to carry out. Pure and
 * deterministic, so a hub that restarts mid-wave and runs it again neither repeats nor skips a
 * cluster: every decision is recorded in the state committed together with its actions.
 */
import type { HealthVerdict } from '@flotilla/api';
import type {
  ClusterObservation,
  ClusterState,
  FrozenPlan,
  FrozenWave,
  RolloutAction,
  RolloutState,
  WaveState,
} from './types.js';
import { TERMINAL_ROLLOUT_PHASES } from './types.js';
import { placeNextPrePull, prePullAllows } from './pre-pull.js';

export interface StepResult {
  state: RolloutState;
  actions: RolloutAction[];
}

const UNKNOWN: HealthVerdict = { state: 'Unknown', reason: 'NoStatus', message: 'no status reported yet' };
const ACTIVE = new Set(['Updating', 'Soaking']);
const DONE = new Set(['Succeeded', 'Failed', 'Skipped', 'RolledBack']);
/** Clusters that were given the target revision; a rollback must return them. */
const TOUCHED = new Set(['Updating', 'Soaking', 'Succeeded', 'Failed']);

export function initialState(plan: FrozenPlan, now: number): RolloutState {
  const clusters: Record<string, ClusterState> = {};
  plan.waves.forEach((w, i) => {
    for (const m of w.members) clusters[m] = { wave: i, phase: 'Pending', step: 0, message: '' };
  });
  return {
    phase: 'Progressing',
    currentWave: 0,
    waves: plan.waves.map(() => ({
      phase: 'Pending',
      approvedBefore: false,
      approvedAfter: false,
      failuresAccepted: 0,
      message: '',
    })),
    clusters,
    message: '',
    failuresAccepted: 0,
    updatedAt: now,
  };
}

/** Forgets a healthy stretch and what it credited (health lost, next step, a new start). */
function resetHealthy(cs: ClusterState): void {
  delete cs.healthySince;
  delete cs.creditedMs;
  delete cs.freshSince;
}

const needsBefore = (w: FrozenWave): boolean => w.approval === 'Before' || w.approval === 'BeforeAndAfter';
const needsAfter = (w: FrozenWave): boolean => w.approval === 'After' || w.approval === 'BeforeAndAfter';

class Step {
  readonly actions: RolloutAction[] = [];
  constructor(
    readonly plan: FrozenPlan,
    readonly s: RolloutState,
    readonly obs: Readonly<Record<string, ClusterObservation>>,
    readonly now: number,
  ) {}

  event(level: 'info' | 'warning', message: string, wave?: string, cluster?: string): void {
    this.actions.push({ type: 'event', level, message, ...(wave ? { wave } : {}), ...(cluster ? { cluster } : {}) });
  }

  observe(name: string): ClusterObservation {
    return this.obs[name] ?? { online: false, removed: false, health: UNKNOWN };
  }

  finishCluster(name: string, cs: ClusterState, phase: 'Succeeded' | 'Failed' | 'Skipped', message: string): void {
    cs.phase = phase;
    cs.finishedAt = this.now;
    cs.message = message;
    delete cs.blocked;
    const w = this.plan.waves[cs.wave]!;
    this.event(
      phase === 'Succeeded' ? 'info' : 'warning',
      `cluster ${name} ${phase.toLowerCase()}: ${message}`,
      w.name,
      name,
    );
  }

  setTarget(name: string, w: FrozenWave, cs: ClusterState): void {
    const step = w.canarySteps[cs.step];
    this.actions.push({
      type: 'setRevision',
      cluster: name,
      revision: 'target',
      ...(step ? { partition: step.partition } : {}),
    });
  }

  /**
   * Healthy time credited to the cluster's current step pause or soak. Time counts only while
   * what the hub heard of the cluster is current (ClusterObservation.freshUntil): when the news
   * goes stale, the stretch is closed at its freshUntil and the count pauses, keeping what was
   * credited; the next current news opens a new stretch. Pause and resume are state changes
   * (written by the scheduler), so no stretch is ever credited across a gap the hub saw.
   */
  healthyTime(cs: ClusterState, o: ClusterObservation): number {
    const until = o.freshUntil ?? Infinity;
    const fresh = this.now <= until;
    if (cs.healthySince === undefined) {
      cs.healthySince = this.now;
      cs.creditedMs = 0;
      cs.freshSince = this.now;
    } else if (cs.creditedMs === undefined) {
      // State written before credits existed: healthy and current since healthySince.
      cs.creditedMs = 0;
      cs.freshSince = cs.healthySince;
    }
    if (cs.freshSince !== undefined && !fresh) {
      cs.creditedMs = (cs.creditedMs ?? 0) + Math.max(0, until - cs.freshSince);
      cs.freshSince = undefined;
    } else if (cs.freshSince === undefined && fresh) cs.freshSince = this.now;
    return (cs.creditedMs ?? 0) + (cs.freshSince === undefined ? 0 : this.now - cs.freshSince);
  }

  /** Why a pause or soak does not count right now, or undefined when it does. */
  pausedBecause(cs: ClusterState, o: ClusterObservation): string | undefined {
    if (cs.freshSince !== undefined) return undefined;
    if (o.hubDeaf) return 'paused: the hub cannot hear NATS';
    return 'paused: no heartbeat or report from the cluster within the freshness window';
  }

  /** Moves one Updating cluster along its canary steps towards Soaking. */
  updating(name: string, w: FrozenWave, cs: ClusterState, o: ClusterObservation): void {
    if (o.health.state === 'Degraded') {
      this.finishCluster(name, cs, 'Failed', `unhealthy: ${o.health.reason}: ${o.health.message}`);
      return;
    }
    if (o.health.state !== 'Healthy') {
      resetHealthy(cs);
      if (o.hubDeaf) cs.message = 'the hub cannot hear NATS; waiting';
      else if (this.now >= (cs.deadlineAt ?? Infinity)) {
        const why = o.online ? `${o.health.reason}: ${o.health.message}` : 'the agent is offline';
        this.finishCluster(name, cs, 'Failed', `not healthy within ${w.progressDeadlineSeconds}s (${why})`);
      } else cs.message = `${o.health.reason}: ${o.health.message}`;
      return;
    }
    const healthyMs = this.healthyTime(cs, o);
    if (cs.step < w.canarySteps.length) {
      const pause = (w.canarySteps[cs.step]!.pauseSeconds ?? 0) * 1000;
      if (healthyMs < pause) {
        const paused = this.pausedBecause(cs, o);
        cs.message = `canary step ${cs.step + 1}/${w.canarySteps.length} healthy, ${paused ?? 'pausing'}`;
        return;
      }
      cs.step += 1;
      resetHealthy(cs);
      cs.deadlineAt = this.now + w.progressDeadlineSeconds * 1000;
      cs.message =
        cs.step < w.canarySteps.length ? `canary step ${cs.step + 1}/${w.canarySteps.length}` : 'full update';
      this.setTarget(name, w, cs);
      this.event('info', `cluster ${name}: ${cs.message}`, w.name, name);
      return;
    }
    cs.phase = 'Soaking';
    cs.message = 'healthy, soaking';
    if (w.analysis) this.newAnalysis(cs);
    this.soaking(name, w, cs, o);
  }

  /** Starts a new analysis attempt: the runner measures each attempt from its start. */
  newAnalysis(cs: ClusterState): void {
    cs.analysis = {
      attempt: (cs.analysis?.attempt ?? 0) + 1,
      verdict: 'Running',
      measurements: 0,
      message: 'waiting for the first measurement',
      results: [],
    };
  }

  /**
   * A healthy cluster whose wave has analysis: the soak waits until the analysis passed. A failed
   * analysis fails the cluster (the budgets count it like an unhealthy one); an inconclusive one
   * pauses the rollout, saying why, and a resume measures again in a new attempt.
   */
  analyzing(name: string, w: FrozenWave, cs: ClusterState, o: ClusterObservation): void {
    const count = w.analysis!.count;
    if (!cs.analysis || cs.analysis.verdict === 'Inconclusive') this.newAnalysis(cs);
    const a = cs.analysis!;
    // The soak counts from the moment the analysis passed.
    resetHealthy(cs);
    if (o.analysis) Object.assign(a, o.analysis);
    switch (a.verdict) {
      case 'Failed':
        this.finishCluster(name, cs, 'Failed', `analysis failed: ${a.message}`);
        return;
      case 'Inconclusive':
        cs.message = `analysis inconclusive: ${a.message}`;
        this.s.phase = 'Paused';
        this.s.resumeTo = 'Progressing';
        this.s.message = `cluster ${name}: analysis inconclusive (${a.message}); resume to measure again`;
        this.event('warning', this.s.message, w.name, name);
        return;
      case 'Passed':
        this.event('info', `cluster ${name}: analysis passed (${a.measurements}/${count})`, w.name, name);
        cs.message = 'analysis passed, soaking';
        this.soaking(name, w, cs, o);
        return;
      case 'Running':
        cs.message =
          a.measurements === 0
            ? 'healthy, analysis waiting for the first measurement'
            : `healthy, analysis ${a.measurements}/${count} measurement(s) passed`;
    }
  }

  soaking(name: string, w: FrozenWave, cs: ClusterState, o: ClusterObservation): void {
    if (o.health.state === 'Degraded') {
      this.finishCluster(name, cs, 'Failed', `unhealthy while soaking: ${o.health.reason}: ${o.health.message}`);
    } else if (o.health.state !== 'Healthy') {
      cs.phase = 'Updating';
      resetHealthy(cs);
      cs.deadlineAt = this.now + w.progressDeadlineSeconds * 1000;
      cs.message = `health lost while soaking: ${o.health.reason}: ${o.health.message}`;
    } else if (w.analysis && cs.analysis?.verdict !== 'Passed') {
      this.analyzing(name, w, cs, o);
    } else if (this.healthyTime(cs, o) >= w.soakSeconds * 1000) {
      this.finishCluster(name, cs, 'Succeeded', `healthy for ${w.soakSeconds}s at the target revision`);
    } else {
      const paused = this.pausedBecause(cs, o);
      cs.message = paused ? `healthy, soak ${paused}` : 'healthy, soaking';
    }
  }

  /** A cluster whose turn came outside its maintenance windows waits; the others go on. */
  waitForWindow(name: string, w: FrozenWave, cs: ClusterState, opensAt: number | undefined): void {
    if (cs.blocked?.reason !== 'window' || cs.blocked.until !== opensAt) {
      const when = opensAt === undefined ? 'no window opens within 8 years' : new Date(opensAt).toISOString();
      this.event('info', `cluster ${name} waits for its maintenance window (opens ${when})`, w.name, name);
    }
    cs.blocked = { reason: 'window', ...(opensAt === undefined ? {} : { until: opensAt }) };
    cs.message =
      opensAt === undefined
        ? 'outside its maintenance windows; none opens within 8 years'
        : `outside its maintenance windows; the next opens at ${new Date(opensAt).toISOString()}`;
  }

  /**
   * A cluster whose turn came while a workload this one depends on is not healthy there waits;
   * one that is not placed there at all can never become so: the rollout pauses and says why.
   */
  holdForDependencies(name: string, w: FrozenWave, cs: ClusterState, deps: { missing: string[]; waiting: string[] }) {
    if (deps.missing.length > 0) {
      const what = deps.missing.join(', ');
      cs.message = `depends on ${what}, which is not placed on this cluster`;
      this.s.phase = 'Paused';
      this.s.resumeTo = 'Progressing';
      this.s.message = `cluster ${name} depends on ${what}, which is not placed there; place it or change dependsOn, then resume`;
      this.event('warning', this.s.message, w.name, name);
      return;
    }
    const what = deps.waiting.join(', ');
    if (cs.blocked?.reason !== 'dependency') {
      this.event('info', `cluster ${name} waits for ${what} to be healthy there`, w.name, name);
    }
    cs.blocked = { reason: 'dependency' };
    cs.message = `waiting for ${what} to be healthy at its target revision`;
  }

  /** A cluster whose turn came while the hub cannot judge it yet waits; returns false (not started). */
  waitForHeartbeat(cs: ClusterState, o: ClusterObservation): false {
    cs.blocked = { reason: 'heartbeat' };
    cs.message = o.hubDeaf
      ? 'waiting: the hub cannot hear NATS'
      : 'waiting for a heartbeat: the hub has only just started observing';
    return false;
  }

  start(name: string, w: FrozenWave, cs: ClusterState): boolean {
    const o = this.observe(name);
    if (o.unsure) return this.waitForHeartbeat(cs, o);
    if (!o.removed && o.window && !o.window.open) {
      this.waitForWindow(name, w, cs, o.window.opensAt);
      return false;
    }
    const deps = o.dependencies;
    if (!o.removed && o.online && deps && (deps.missing.length > 0 || deps.waiting.length > 0)) {
      this.holdForDependencies(name, w, cs, deps);
      return false;
    }
    delete cs.blocked;
    if (o.removed || !o.online) {
      const why = o.removed ? 'removed from the fleet' : 'offline when its turn came';
      this.finishCluster(name, cs, this.plan.offlinePolicy === 'Skip' ? 'Skipped' : 'Failed', why);
      return false;
    }
    cs.phase = 'Updating';
    cs.step = 0;
    cs.startedAt = this.now;
    cs.deadlineAt = this.now + w.progressDeadlineSeconds * 1000;
    resetHealthy(cs);
    cs.message = w.canarySteps.length > 0 ? `canary step 1/${w.canarySteps.length}` : 'updating';
    this.setTarget(name, w, cs);
    this.event('info', `cluster ${name} started`, w.name, name);
    return true;
  }

  progressWave(w: FrozenWave): void {
    for (const name of w.members) {
      const cs = this.s.clusters[name]!;
      const o = this.observe(name);
      if (ACTIVE.has(cs.phase) && o.removed)
        this.finishCluster(name, cs, 'Failed', 'removed from the fleet during the rollout');
      else if (cs.phase === 'Updating') this.updating(name, w, cs, o);
      else if (cs.phase === 'Soaking') this.soaking(name, w, cs, o);
    }
    let active = w.members.filter((m) => ACTIVE.has(this.s.clusters[m]!.phase)).length;
    for (const name of w.members) {
      // A start that paused the rollout (a dependency that cannot be met) starts nothing more.
      if (active >= w.maxConcurrency || this.s.phase !== 'Progressing') break;
      const cs = this.s.clusters[name]!;
      if (cs.phase === 'Pending' && this.start(name, w, cs)) active++;
    }
  }

  failed(members: string[]): string[] {
    return members.filter((m) => this.s.clusters[m]!.phase === 'Failed');
  }

  /** Applies the strategy's onFailure; returns true when the rollout stops advancing. */
  onBudgetExceeded(w: FrozenWave, ws: WaveState, reason: string): boolean {
    switch (this.plan.onFailure) {
      case 'Pause':
        this.s.phase = 'Paused';
        this.s.pausedForFailure = true;
        this.s.resumeTo = 'Progressing';
        this.s.message = `${reason}; paused`;
        ws.message = reason;
        this.event('warning', this.s.message, w.name);
        return true;
      case 'Rollback':
        this.rollback(reason);
        ws.phase = 'Failed';
        ws.finishedAt = this.now;
        ws.message = reason;
        return true;
      case 'Continue':
        ws.message = reason;
        return false;
    }
  }

  rollback(reason: string): void {
    if (this.plan.rollback === 'Staged') {
      const moved = Object.keys(this.s.clusters).filter((n) => TOUCHED.has(this.s.clusters[n]!.phase));
      if (moved.length > 0) return this.stagedRollback(reason, moved);
    }
    const back: string[] = [];
    for (const [name, cs] of Object.entries(this.s.clusters)) {
      if (!TOUCHED.has(cs.phase)) continue;
      cs.phase = 'RolledBack';
      cs.finishedAt = this.now;
      cs.message = 'returned to the previous revision';
      this.actions.push({ type: 'setRevision', cluster: name, revision: 'previous' });
      back.push(name);
    }
    this.s.phase = 'RolledBack';
    this.s.message = `${reason}; rolled back ${back.length} cluster(s)${back.length ? `: ${back.join(', ')}` : ''}`;
    this.event('warning', this.s.message);
  }

  /**
   * Ends the rollout as Failed (clusters keep their pins) and asks for a rollback rollout that
   * returns the moved clusters in reverse wave order, with the same gates and soak.
   */
  stagedRollback(reason: string, moved: string[]): void {
    this.s.phase = 'Failed';
    this.s.message = `${reason}; rolling back ${moved.length} cluster(s) in stages: ${moved.join(', ')}`;
    this.actions.push({ type: 'stagedRollback', clusters: moved });
    this.event('warning', this.s.message);
  }

  /** Whether failures exceed the wave's or the rollout's budget (beyond accepted ones). */
  budgetExceeded(w: FrozenWave, ws: WaveState): string | undefined {
    const waveFailed = this.failed(w.members);
    const allFailed = this.failed(Object.keys(this.s.clusters));
    if (waveFailed.length - ws.failuresAccepted > w.failureBudget) {
      return `wave "${w.name}" exceeded its failure budget of ${w.failureBudget} (failed: ${waveFailed.join(', ')})`;
    }
    if (allFailed.length - this.s.failuresAccepted > this.plan.failureBudget) {
      return `the rollout exceeded its failure budget of ${this.plan.failureBudget} (failed: ${allFailed.join(', ')})`;
    }
    return undefined;
  }

  /** Runs the current wave; returns true when the next wave may start in this same step. */
  runWave(): boolean {
    const i = this.s.currentWave;
    const w = this.plan.waves[i]!;
    const ws = this.s.waves[i]!;
    if (ws.phase === 'Pending' && !this.startWave(w, ws)) return false;
    if (ws.phase === 'WaitingApproval') {
      this.s.phase = 'WaitingApproval';
      return false;
    }
    if (ws.phase !== 'Progressing') {
      // A wave finished earlier (the rollout came back to an earlier wave for a retry).
      this.s.currentWave += 1;
      return true;
    }
    this.progressWave(w);
    placeNextPrePull(this, i);
    const exceeded = this.budgetExceeded(w, ws);
    if (exceeded && ws.message !== exceeded && this.onBudgetExceeded(w, ws, exceeded)) return false;
    if (!w.members.every((m) => DONE.has(this.s.clusters[m]!.phase))) return false;
    return this.finishWave(w, ws);
  }

  /**
   * Starts a pending wave; returns false while it waits for approval, for the hub to hear NATS or
   * (bounded) for the pre-pull of its images.
   */
  startWave(w: FrozenWave, ws: WaveState): boolean {
    if (needsBefore(w) && !ws.approvedBefore) {
      return this.waitApproval(w, ws, `wave "${w.name}" waits for approval to start`);
    }
    // A hub that cannot hear NATS would start a wave it cannot watch.
    if (w.members.some((m) => this.observe(m).hubDeaf)) {
      this.s.message = `wave "${w.name}" waits: the hub cannot hear NATS`;
      for (const m of w.members) this.s.clusters[m]!.blocked = { reason: 'heartbeat' };
      return false;
    }
    if (!prePullAllows(this, w, ws)) return false;
    ws.phase = 'Progressing';
    ws.startedAt = this.now;
    // What held the wave no longer holds its clusters (each start judges its own).
    for (const m of w.members) delete this.s.clusters[m]!.blocked;
    this.event('info', `wave "${w.name}" started (${w.members.length} cluster(s))`, w.name);
    return true;
  }

  /**
   * Closes a wave whose clusters are all done, once approved when it needs approval after; returns
   * true when the next wave may start.
   */
  finishWave(w: FrozenWave, ws: WaveState): boolean {
    const succeeded = w.members.filter((m) => this.s.clusters[m]!.phase === 'Succeeded').length;
    const failed = this.failed(w.members).length;
    // A wave whose clusters were all skipped proved nothing; failures are the budgets' business.
    if (succeeded === 0 && failed === 0) {
      const reason = `no cluster of wave "${w.name}" reached the target revision`;
      if (ws.message !== reason && this.onBudgetExceeded(w, ws, reason)) return false;
    }
    if (needsAfter(w) && !ws.approvedAfter) {
      return this.waitApproval(w, ws, `wave "${w.name}" finished; waits for approval`);
    }
    ws.phase = failed - ws.failuresAccepted > w.failureBudget || succeeded === 0 ? 'Failed' : 'Succeeded';
    ws.finishedAt = this.now;
    ws.message = `${succeeded} succeeded, ${failed} failed, ${w.members.length - succeeded - failed} skipped`;
    this.event(
      ws.phase === 'Succeeded' ? 'info' : 'warning',
      `wave "${w.name}" ${ws.phase.toLowerCase()}: ${ws.message}`,
      w.name,
    );
    this.s.currentWave += 1;
    return true;
  }

  waitApproval(w: FrozenWave, ws: WaveState, message: string): boolean {
    if (ws.phase !== 'WaitingApproval') this.event('info', message, w.name);
    ws.phase = 'WaitingApproval';
    this.s.phase = 'WaitingApproval';
    this.s.message = message;
    return false;
  }

  run(): void {
    this.s.phase = 'Progressing';
    this.s.message = '';
    while (this.s.currentWave < this.plan.waves.length) {
      if (!this.runWave()) return;
    }
    const failedWaves = this.s.waves.filter((w) => w.phase === 'Failed').length;
    this.s.phase = failedWaves > 0 ? 'Failed' : 'Succeeded';
    this.s.message =
      failedWaves > 0 ? `finished with ${failedWaves} failed wave(s)` : 'every wave reached the target revision';
    this.event(failedWaves > 0 ? 'warning' : 'info', `rollout ${this.s.phase.toLowerCase()}: ${this.s.message}`);
  }
}

/** One scheduling step. Paused, waiting and finished rollouts do not move. */
export function advance(
  plan: FrozenPlan,
  state: RolloutState,
  observations: Readonly<Record<string, ClusterObservation>>,
  now: number,
): StepResult {
  if (TERMINAL_ROLLOUT_PHASES.includes(state.phase) || state.phase === 'Paused') return { state, actions: [] };
  const s = structuredClone(state);
  const step = new Step(plan, s, observations, now);
  step.run();
  s.updatedAt = now;
  return { state: s, actions: step.actions };
}

/** Clusters currently given the target revision and not rolled back (for status and demos). */
export function clustersAtTarget(state: RolloutState): string[] {
  return Object.entries(state.clusters)
    .filter(([, cs]) => TOUCHED.has(cs.phase))
    .map(([n]) => n);
}
