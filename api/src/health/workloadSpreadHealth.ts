import { MalformedField, isRecord, recordAt } from './fields.js';
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

type Subset = NonNullable<NonNullable<WorkloadSpreadHealthInput['status']>['subsetStatuses']>[number];

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

function evaluate(input: unknown): HealthVerdict {
  if (!isRecord(input)) return verdict('Unknown', 'MalformedInput', 'the WorkloadSpread is not an object');
  const status = recordAt(input, 'status', 'status');
  const stale = generationVerdict(input, status);
  if (stale) return stale;
  const typed = status as NonNullable<WorkloadSpreadHealthInput['status']>;
  const missing = (typed.conditions ?? []).find((c) => c.type === 'TargetFound' && c.status === 'False');
  if (missing) return verdict('Degraded', 'TargetNotFound', missing.message ?? 'the target workload does not exist');
  const subsets: Subset[] = Array.isArray(typed.subsetStatuses) ? typed.subsetStatuses : [];
  const blocked = subsets.filter((s) =>
    (s.conditions ?? []).some((c) => c.type === 'Schedulable' && c.status === 'False'),
  );
  if (blocked.length > 0) {
    return verdict(
      'Degraded',
      'SubsetUnschedulable',
      `subsets ${blocked.map((s) => s.name).join(', ')} cannot schedule pods`,
    );
  }
  const inFlight = subsets.reduce(
    (n, s) => n + Object.keys(s.creatingPods ?? {}).length + Object.keys(s.deletingPods ?? {}).length,
    0,
  );
  if (inFlight > 0) return verdict('Progressing', 'PodsInFlight', `${inFlight} admitted pod changes not yet observed`);
  const placed = subsets.reduce((n, s) => n + (s.replicas ?? 0), 0);
  return verdict('Healthy', 'Spread', `${placed} pods spread over ${subsets.length} subsets`);
}
