/**
 * The KruisePodReady gate that the pod webhook adds to every pod owned by an apps.kruise.io
 * workload must be answered by someone, or such pods never turn Ready. As OpenKruise's pod
 * readiness controller does, the condition is created True when it is missing; from then on its
 * owners (lifecycle hooks with markPodNotReady) flip it through their not-ready keys.
 */
import { CONDITION_KRUISE_POD_READY } from '@flotilla/api';

export interface GatedPod {
  metadata: { deletionTimestamp?: string };
  spec?: { readinessGates?: { conditionType: string }[] };
  status?: { conditions?: { type: string }[] };
}

export interface NewCondition {
  type: string;
  status: 'True';
  lastTransitionTime: string;
}

/** The condition to add, or undefined when the pod has no gate, already has it, or is going away. */
export function missingKruisePodReady(pod: GatedPod, now: Date): NewCondition | undefined {
  if (pod.metadata.deletionTimestamp) return undefined;
  const gated = (pod.spec?.readinessGates ?? []).some((g) => g.conditionType === CONDITION_KRUISE_POD_READY);
  if (!gated) return undefined;
  if ((pod.status?.conditions ?? []).some((c) => c.type === CONDITION_KRUISE_POD_READY)) return undefined;
  return {
    type: CONDITION_KRUISE_POD_READY,
    status: 'True',
    lastTransitionTime: now.toISOString().replace(/\.\d+Z$/, 'Z'),
  };
}

/**
 * Whether the pod lacks the condition (missingKruisePodReady would add one). The controller
 * queues only such pods: every pod event of the cluster reaches its informer, and a reconcile of
 * any other pod would find nothing to do.
 */
export function needsKruisePodReady(pod: GatedPod): boolean {
  return missingKruisePodReady(pod, new Date(0)) !== undefined;
}
