/**
 * Pure predicates over pods with the semantics of k8s podutil: activity, readiness and when it
 * began, restarts, age. Controller-specific notions (a CloneSet's availability, a SidecarSet's
 * readiness) build on these in their own folders.
 */
import { parseTime } from '../runtime/kube-time.js';
import type { Pod, PodCondition } from './types.js';

/** Not Succeeded, not Failed and not being deleted (kubecontroller.IsPodActive). */
export function isPodActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed' && !pod.metadata.deletionTimestamp;
}

export function podCondition(pod: Pod, type: string): PodCondition | undefined {
  return pod.status?.conditions?.find((c) => c.type === type);
}

/** The Ready condition is True (podutil.IsPodReady). */
export function isPodReady(pod: Pod): boolean {
  return podCondition(pod, 'Ready')?.status === 'True';
}

/** When the pod last became Ready, in epoch ms; undefined when not ready or unknown. */
export function podReadySince(pod: Pod): number | undefined {
  const ready = podCondition(pod, 'Ready');
  return ready?.status === 'True' ? parseTime(ready.lastTransitionTime) : undefined;
}

/** The highest restartCount among the pod's containers. */
export function maxContainerRestarts(pod: Pod): number {
  return Math.max(0, ...(pod.status?.containerStatuses ?? []).map((s) => s.restartCount ?? 0));
}

/** Epoch ms of metadata.creationTimestamp; undefined for a pod not yet created. */
export function creationTime(pod: Pod): number | undefined {
  return parseTime(pod.metadata.creationTimestamp);
}
