import { MalformedField, countAt, isRecord, recordAt, recordListAt, stringAt } from './fields.js';
import { generationVerdict } from './generation.js';
import { type HealthVerdict, verdict } from './verdict.js';

/** What podUnavailableBudgetHealth reads of a PodUnavailableBudget; the full type fits. */
export interface PodUnavailableBudgetHealthInput {
  metadata?: { generation?: number } | null;
  status?: {
    observedGeneration?: number;
    unavailableAllowed?: number;
    currentAvailable?: number;
    desiredAvailable?: number;
    totalReplicas?: number;
    conditions?: readonly { type?: string; status?: string; reason?: string; message?: string }[] | null;
  } | null;
}

/**
 * Health of a cluster's PodUnavailableBudget, from the status its controller writes. A budget is
 * a guard, not a workload: it is Healthy while it covers pods and at least desiredAvailable of them
 * are available (whether any more may go is the budget working, not a fault). A problem the
 * controller reports (no pods covered, a missing targetRef, pods covered twice) is Degraded with
 * its message; fewer pods available than the budget keeps is Progressing (the workload is
 * recovering, and disruptions wait). Stale until the status reflects the spec. Never throws:
 * malformed input gives Unknown.
 */
export function podUnavailableBudgetHealth(pub: PodUnavailableBudgetHealthInput): HealthVerdict {
  try {
    return evaluate(pub);
  } catch (error) {
    if (error instanceof MalformedField) return verdict('Unknown', 'MalformedInput', error.message);
    throw error;
  }
}

function evaluate(input: unknown): HealthVerdict {
  if (!isRecord(input)) return verdict('Unknown', 'MalformedInput', 'the PodUnavailableBudget is not an object');
  const status = recordAt(input, 'status', 'status');
  const stale = generationVerdict(input, status);
  if (stale) return stale;
  for (const [i, raw] of recordListAt(status, 'conditions', 'status.conditions').entries()) {
    if (stringAt(raw, 'status', `status.conditions[${i}].status`) !== 'True') continue;
    const reason =
      stringAt(raw, 'reason', `status.conditions[${i}].reason`) ??
      stringAt(raw, 'type', `status.conditions[${i}].type`) ??
      'Problem';
    return verdict('Degraded', reason, stringAt(raw, 'message', `status.conditions[${i}].message`) ?? reason);
  }
  const total = countAt(status, 'totalReplicas', 'status.totalReplicas', 0);
  const current = countAt(status, 'currentAvailable', 'status.currentAvailable', 0);
  const desired = countAt(status, 'desiredAvailable', 'status.desiredAvailable', 0);
  const allowed = countAt(status, 'unavailableAllowed', 'status.unavailableAllowed', 0);
  if (current < desired) {
    return verdict(
      'Progressing',
      'BelowDesiredAvailable',
      `${current} of ${total} pods available, the budget keeps ${desired}: disruptions wait`,
    );
  }
  return verdict(
    'Healthy',
    'BudgetHeld',
    `${current} of ${total} pods available, the budget keeps ${desired}; ${allowed} more may be disrupted`,
  );
}
