/**
 * Lifecycle hooks and the `lifecycle.apps.kruise.io/state` transitions the CloneSet drives on its
 * own during refresh (OpenKruise pkg/util/lifecycle and sync/cloneset_update.go refreshPodState):
 *
 *   create → PreparingNormal → Normal            once the preNormal hook is fully present (or none)
 *   Normal → PreparingUpdate                     when an in-place update starts and the pod is hooked
 *   PreparingUpdate → (in-place patch) Updating  once the user removed the inPlaceUpdate hook
 *   Updating → Updated | Normal                  when the update completed; Updated while the hook
 *                                                is not fully back on the pod
 *   Updated → Normal                             once the inPlaceUpdate hook is fully present again
 *   PreparingDelete                              instead of deleting a pod hooked by preDelete
 *
 * A hook is "on" a pod when any of its labels (key=value) or finalizers is; "fully on" when all are.
 */
import { LifecycleState, type Lifecycle, type LifecycleHook } from '@flotilla/api';
import { hasRevision, lifecycleState } from './pods.js';
import type { Pod } from '../../kube/types.js';

/** Any label or finalizer of the hook is on the pod (lifecycle.IsPodHooked). */
export function isPodHooked(hook: LifecycleHook | undefined, pod: Pod): boolean {
  if (!hook) return false;
  const finalizers = pod.metadata.finalizers ?? [];
  if ((hook.finalizersHandler ?? []).some((f) => finalizers.includes(f))) return true;
  return Object.entries(hook.labelsHandler ?? {}).some(([k, v]) => pod.metadata.labels?.[k] === v);
}

/** Every label and finalizer of the hook is on the pod; false without a hook (lifecycle.IsPodAllHooked). */
export function isPodAllHooked(hook: LifecycleHook | undefined, pod: Pod): boolean {
  if (!hook) return false;
  const finalizers = pod.metadata.finalizers ?? [];
  if (!(hook.finalizersHandler ?? []).every((f) => finalizers.includes(f))) return false;
  return Object.entries(hook.labelsHandler ?? {}).every(([k, v]) => pod.metadata.labels?.[k] === v);
}

/** Any hook asks to mark pods not ready; then a PreparingDelete pod is never moved back. */
export function marksPodNotReady(lifecycle: Lifecycle | undefined): boolean {
  return Boolean(lifecycle?.preDelete?.markPodNotReady || lifecycle?.inPlaceUpdate?.markPodNotReady);
}

/** The state after an in-place update finished: Updated while the inPlaceUpdate hook is not fully back. */
function afterUpdate(lifecycle: Lifecycle | undefined): (pod: Pod) => string {
  return (pod) =>
    lifecycle !== undefined && !isPodAllHooked(lifecycle.inPlaceUpdate, pod)
      ? LifecycleState.Updated
      : LifecycleState.Normal;
}

export interface RefreshStateInput {
  lifecycle: Lifecycle | undefined;
  pod: Pod;
  updateRevision: string;
  /** The in-place update of the pod (if any) has completed. */
  updateCompleted: boolean;
}

/**
 * The lifecycle state refresh moves the pod to, or undefined to leave it. Mirrors
 * refreshPodState, including its quirk that a CloneSet with a lifecycle but no inPlaceUpdate hook
 * passes through Updated.
 */
export function nextRefreshState(input: RefreshStateInput): string | undefined {
  const { lifecycle, pod } = input;
  switch (lifecycleState(pod)) {
    case LifecycleState.PreparingNormal:
      return !lifecycle?.preNormal || isPodAllHooked(lifecycle.preNormal, pod) ? LifecycleState.Normal : undefined;
    case LifecycleState.PreparingUpdate:
      // Rolled back while waiting for the hook: already at the update revision, nothing to patch.
      return hasRevision(pod, input.updateRevision) ? afterUpdate(lifecycle)(pod) : undefined;
    case LifecycleState.Updating:
      return input.updateCompleted ? afterUpdate(lifecycle)(pod) : undefined;
    case LifecycleState.Updated:
      return !lifecycle?.inPlaceUpdate || isPodAllHooked(lifecycle.inPlaceUpdate, pod)
        ? LifecycleState.Normal
        : undefined;
    default:
      return undefined;
  }
}
