/**
 * The scale step, decided purely (OpenKruise sync/cloneset_scale.go Scale). The steps run in
 * order and the first one with something to do is the plan; the actor (scale.ts) carries it out:
 *
 * 1. move PreparingDelete pods back to PreparingNormal when replicas grew again;
 * 2. (calculate the diffs)
 * 3. create pods, old revision first to keep the partition, within scaleStrategy.maxUnavailable;
 * 4. delete pods already in PreparingDelete whose preDelete hook is gone;
 * 5. delete specified pods (podsToDelete, specified-delete label);
 * 6. scale in, old revision first, in pod-sorter order — skipped while any pod of steps 4–5 exists.
 *
 * A pod hooked by lifecycle.preDelete is moved to PreparingDelete instead of being deleted. Ready
 * pods are deleted only within deleteReadyLimit; unready ones always.
 */
import { LifecycleState } from '@flotilla/api';
import { isPodHooked, marksPodNotReady } from './lifecycle.js';
import { availableInstanceIds } from './instance-ids.js';
import { calculateDiffs, isPodUpdated, type Diffs, type PlanOptions } from './plan.js';
import { sameNodeRanker, sortForDeletion, spreadConstraintsRanker, type Ranker } from './pod-sorter.js';
import { instanceId, isPodAvailable, isSpecifiedDelete, lifecycleState } from './pods.js';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.js';
import type { CloneSet } from './types.js';

/** One pod to create: its instance id and which revision's template it gets. */
export interface PodToCreate {
  id: string;
  revision: 'current' | 'update';
}

/** One pod to remove: delete it, or (preDelete hook) move it to PreparingDelete. */
export interface PodToRemove {
  pod: Pod;
  how: 'delete' | 'preparingDelete';
}

export type ScaleAction =
  | { kind: 'none' }
  | { kind: 'cancelDelete'; pods: Pod[] }
  | { kind: 'create'; pods: PodToCreate[] }
  | { kind: 'remove'; step: 'preparingDelete' | 'specified' | 'scaleIn'; pods: PodToRemove[] };

export interface ScalePlan {
  action: ScaleAction;
  diffs: Diffs;
  /** Set when scaleStrategy.maxUnavailable limited the scale-up: the limit, for the ScaleUpLimited event. */
  scaleUpLimited?: number;
}

export interface ScaleInput {
  /** The defaulted CloneSet. */
  cs: CloneSet;
  /** Active pods owned by the CloneSet. */
  pods: readonly Pod[];
  /** Owned pods that are terminating or finished: their ids are still taken. */
  inactivePods?: readonly Pod[];
  pvcs: readonly PersistentVolumeClaim[];
  currentRevision: string;
  updateRevision: string;
  now: number;
  options?: PlanOptions;
  /** Labels of a node, for topologySpreadConstraints ranking; without it pods are ranked per node. */
  nodeLabels?: (nodeName: string) => Readonly<Record<string, string>> | undefined;
  random?: () => number;
}

/** Specified pods, PreparingDelete pods, and how many distinct pods that is. */
export function plannedDeletions(
  cs: CloneSet,
  pods: readonly Pod[],
): { specified: Pod[]; preDeleting: Pod[]; count: number } {
  const specified = pods.filter((p) => isSpecifiedDelete(p, cs.spec.scaleStrategy?.podsToDelete));
  const preDeleting = pods.filter((p) => lifecycleState(p) === LifecycleState.PreparingDelete);
  return { specified, preDeleting, count: new Set([...specified, ...preDeleting]).size };
}

/** Step 1: PreparingDelete pods to take back because replicas grew (never with markPodNotReady). */
function podsToCancelDelete(cs: CloneSet, pods: readonly Pod[], preDeleting: Pod[], toDeleteCount: number): Pod[] {
  if (marksPodNotReady(cs.spec.lifecycle)) return [];
  let room = (cs.spec.replicas ?? 1) - pods.length + toDeleteCount;
  const cancel: Pod[] = [];
  for (const pod of preDeleting) {
    if (room <= 0) break;
    if (isSpecifiedDelete(pod, cs.spec.scaleStrategy?.podsToDelete)) continue;
    cancel.push(pod);
    room--;
  }
  return cancel;
}

/** How each pod is removed; pods already in PreparingDelete and still hooked need nothing. */
function removals(cs: CloneSet, pods: readonly Pod[]): PodToRemove[] {
  const out: PodToRemove[] = [];
  for (const pod of pods) {
    if (!isPodHooked(cs.spec.lifecycle?.preDelete, pod)) out.push({ pod, how: 'delete' });
    else if (lifecycleState(pod) !== LifecycleState.PreparingDelete) out.push({ pod, how: 'preparingDelete' });
  }
  return out;
}

/** Ready pods only within the limit (which is consumed); unready pods always. */
function withinReadyLimit(pods: readonly Pod[], limit: { left: number }, isReady: (p: Pod) => boolean): Pod[] {
  return pods.filter((pod) => {
    if (!isReady(pod)) return true;
    if (limit.left <= 0) return false;
    limit.left--;
    return true;
  });
}

function ranker(input: ScaleInput, pods: readonly Pod[]): Ranker {
  const keys = (input.cs.spec.template.spec?.topologySpreadConstraints as { topologyKey: string }[] | undefined)?.map(
    (c) => c.topologyKey,
  );
  if (keys?.length && input.nodeLabels) return spreadConstraintsRanker(pods, keys, input.nodeLabels);
  return sameNodeRanker(pods);
}

/** Step 6: which pods scale-in takes, old revision first (choosePodsToDelete). */
export function choosePodsToDelete(input: ScaleInput, total: number, oldRevisionCount: number): Pod[] {
  const asUpdated = input.options?.preparingUpdateAsUpdate === true;
  const updated = input.pods.filter((p) => isPodUpdated(p, input.updateRevision, asUpdated));
  const notUpdated = input.pods.filter((p) => !isPodUpdated(p, input.updateRevision, asUpdated));
  const minReady = input.cs.spec.minReadySeconds ?? 0;
  const choose = (pods: Pod[], n: number): Pod[] => {
    if (n >= pods.length) return pods;
    const isAvailable = (p: Pod): boolean => isPodAvailable(p, minReady, input.now);
    return sortForDeletion(pods, { ranker: ranker(input, pods), isAvailable }).slice(0, n);
  };
  if (oldRevisionCount >= total) return choose(notUpdated, total);
  if (oldRevisionCount > 0) {
    return [...choose(notUpdated, oldRevisionCount), ...choose(updated, total - oldRevisionCount)];
  }
  return choose(updated, total);
}

/**
 * Step 3: ids and revisions of the pods to create; current-revision pods first. A PVC id whose
 * pod is still terminating is reused only once that pod is gone (its name is taken until then):
 * that creation waits for the deletion event instead of failing with AlreadyExists.
 */
function creations(input: ScaleInput, diffs: Diffs): PodToCreate[] {
  const count = diffs.scaleUpLimit;
  const terminating = new Set((input.inactivePods ?? []).map(instanceId).filter(Boolean));
  const ids = availableInstanceIds(count, input.pods, input.pvcs, input.random, terminating);
  const current = Math.min(count, diffs.scaleUpNumOldRevision);
  return ids
    .map((id, i): PodToCreate => ({ id, revision: i < current ? 'current' : 'update' }))
    .filter((c) => !terminating.has(c.id));
}

/** Decides the scale step. Pure: `now` and `random` come in. */
export function planScale(input: ScaleInput): ScalePlan {
  const { cs, pods } = input;
  const planned = plannedDeletions(cs, pods);
  const diffs = calculateDiffs({ ...input, forScale: true });
  const plan = (action: ScaleAction): ScalePlan => ({
    action,
    diffs,
    ...(diffs.scaleUpNum > diffs.scaleUpLimit ? { scaleUpLimited: diffs.scaleUpLimit } : {}),
  });

  const cancel = podsToCancelDelete(cs, pods, planned.preDeleting, planned.count);
  if (cancel.length > 0) return { action: { kind: 'cancelDelete', pods: cancel }, diffs };

  // Creation ends the scale step even when the limit allows no pod at all.
  if (diffs.scaleUpNum > 0) return plan({ kind: 'create', pods: creations(input, diffs) });

  const unhooked = removals(cs, planned.preDeleting);
  if (unhooked.length > 0) return plan({ kind: 'remove', step: 'preparingDelete', pods: unhooked });

  const isReady = (p: Pod): boolean => isPodAvailable(p, 0, input.now);
  const limit = { left: diffs.deleteReadyLimit };
  const specified = planned.specified.filter((p) => !planned.preDeleting.includes(p));
  const specifiedRemovals = removals(cs, withinReadyLimit(specified, limit, isReady));
  if (specifiedRemovals.length > 0) return plan({ kind: 'remove', step: 'specified', pods: specifiedRemovals });

  if (diffs.scaleDownNum > 0 && planned.count === 0) {
    const chosen = choosePodsToDelete(input, diffs.scaleDownNum, diffs.scaleDownNumOldRevision);
    const scaleIn = removals(cs, withinReadyLimit(chosen, limit, isReady));
    if (scaleIn.length > 0) return plan({ kind: 'remove', step: 'scaleIn', pods: scaleIn });
  }
  return plan({ kind: 'none' });
}
