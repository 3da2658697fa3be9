/**
 * The KruisePodReady readiness gate, which OpenKruise's pod webhook adds to every pod whose
 * controller owner is an apps.kruise.io workload: lifecycle hooks flip that condition to hold a
 * pod out of Service endpoints without touching its containers.
 */
import { CONDITION_KRUISE_POD_READY, KRUISE_GROUP } from '@flotilla/api';
import type { MutablePod } from '../../kube/types.js';

/** True when the pod's controller ownerRef belongs to apps.kruise.io (any version). */
export function isOwnedByKruise(pod: MutablePod): boolean {
  const ref = pod.metadata?.ownerReferences?.find((r) => r.controller === true);
  return ref !== undefined && ref.apiVersion.split('/')[0] === KRUISE_GROUP;
}

/** Adds the gate in place when the pod is Kruise-owned and lacks it; true if something changed. */
export function injectKruiseReadinessGate(pod: MutablePod): boolean {
  if (!isOwnedByKruise(pod)) return false;
  const spec = (pod.spec ??= {});
  const gates = (spec.readinessGates ??= []);
  if (gates.some((g) => g.conditionType === CONDITION_KRUISE_POD_READY)) return false;
  gates.push({ conditionType: CONDITION_KRUISE_POD_READY });
  return true;
}
