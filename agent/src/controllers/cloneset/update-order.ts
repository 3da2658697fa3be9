/**
 * Which pods an update takes first, and how many (OpenKruise sync/cloneset_update.go
 * SortUpdateIndexes and limitUpdateIndexes). Candidates are positions in the CloneSet's pod list:
 *
 * 1.-3. ActivePods order, then priorityStrategy, then scatterStrategy (kube/pod-order.ts, shared
 *    with the SidecarSet's upgrade order);
 * 4. PreparingUpdate pods first.
 *
 * Then at most |updateNum| are taken, and no more than updateMaxUnavailable may be unavailable.
 */
import { LifecycleState, type UpdatePriorityStrategy, type UpdateScatterStrategy } from '@flotilla/api';
import { compareActivePods, sortByPriority, sortByScatter } from '../../kube/pod-order.js';
import { hasRevision, isPodAvailable, lifecycleState } from './pods.js';
import type { Pod } from '../../kube/types.js';

/** Full update order of candidate positions. */
export function sortUpdateCandidates(
  strategy: { priorityStrategy?: UpdatePriorityStrategy; scatterStrategy?: UpdateScatterStrategy },
  pods: readonly Pod[],
  candidates: readonly number[],
): number[] {
  let idx = [...candidates].sort((i, j) => compareActivePods(pods[i]!, pods[j]!));
  idx = sortByPriority(strategy.priorityStrategy, pods, idx);
  idx = sortByScatter(strategy.scatterStrategy, pods, idx);
  const preparing = (i: number): boolean => lifecycleState(pods[i]!) === LifecycleState.PreparingUpdate;
  return [...idx.filter(preparing), ...idx.filter((i) => !preparing(i))];
}

export interface LimitInput {
  pods: readonly Pod[];
  /** Sorted candidate positions. */
  candidates: readonly number[];
  updateNum: number;
  updateMaxUnavailable: number;
  targetRevision: string;
  minReadySeconds: number;
  now: number;
}

/**
 * Takes at most |updateNum| candidates, stopping before the unavailable pods of the target
 * revision plus those about to update reach updateMaxUnavailable, or before updating an
 * available pod would push all unavailable pods to that limit.
 */
export function limitUpdates(input: LimitInput): number[] {
  const chosen = input.candidates.slice(0, Math.abs(input.updateNum));
  const available = (p: Pod): boolean => isPodAvailable(p, input.minReadySeconds, input.now);
  let unavailable = 0;
  let targetUnavailable = 0;
  for (const pod of input.pods) {
    if (available(pod)) continue;
    unavailable++;
    if (hasRevision(pod, input.targetRevision)) targetUnavailable++;
  }
  let taken = 0;
  for (const i of chosen) {
    if (targetUnavailable + taken >= input.updateMaxUnavailable) break;
    if (available(input.pods[i]!)) {
      if (unavailable >= input.updateMaxUnavailable) break;
      unavailable++;
    }
    taken++;
  }
  return chosen.slice(0, taken);
}
