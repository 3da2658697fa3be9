/**
 * The pod writes both the scale and update steps make: lifecycle state patches (with the
 * markPodNotReady readiness keys), condition patches, and full updates retried on conflict.
 * Every write is recorded in the resourceVersion expectations, so the next reconcile waits until
 * the cache shows it instead of acting on the pod as it was.
 */
import {
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  LABEL_LIFECYCLE_STATE,
  LifecycleState,
  type LifecycleHook,
} from '@flotilla/api';
import { AgentError, isKubeStatus } from '../../errors.js';
import { formatTime } from '../../runtime/kube-time.js';
import { addNotReadyKey, PRE_DELETE_KEY, PRE_UPDATE_KEY, removeNotReadyKey } from './readiness.js';
import { clonePod, type SyncContext } from './sync-context.js';
import type { Pod, PodCondition } from '../../kube/types.js';

const CONFLICT_RETRIES = 5;

/** Merges conditions into the pod status; nothing when the list is empty. */
export async function patchConditions(ctx: SyncContext, pod: Pod, conditions: PodCondition[]): Promise<void> {
  if (conditions.length === 0) return;
  try {
    const written = await ctx.client.patchPodConditions(pod, conditions);
    ctx.resourceVersions.expectUpdated(ctx.key, written);
  } catch (err) {
    if (isKubeStatus(err, 404)) return;
    throw new AgentError('CLONESET_ERR_POD_UPDATE', `failed to update conditions of pod ${pod.metadata.name}`, {
      cause: err,
    });
  }
}

/** The readiness key a lifecycle state adds or removes when the hook marks pods not ready. */
export function notReadyConditions(pod: Pod, state: string, now: number): PodCondition[] {
  switch (state) {
    case LifecycleState.PreparingDelete:
      return addNotReadyKey(pod, PRE_DELETE_KEY, now);
    case LifecycleState.PreparingUpdate:
      return addNotReadyKey(pod, PRE_UPDATE_KEY, now);
    case LifecycleState.Updated:
      return removeNotReadyKey(pod, PRE_UPDATE_KEY, now);
    default:
      return [];
  }
}

/**
 * Moves a pod to a lifecycle state (label plus timestamp annotation), first marking it not ready
 * when `markPodNotReady`. With `hook`, the hook's labels and finalizers are put back as well (a
 * pod leaving Updated for another in-place update). Nothing when the pod is already there.
 */
export async function setLifecycleState(
  ctx: SyncContext,
  pod: Pod,
  state: string,
  opts: { markPodNotReady?: boolean; hook?: LifecycleHook } = {},
): Promise<boolean> {
  if (opts.markPodNotReady) await patchConditions(ctx, pod, notReadyConditions(pod, state, ctx.now));
  if ((pod.metadata.labels?.[LABEL_LIFECYCLE_STATE] ?? '') === state) return false;
  const metadata: Record<string, unknown> = {
    labels: { ...(opts.hook?.labelsHandler ?? {}), [LABEL_LIFECYCLE_STATE]: state },
    annotations: { [ANNOTATION_LIFECYCLE_TIMESTAMP]: formatTime(ctx.now) },
  };
  const finalizers = opts.hook?.finalizersHandler ?? [];
  if (finalizers.length > 0) metadata.finalizers = [...new Set([...(pod.metadata.finalizers ?? []), ...finalizers])];
  try {
    ctx.resourceVersions.expectUpdated(ctx.key, await ctx.client.patchPodMetadata(pod, metadata));
  } catch (err) {
    throw new AgentError('CLONESET_ERR_POD_UPDATE', `failed to set pod ${pod.metadata.name} to ${state}`, {
      cause: err,
    });
  }
  return true;
}

/**
 * Replaces the pod with `change(copy)`. On a conflict the pod is read again and the change
 * re-applied to the fresh copy (OpenKruise's RetryOnConflict). `change` returning false means
 * nothing to write.
 */
export async function updatePod(ctx: SyncContext, pod: Pod, change: (copy: Pod) => boolean | void): Promise<Pod> {
  let current = pod;
  for (let attempt = 0; ; attempt++) {
    const copy = clonePod(current);
    if (change(copy) === false) return current;
    try {
      const written = await ctx.client.updatePod(copy);
      ctx.resourceVersions.expectUpdated(ctx.key, written);
      return written;
    } catch (err) {
      if (!isKubeStatus(err, 409) || attempt >= CONFLICT_RETRIES) {
        throw new AgentError('CLONESET_ERR_POD_UPDATE', `failed to update pod ${pod.metadata.name}`, { cause: err });
      }
      current = await ctx.client.getPod(pod.metadata.namespace ?? '', pod.metadata.name);
    }
  }
}
