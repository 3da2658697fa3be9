/**
 * The DELETE admissions of deletion protection (deletion-protection.ts decides): the deleted
 * object is the request's oldObject; what must be counted (pods and PVCs of a namespace, custom
 * resources of a CRD) is counted by the inventory, which reads the apiserver from the main thread
 * (deletion-inventory.ts; the admission thread asks it over its port). A deletion is rarely
 * admitted, so it is read live rather than cached.
 */
import type { AdmissionDecision, AdmissionHandler } from '../admission/types.js';
import {
  deletionProtectionStep,
  type InventoryQuery,
  type ProtectedKind,
  type ProtectedObject,
  type ProtectionGates,
} from './deletion-protection.js';

/** Counts what a deletion would take with it. */
export interface DeletionInventory {
  count(query: InventoryQuery): Promise<number>;
}

export function deletionProtectionHandler(
  kind: ProtectedKind,
  gates: ProtectionGates,
  inventory: DeletionInventory,
): AdmissionHandler {
  return async (request): Promise<AdmissionDecision> => {
    if (request.operation !== 'DELETE') return { allowed: true };
    const step = deletionProtectionStep(kind, request.oldObject as ProtectedObject | undefined, gates);
    const verdict = 'count' in step ? step.decide(await Promise.all(step.count.map((q) => inventory.count(q)))) : step;
    return verdict.allowed
      ? { allowed: true }
      : { allowed: false, code: 403, reason: 'Forbidden', message: verdict.message };
  };
}
