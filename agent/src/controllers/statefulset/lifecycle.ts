/**
 * The preDelete and inPlaceUpdate lifecycle hooks of an Advanced StatefulSet, pure, as OpenKruise
 * v1.9's deletePod and inPlaceUpdatePod (stateful_set_control.go) apply them:
 *
 * - a pod to delete that the preDelete hook holds (any of its labels or finalizers on the pod)
 *   moves to PreparingDelete and waits there until the hook is gone;
 * - a pod to update in place in state '', PreparingNormal or Normal that the inPlaceUpdate hook
 *   holds moves to PreparingUpdate first; one in PreparingUpdate waits while the hook holds it;
 *   one in Updated (its hook not yet fully back) gets the hook's labels and finalizers back and
 *   moves to PreparingUpdate, or waits when the set has no inPlaceUpdate hook; one in Updating
 *   goes on; any other state (PreparingDelete) is never updated in place;
 * - markPodNotReady on the hook adds the hook's key to the pod's KruisePodReady condition
 *   (status False) each time the pod is sent to that state, so a pod already waiting there whose
 *   key went missing gets it back.
 */
import { LifecycleState, type Lifecycle, type LifecycleHook } from '@flotilla/api';
import type { Pod } from '../../kube/types.js';
import { type UpdateSpec } from '../cloneset/inplace.js';
import { isPodHooked } from '../cloneset/lifecycle.js';
import { lifecycleState } from '../cloneset/pods.js';
import { addNotReadyKey, PRE_DELETE_KEY, PRE_UPDATE_KEY } from '../cloneset/readiness.js';

/** A pod to move to a lifecycle state before it is deleted or updated. */
export interface Preparation {
  pod: Pod;
  state: 'PreparingDelete' | 'PreparingUpdate';
  /** Add the hook's not-ready key to KruisePodReady as well. */
  markPodNotReady: boolean;
  /** Put these labels and finalizers back on the pod with the state (a pod leaving Updated). */
  hook?: LifecycleHook;
}

export interface HookedPlan {
  delete: Pod[];
  inPlace: { pod: Pod; spec: UpdateSpec }[];
  prepare: Preparation[];
}

/** The pod needs the write: another state, or (markPodNotReady) the hook's key is not on it yet. */
function needsPreparing(p: Preparation, now: number): boolean {
  if (lifecycleState(p.pod) !== p.state) return true;
  const key = p.state === LifecycleState.PreparingDelete ? PRE_DELETE_KEY : PRE_UPDATE_KEY;
  return p.markPodNotReady && addNotReadyKey(p.pod, key, now).length > 0;
}

/** What the in-place update of one pod becomes under the inPlaceUpdate hook. */
function inPlaceStep(hook: LifecycleHook | undefined, pod: Pod): 'update' | 'prepare' | 'restore' | 'wait' {
  const hooked = isPodHooked(hook, pod);
  switch (lifecycleState(pod)) {
    case '':
    case LifecycleState.PreparingNormal:
    case LifecycleState.Normal:
      return hooked ? 'prepare' : 'update';
    case LifecycleState.Updated:
      return hook ? 'restore' : 'wait';
    case LifecycleState.PreparingUpdate:
      return hooked ? 'wait' : 'update';
    case LifecycleState.Updating:
      return 'update';
    default:
      return 'wait';
  }
}

/** What the preDelete and inPlaceUpdate hooks let through now, and the pods they hold. */
export function holdByHooks(
  lifecycle: Lifecycle | undefined,
  toDelete: readonly Pod[],
  updates: readonly { pod: Pod; spec: UpdateSpec }[],
  now: number,
): HookedPlan {
  const out: HookedPlan = { delete: [], inPlace: [], prepare: [] };
  const preDelete = lifecycle?.preDelete;
  const inPlaceUpdate = lifecycle?.inPlaceUpdate;
  const prepare = (p: Preparation): void => {
    if (needsPreparing(p, now)) out.prepare.push(p);
  };
  for (const pod of toDelete) {
    if (!isPodHooked(preDelete, pod)) out.delete.push(pod);
    else prepare({ pod, state: 'PreparingDelete', markPodNotReady: preDelete?.markPodNotReady ?? false });
  }
  const markPodNotReady = inPlaceUpdate?.markPodNotReady ?? false;
  for (const u of updates) {
    const step = inPlaceStep(inPlaceUpdate, u.pod);
    if (step === 'update') out.inPlace.push(u);
    else if (step === 'prepare') prepare({ pod: u.pod, state: 'PreparingUpdate', markPodNotReady });
    else if (step === 'restore') {
      out.prepare.push({ pod: u.pod, state: 'PreparingUpdate', markPodNotReady, hook: inPlaceUpdate });
    }
  }
  return out;
}
