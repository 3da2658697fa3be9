/**
 * The CloneSet's Progressing condition under `spec.progressDeadlineSeconds` (OpenKruise v1.9,
 * cloneset_status.go calculateProgressingStatus), pure. First matching row wins:
 *
 * a. updated at every replica and all of them available → True `CloneSetAvailable`;
 * b. `updateStrategy.paused` → True `CloneSetPaused`;
 * c. the partition's share updated and available → True `ProgressPartitionAvailable`;
 * d. already `ProgressDeadlineExceeded`, or `CloneSetUpdated` for longer than the deadline (from
 *    its lastUpdateTime) → False `ProgressDeadlineExceeded`;
 * e. else True `CloneSetUpdated`.
 *
 * A condition with the same status and reason is kept as it is (its lastUpdateTime is when the
 * reason was set, so partial progress never extends the deadline); otherwise it is replaced with
 * lastUpdateTime now, keeping lastTransitionTime when the status did not change. No deadline (or
 * MaxInt32) removes the condition.
 *
 * One deliberate difference (ADR 0015): v1.9 times row d from the carried-over condition whatever
 * its reason, so a CloneSet that stayed Available, Paused or PartitionAvailable longer than the
 * deadline fails at the first reconcile of its next rollout. Here only time spent in
 * `CloneSetUpdated` counts, as for a Kubernetes Deployment: leaving a resting state starts the
 * deadline afresh.
 */
import type { CloneSetCondition, CloneSetStatus } from '@flotilla/api';
import { formatTime, parseTime } from '../../runtime/kube-time.js';
import type { CloneSet } from './types.js';

export const PROGRESSING = 'Progressing';
const NO_DEADLINE = 2147483647;

export const ProgressingReason = {
  Available: 'CloneSetAvailable',
  Paused: 'CloneSetPaused',
  PartitionAvailable: 'ProgressPartitionAvailable',
  DeadlineExceeded: 'ProgressDeadlineExceeded',
  Updated: 'CloneSetUpdated',
} as const;

type Counters = Pick<
  CloneSetStatus,
  | 'replicas'
  | 'updatedReplicas'
  | 'updatedAvailableReplicas'
  | 'expectedUpdatedReplicas'
  | 'currentRevision'
  | 'updateRevision'
>;

/** The deadline in seconds, or undefined when there is none. */
export function progressDeadline(cs: CloneSet): number | undefined {
  const d = cs.spec.progressDeadlineSeconds;
  return d === undefined || d === NO_DEADLINE ? undefined : d;
}

interface Wanted {
  status: string;
  reason: string;
  message: string;
}

/** Rows a–c: the resting states, whatever the deadline. */
function resting(cs: CloneSet, s: Counters): Wanted | undefined {
  const replicas = cs.spec.replicas ?? 1;
  const updatedAvailable = s.updatedAvailableReplicas ?? 0;
  const allUpdated = s.replicas === replicas && (s.updatedReplicas ?? 0) === replicas;
  if (s.currentRevision === s.updateRevision && allUpdated && updatedAvailable === replicas) {
    return { status: 'True', reason: ProgressingReason.Available, message: 'CloneSet is available' };
  }
  if (cs.spec.updateStrategy?.paused) {
    return { status: 'True', reason: ProgressingReason.Paused, message: 'CloneSet is paused' };
  }
  const expected = s.expectedUpdatedReplicas ?? replicas;
  if (expected < replicas && expected <= updatedAvailable) {
    return {
      status: 'True',
      reason: ProgressingReason.PartitionAvailable,
      message: 'CloneSet has been paused due to partition ready',
    };
  }
  return undefined;
}

function desired(cs: CloneSet, s: Counters, old: CloneSetCondition | undefined, now: number): Wanted {
  const rest = resting(cs, s);
  if (rest) return rest;
  if (old && isExceeded(old, progressDeadline(cs)!, now)) {
    return {
      status: 'False',
      reason: ProgressingReason.DeadlineExceeded,
      message: `CloneSet revision ${s.updateRevision ?? ''} has timed out progressing`,
    };
  }
  return { status: 'True', reason: ProgressingReason.Updated, message: 'CloneSet is progressing' };
}

function isExceeded(old: CloneSetCondition, deadline: number, now: number): boolean {
  if (old.reason === ProgressingReason.DeadlineExceeded) return true;
  const since = old.reason === ProgressingReason.Updated ? parseTime(old.lastUpdateTime) : undefined;
  return since !== undefined && since + deadline * 1000 < now;
}

/** The Progressing condition the CloneSet should carry; undefined removes it. */
export function progressingCondition(
  cs: CloneSet,
  status: Counters,
  old: readonly CloneSetCondition[] | undefined,
  now: number,
): CloneSetCondition | undefined {
  if (progressDeadline(cs) === undefined) return undefined;
  const before = old?.find((c) => c.type === PROGRESSING);
  const want = desired(cs, status, before, now);
  if (before && before.status === want.status && before.reason === want.reason) return before;
  const at = formatTime(now);
  return {
    type: PROGRESSING,
    ...want,
    lastUpdateTime: at,
    lastTransitionTime: before && before.status === want.status ? (before.lastTransitionTime ?? at) : at,
  };
}

/**
 * Milliseconds until a `CloneSetUpdated` condition passes its deadline (v1.9 requeues then, plus
 * a second when at least a second is left), so the reconcile that turns it False comes on time.
 */
export function progressDeadlineIn(
  cs: CloneSet,
  conditions: readonly CloneSetCondition[] | undefined,
  now: number,
): number | undefined {
  const deadline = progressDeadline(cs);
  const c = conditions?.find((x) => x.type === PROGRESSING);
  const since = c?.reason === ProgressingReason.Updated ? parseTime(c.lastUpdateTime) : undefined;
  if (deadline === undefined || since === undefined) return undefined;
  const left = since + deadline * 1000 - now;
  if (left <= 0) return undefined;
  return left >= 1000 ? left + 1000 : left;
}
