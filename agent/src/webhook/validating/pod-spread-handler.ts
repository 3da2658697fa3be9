/**
 * WorkloadSpread's part of OpenKruise's `/validate-pod` (vpod for pod DELETE, vpodeviction for
 * `pods/eviction` CREATE), after the PodUnavailableBudget check as in v1.9: a pod leaving its
 * subset is recorded in the WorkloadSpread's deletingPods by the guard, which runs where the
 * apiserver client is (the admission thread asks over its port). Requests that cannot concern a
 * WorkloadSpread — a deleted pod without the matched-workloadspread annotation or already
 * terminating, a subresource other than eviction — are answered here. The answer is always
 * allowed; a record that cannot be written is an internal error (500), as v1.9 answers, so the
 * client retries rather than the count going wrong.
 */
import type { SpreadGuard, SpreadQuery } from '../../controllers/workloadspread/admission.js';
import { isPodActive, matchedSubsetOf, type SpreadPod } from '../../controllers/workloadspread/subsets.js';
import { allow } from '../admission/review.js';
import type { AdmissionDecision, AdmissionHandler, AdmissionRequest } from '../admission/types.js';

/** The deletion a pod request is, or undefined when no WorkloadSpread can be concerned. */
export function spreadDeletionOf(request: AdmissionRequest): SpreadQuery | undefined {
  const namespace = request.namespace ?? '';
  const dryRun = request.dryRun === true;
  const sub = request.subResource ?? '';
  if (request.operation === 'DELETE' && !sub) {
    const pod = request.oldObject as SpreadPod | undefined;
    if (!pod?.metadata || !isPodActive(pod) || !matchedSubsetOf(pod)) return undefined;
    return { namespace, pod, dryRun, operation: 'DELETE' };
  }
  if (request.operation === 'CREATE' && sub === 'eviction') {
    return { namespace, pod: { metadata: { name: request.name ?? '' } }, dryRun, operation: 'EVICT' };
  }
  return undefined;
}

/** Records pod deletions and evictions in their WorkloadSpread subsets. */
export function podSpreadHandler(guard: SpreadGuard): AdmissionHandler {
  return async (request): Promise<AdmissionDecision> => {
    const query = spreadDeletionOf(request);
    if (query) await guard.assign(query);
    return allow();
  };
}

/** The handlers in order: the first refusal is the answer, else the last answer. */
export function inOrder(handlers: readonly AdmissionHandler[]): AdmissionHandler {
  return async (request): Promise<AdmissionDecision> => {
    let decision: AdmissionDecision = allow();
    for (const handler of handlers) {
      decision = await handler(request);
      if (!decision.allowed) return decision;
    }
    return decision;
  };
}
