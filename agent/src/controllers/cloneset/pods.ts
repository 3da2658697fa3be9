/**
 * Pure predicates over a CloneSet's pods, with the semantics of OpenKruise's clonesetutils:
 * availability (minReadySeconds), lifecycle state, revision labels, deletion marks. `now` is
 * always passed in, so callers decide what time it is. The k8s podutil ones are kube/pods.ts.
 */
import {
  ANNOTATION_POD_DELETION_COST,
  CONDITION_INPLACE_UPDATE_READY,
  LABEL_CLONESET_INSTANCE_ID,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
  LABEL_SPECIFIED_DELETE,
  LifecycleState,
} from '@flotilla/api';
import { isPodReady, podCondition, podReadySince } from '../../kube/pods.js';
import type { KubeObject } from '../../runtime/kube-object.js';
import type { Pod } from '../../kube/types.js';

/**
 * Running and Ready for at least minReadySeconds (clonesetutils.IsRunningAndAvailable). With
 * minReadySeconds > 0 a Ready condition without a transition time is never available.
 */
export function isRunningAndAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (pod.status?.phase !== 'Running' || !isPodReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const since = podReadySince(pod);
  return since !== undefined && since + minReadySeconds * 1000 <= now;
}

/**
 * Ready as the CloneSet counts it (IsPodUpdateReady): running and available, and the
 * InPlaceUpdateReady condition absent or True.
 */
export function isPodUpdateReady(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (!isRunningAndAvailable(pod, minReadySeconds, now)) return false;
  const inPlace = podCondition(pod, CONDITION_INPLACE_UPDATE_READY);
  return inPlace === undefined || inPlace.status === 'True';
}

/** The pod's lifecycle state label; '' when unset. */
export function lifecycleState(pod: Pod): string {
  return pod.metadata.labels?.[LABEL_LIFECYCLE_STATE] ?? '';
}

/** Available for the CloneSet (sync.IsPodAvailable): update-ready and in state '' or Normal. */
export function isPodAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  const state = lifecycleState(pod);
  if (state !== '' && state !== LifecycleState.Normal) return false;
  return isPodUpdateReady(pod, minReadySeconds, now);
}

/** The hash part of a revision name: the text after the last '-'. */
export function shortHash(revision: string): string {
  return revision.slice(revision.lastIndexOf('-') + 1);
}

/** The pod carries `revision` in its controller-revision-hash label, in full or short form. */
export function hasRevision(obj: KubeObject, revision: string): boolean {
  const label = obj.metadata?.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '';
  return label === revision || shortHash(label) === shortHash(revision);
}

export function instanceId(obj: KubeObject): string {
  return obj.metadata?.labels?.[LABEL_CLONESET_INSTANCE_ID] ?? '';
}

/** Labelled apps.kruise.io/specified-delete (any value), or listed in scaleStrategy.podsToDelete. */
export function isSpecifiedDelete(pod: Pod, podsToDelete: readonly string[] | undefined): boolean {
  if (pod.metadata.labels?.[LABEL_SPECIFIED_DELETE] !== undefined) return true;
  return podsToDelete?.includes(pod.metadata.name) ?? false;
}

/**
 * The pod-deletion-cost annotation; 0 when absent or invalid: a leading '+' or zero ("+1", "01"),
 * anything but an integer, or out of int32 range. After a '-' Go's ParseInt takes any digits.
 */
export function deletionCost(pod: Pod): number {
  const value = pod.metadata.annotations?.[ANNOTATION_POD_DELETION_COST];
  if (value === undefined || !/^(0|[1-9][0-9]*|-[0-9]+)$/.test(value)) return 0;
  const n = Number(value);
  return n >= -(2 ** 31) && n < 2 ** 31 ? n : 0;
}
