/**
 * Operator controls on a rollout, as pure state transitions. A control that does not apply to
 * the current phase throws RolloutStateError, which the REST API turns into 409 with the phase.
 */
import { TERMINAL_ROLLOUT_PHASES, type FrozenPlan, type RolloutPhase, type RolloutState } from './types.js';

export type RolloutControl = 'pause' | 'resume' | 'approve' | 'abort' | 'retry';

export class RolloutStateError extends Error {
  override readonly name = 'RolloutStateError';
  readonly code = 'HUB_ERR_ROLLOUT_STATE';
  constructor(
    readonly control: RolloutControl,
    readonly phase: RolloutPhase,
    detail?: string,
  ) {
    super(`cannot ${control} a rollout that is ${phase}${detail ? `: ${detail}` : ''}`);
  }
}

function require(control: RolloutControl, s: RolloutState, allowed: readonly RolloutPhase[], detail?: string): void {
  if (!allowed.includes(s.phase)) throw new RolloutStateError(control, s.phase, detail);
}

export function pause(state: RolloutState, now: number, reason = 'paused by an operator'): RolloutState {
  require('pause', state, ['Progressing', 'WaitingApproval']);
  return { ...structuredClone(state), phase: 'Paused', resumeTo: state.phase, message: reason, updatedAt: now };
}

/**
 * Resumes a paused rollout. After a pause caused by exceeded budgets, resuming means the operator
 * accepts the failures seen so far: budgets then count only new failures.
 */
export function resume(state: RolloutState, now: number): RolloutState {
  require('resume', state, ['Paused']);
  const s = structuredClone(state);
  if (s.pausedForFailure) {
    const failed = Object.values(s.clusters).filter((c) => c.phase === 'Failed');
    s.failuresAccepted = failed.length;
    s.waves.forEach((ws, i) => {
      ws.failuresAccepted = failed.filter((c) => c.wave === i).length;
    });
  }
  s.phase = s.resumeTo ?? 'Progressing';
  delete s.resumeTo;
  delete s.pausedForFailure;
  s.message = 'resumed';
  s.updatedAt = now;
  return s;
}

/** Approves the gate the current wave waits at (before it starts, or after it finished). */
export function approve(state: RolloutState, plan: FrozenPlan, now: number, wave?: string): RolloutState {
  require('approve', state, ['WaitingApproval']);
  const s = structuredClone(state);
  const i = s.currentWave;
  const w = plan.waves[i];
  const ws = s.waves[i];
  if (!w || !ws || ws.phase !== 'WaitingApproval')
    throw new RolloutStateError('approve', s.phase, 'no wave waits for approval');
  if (wave !== undefined && wave !== w.name) {
    throw new RolloutStateError('approve', s.phase, `wave "${w.name}" waits for approval, not "${wave}"`);
  }
  if (ws.startedAt === undefined) {
    ws.approvedBefore = true;
    ws.phase = 'Pending';
  } else {
    ws.approvedAfter = true;
    ws.phase = 'Progressing';
  }
  s.phase = 'Progressing';
  s.message = `wave "${w.name}" approved`;
  s.updatedAt = now;
  return s;
}

/** Stops the rollout where it is: clusters keep whatever revision they have. */
export function abort(state: RolloutState, now: number): RolloutState {
  if (TERMINAL_ROLLOUT_PHASES.includes(state.phase)) throw new RolloutStateError('abort', state.phase);
  return { ...structuredClone(state), phase: 'Aborted', message: 'aborted by an operator', updatedAt: now };
}

/**
 * Sends failed clusters through their waves again with the same frozen plan. The rollout goes
 * back to the earliest wave that has a retried cluster.
 */
export function retry(state: RolloutState, now: number): RolloutState {
  require('retry', state, ['Failed', 'Paused', 'Progressing', 'WaitingApproval', 'Succeeded']);
  const s = structuredClone(state);
  const failed = Object.values(s.clusters).filter((c) => c.phase === 'Failed');
  if (failed.length === 0) throw new RolloutStateError('retry', s.phase, 'no failed clusters');
  for (const c of failed) {
    c.phase = 'Pending';
    c.step = 0;
    c.message = 'retrying';
    delete c.startedAt;
    delete c.deadlineAt;
    delete c.healthySince;
    delete c.finishedAt;
  }
  const first = Math.min(...failed.map((c) => c.wave));
  s.waves.forEach((ws, i) => {
    if (i < first) return;
    if (failed.some((c) => c.wave === i) || i === first) {
      ws.phase = ws.startedAt === undefined ? 'Pending' : 'Progressing';
      ws.failuresAccepted = 0;
      delete ws.finishedAt;
      ws.message = '';
    }
  });
  s.currentWave = Math.min(s.currentWave, first);
  s.failuresAccepted = 0;
  s.phase = 'Progressing';
  delete s.resumeTo;
  delete s.pausedForFailure;
  s.message = `retrying ${failed.length} failed cluster(s)`;
  s.updatedAt = now;
  return s;
}

/** Who applies a control, and what they said. */
export interface ControlRequest {
  actor: string;
  reason?: string;
  /** approve: the wave to approve (default: the current one). */
  wave?: string;
}

/** Applies an operator's control; throws RolloutStateError when it does not apply to the phase. */
export function applyControl(
  control: RolloutControl,
  state: RolloutState,
  plan: FrozenPlan,
  now: number,
  request: ControlRequest,
): RolloutState {
  switch (control) {
    case 'pause':
      return pause(state, now, request.reason ? `paused by ${request.actor}: ${request.reason}` : undefined);
    case 'resume':
      return resume(state, now);
    case 'approve':
      return approve(state, plan, now, request.wave);
    case 'abort':
      return abort(state, now);
    case 'retry':
      return retry(state, now);
  }
}
