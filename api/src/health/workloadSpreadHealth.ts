import { MalformedField, countAt, isRecord, recordAt, recordListAt, stringAt } from './fields.js';
import { generationVerdict } from './generation.js';
import { type HealthVerdict, verdict } from './verdict.js';

/** What workloadSpreadHealth reads of a WorkloadSpread. */
export interface WorkloadSpreadHealthInput {
  metadata?: { generation?: number } | null;
  status?: {
    observedGeneration?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    subsetStatuses?: {
      name: string;
      replicas?: number;
      missingReplicas?: number;
      creatingPods?: Record<string, string>;
      deletingPods?: Record<string, string>;
      conditions?: { type: string; status: string }[];
    }[];
  } | null;
}

/**
 * Health of a cluster's WorkloadSpread. A WorkloadSpread has no revision of its own: it is healthy
 * when its status is current, its target workload exists (Flotilla's TargetFound condition), no
 * subset is marked unschedulable (Adaptive) and no admitted pod creation or deletion is still
 * waiting to be seen; Progressing while one is. Never throws: malformed input gives Unknown.
 */
export function workloadSpreadHealth(ws: WorkloadSpreadHealthInput): HealthVerdict {
  try {
    return evaluate(ws);
  } catch (error) {
    if (error instanceof MalformedField) return verdict('Unknown', 'MalformedInput', error.message);
    throw error;
  }
}

/** The first condition of `type` at `status` in the list `parent[key]` (named `field`), if any. */
function conditionOf(
  parent: Record<string, unknown>,
  key: string,
  field: string,
  type: string,
  status: string,
): Record<string, unknown> | undefined {
  return recordListAt(parent, key, field).find(
    (c, i) =>
      stringAt(c, 'type', `${field}[${i}].type`) === type && stringAt(c, 'status', `${field}[${i}].status`) === status,
  );
}

/** The number of entries of a name → time map (creatingPods, deletingPods). */
function recordCount(parent: Record<string, unknown>, key: string, field: string): number {
  return Object.keys(recordAt(parent, key, field)).length;
}

function evaluate(input: unknown): HealthVerdict {
  if (!isRecord(input)) return verdict('Unknown', 'MalformedInput', 'the WorkloadSpread is not an object');
  const status = recordAt(input, 'status', 'status');
  const stale = generationVerdict(input, status);
  if (stale) return stale;
  const missing = conditionOf(status, 'conditions', 'status.conditions', 'TargetFound', 'False');
  if (missing) {
    const message = stringAt(missing, 'message', 'status.conditions[].message');
    return verdict('Degraded', 'TargetNotFound', message ?? 'the target workload does not exist');
  }
  const subsets = recordListAt(status, 'subsetStatuses', 'status.subsetStatuses').map((s, i) => {
    const field = `status.subsetStatuses[${i}]`;
    return {
      name: stringAt(s, 'name', `${field}.name`) ?? `#${i}`,
      replicas: countAt(s, 'replicas', `${field}.replicas`, 0),
      inFlight:
        recordCount(s, 'creatingPods', `${field}.creatingPods`) +
        recordCount(s, 'deletingPods', `${field}.deletingPods`),
      blocked: conditionOf(s, 'conditions', `${field}.conditions`, 'Schedulable', 'False') !== undefined,
    };
  });
  const blocked = subsets.filter((s) => s.blocked);
  if (blocked.length > 0) {
    return verdict(
      'Degraded',
      'SubsetUnschedulable',
      `subsets ${blocked.map((s) => s.name).join(', ')} cannot schedule pods`,
    );
  }
  const inFlight = subsets.reduce((n, s) => n + s.inFlight, 0);
  if (inFlight > 0) return verdict('Progressing', 'PodsInFlight', `${inFlight} admitted pod changes not yet observed`);
  const placed = subsets.reduce((n, s) => n + s.replicas, 0);
  return verdict('Healthy', 'Spread', `${placed} pods spread over ${subsets.length} subsets`);
}
