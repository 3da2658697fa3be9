/**
 * Pod readiness conditions the CloneSet controller owns, computed purely: the InPlaceUpdateReady
 * gate it appends to every pod, and the lifecycle not-ready keys in KruisePodReady
 * (markPodNotReady). Each function returns the conditions to write (merged by type into the pod
 * status), or an empty list when nothing changes. Setting a gate False also sets Ready False at
 * once, as OpenKruise does, instead of waiting for the kubelet.
 */
import { CONDITION_INPLACE_UPDATE_READY, CONDITION_KRUISE_POD_READY } from '@flotilla/api';
import { formatTime } from '../../runtime/kube-time.js';
import { podCondition } from '../../kube/pods.js';
import type { Pod, PodCondition } from '../../kube/types.js';

/** A lifecycle hook's entry in the KruisePodReady message (podreadiness.Message). */
export interface NotReadyKey {
  userAgent: string;
  key: string;
}

export const PRE_DELETE_KEY: NotReadyKey = { userAgent: 'Lifecycle', key: 'preDeleteHook' };
export const PRE_UPDATE_KEY: NotReadyKey = { userAgent: 'Lifecycle', key: 'preUpdateHook' };

export function hasReadinessGate(pod: Pod, type: string): boolean {
  return (pod.spec.readinessGates ?? []).some((g) => g.conditionType === type);
}

/** The Ready condition after `changed` is applied, when a gate is not True (util.SetPodReadyCondition). */
function readyAfter(pod: Pod, changed: PodCondition, now: number): PodCondition | undefined {
  const ready = podCondition(pod, 'Ready');
  if (!ready || podCondition(pod, 'ContainersReady')?.status !== 'True') return undefined;
  const conditionOf = (type: string): PodCondition | undefined =>
    type === changed.type ? changed : podCondition(pod, type);
  const unready = (pod.spec.readinessGates ?? []).flatMap(({ conditionType: t }) => {
    const c = conditionOf(t);
    if (!c) return [`corresponding condition of pod readiness gate "${t}" does not exist.`];
    return c.status === 'True' ? [] : [`the status of pod readiness gate "${t}" is not "True", but ${c.status}`];
  });
  // Only a move to False is written: the kubelet (kwok) is the one to flip Ready back to True.
  if (unready.length === 0 || ready.status === 'False') return undefined;
  return {
    type: 'Ready',
    status: 'False',
    reason: 'ReadinessGatesNotReady',
    message: unready.join(', '),
    lastTransitionTime: formatTime(now),
  };
}

/**
 * Sets InPlaceUpdateReady on a pod that has the gate. Nothing when the pod has no gate or the
 * condition already has this status, reason and message.
 */
export function inPlaceReadyConditions(pod: Pod, ready: boolean, now: number): PodCondition[] {
  if (!hasReadinessGate(pod, CONDITION_INPLACE_UPDATE_READY)) return [];
  const current = podCondition(pod, CONDITION_INPLACE_UPDATE_READY);
  const next: PodCondition = {
    type: CONDITION_INPLACE_UPDATE_READY,
    status: ready ? 'True' : 'False',
    ...(ready ? {} : { reason: 'StartInPlaceUpdate' }),
    lastTransitionTime: formatTime(now),
  };
  const same = current?.status === next.status && (current.reason ?? '') === (next.reason ?? '') && !current.message;
  if (same) return [];
  const readyCondition = ready ? undefined : readyAfter(pod, next, now);
  return readyCondition ? [next, readyCondition] : [next];
}

function parseKeys(message: string | undefined): NotReadyKey[] {
  if (!message) return [];
  try {
    const parsed: unknown = JSON.parse(message);
    return Array.isArray(parsed) ? (parsed as NotReadyKey[]) : [];
  } catch {
    return [];
  }
}

const sameKey = (a: NotReadyKey, b: NotReadyKey): boolean => a.userAgent === b.userAgent && a.key === b.key;

/**
 * Adds a not-ready key to KruisePodReady (status False), when the pod has that gate. The
 * condition message is the JSON list of keys, as OpenKruise writes it.
 */
export function addNotReadyKey(pod: Pod, key: NotReadyKey, now: number): PodCondition[] {
  if (!hasReadinessGate(pod, CONDITION_KRUISE_POD_READY)) return [];
  const current = podCondition(pod, CONDITION_KRUISE_POD_READY);
  const keys = current?.status === 'True' ? [] : parseKeys(current?.message);
  if (current && current.status !== 'True' && keys.some((k) => sameKey(k, key))) return [];
  const next: PodCondition = {
    type: CONDITION_KRUISE_POD_READY,
    status: 'False',
    message: JSON.stringify([...parseKeys(current?.message).filter((k) => !sameKey(k, key)), key]),
    lastTransitionTime: formatTime(now),
  };
  const ready = readyAfter(pod, next, now);
  return ready ? [next, ready] : [next];
}

/** Removes a not-ready key from KruisePodReady; True again once no key is left. */
export function removeNotReadyKey(pod: Pod, key: NotReadyKey, now: number): PodCondition[] {
  if (!hasReadinessGate(pod, CONDITION_KRUISE_POD_READY)) return [];
  const current = podCondition(pod, CONDITION_KRUISE_POD_READY);
  if (!current) return [];
  const keys = parseKeys(current.message);
  if (!keys.some((k) => sameKey(k, key))) return [];
  const left = keys.filter((k) => !sameKey(k, key));
  return [
    {
      type: CONDITION_KRUISE_POD_READY,
      status: left.length === 0 ? 'True' : current.status,
      message: left.length === 0 ? '' : JSON.stringify(left),
      lastTransitionTime: formatTime(now),
    },
  ];
}
