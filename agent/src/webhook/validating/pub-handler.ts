/**
 * The pod webhook of PodUnavailableBudgets (OpenKruise's `/validate-pod`: vpod for pod DELETE
 * and UPDATE, vpodeviction for `pods/eviction` CREATE): turns the request into a guarded
 * operation (controllers/podunavailablebudget/decision.ts) and asks the guard, which runs where the apiserver client is (the
 * main thread; the admission thread asks it over its port). Requests that cannot concern a
 * budget — an unbound or unprotected pod, a change that takes nothing away, a gate off — are
 * answered here without asking.
 */
import type { Pod } from '../../kube/types.js';
import { allow } from '../admission/review.js';
import type { AdmissionDecision, AdmissionHandler, AdmissionRequest } from '../admission/types.js';
import { mayConcernBudget, updateOperation, type PubGates } from '../../controllers/podunavailablebudget/decision.js';
import type { PubGuard, PubQuery } from '../../controllers/podunavailablebudget/guard.js';

function deleteQuery(request: AdmissionRequest, namespace: string, dryRun: boolean): PubQuery | undefined {
  const pod = request.oldObject as Pod | undefined;
  if (!pod?.metadata || !mayConcernBudget(pod)) return undefined;
  return { operation: 'DELETE', namespace, podName: pod.metadata.name, pod, dryRun };
}

function updateQuery(request: AdmissionRequest, namespace: string, dryRun: boolean): PubQuery | undefined {
  const oldPod = request.oldObject as Pod | undefined;
  const newPod = request.object as Pod | undefined;
  if (!oldPod?.metadata || !newPod?.metadata || !mayConcernBudget(newPod)) return undefined;
  const operation = updateOperation(oldPod, newPod);
  if (!operation) return undefined;
  // Availability is the pod's as it is now; the binding is the updated pod's.
  const pod = { ...oldPod, metadata: { ...oldPod.metadata, annotations: newPod.metadata.annotations } };
  return { operation, namespace, podName: newPod.metadata.name, pod, dryRun };
}

/** The guarded operation a pod request is, or undefined when no budget is concerned. */
export function pubQueryOf(request: AdmissionRequest, gates: PubGates): PubQuery | undefined {
  const namespace = request.namespace ?? '';
  const dryRun = request.dryRun === true;
  const sub = request.subResource ?? '';
  if (request.operation === 'DELETE' && !sub && gates.deleteGate) return deleteQuery(request, namespace, dryRun);
  if (request.operation === 'CREATE' && sub === 'eviction' && gates.deleteGate) {
    return { operation: 'EVICT', namespace, podName: request.name ?? '', dryRun };
  }
  if (request.operation === 'UPDATE' && !sub && gates.updateGate) return updateQuery(request, namespace, dryRun);
  return undefined;
}

export function pubAdmissionHandler(gates: PubGates, guard: PubGuard): AdmissionHandler {
  return async (request): Promise<AdmissionDecision> => {
    const query = pubQueryOf(request, gates);
    if (!query) return allow();
    const verdict = await guard.admit(query);
    if (verdict.allowed) return allow();
    return {
      allowed: false,
      code: verdict.code,
      reason: verdict.code === 403 ? 'Forbidden' : 'Conflict',
      message: verdict.message,
    };
  };
}
