import { MalformedField, booleanAt, countAt, intOrStringAt, isRecord, recordAt, stringAt } from './fields.js';
import { generationVerdict } from './generation.js';
import { sameRevision } from './revisionMatch.js';
import { scaledValue } from './scaled.js';
import { type HealthVerdict, verdict } from './verdict.js';

/** What statefulSetHealth reads of an Advanced StatefulSet (either version); the full type fits. */
export interface StatefulSetHealthInput {
  metadata?: { generation?: number } | null;
  spec?: {
    replicas?: number;
    podManagementPolicy?: string;
    updateStrategy?: {
      type?: string;
      rollingUpdate?: { partition?: number; maxUnavailable?: number | string; paused?: boolean } | null;
    } | null;
  } | null;
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    updatedReadyReplicas?: number;
    updateRevision?: string;
    conditions?: readonly { type?: string; status?: string; message?: string }[] | null;
  } | null;
}

// Conditions OpenKruise's StatefulSet controller sets when it cannot create or update a pod.
const FAILURE_CONDITIONS = new Set(['FailedCreatePod', 'FailedUpdatePod']);

/**
 * Health of a cluster's Advanced StatefulSet at `targetRevision` (a revision name or hash;
 * omitted: the set's own update revision). Healthy when the status is current, the update
 * revision is the target, exactly spec.replicas pods exist, the pods the partition lets update
 * (replicas − partition) are updated and ready, and availability is within maxUnavailable. So an
 * in-cluster canary step (a partition) counts as done once its pods are up.
 *
 * updatedReadyReplicas is a v1beta1 field that OpenKruise's conversion drops; read at v1alpha1,
 * the updated pods count as ready only when every pod is ready. Never throws: malformed input
 * gives Unknown.
 */
export function statefulSetHealth(set: StatefulSetHealthInput, targetRevision?: string): HealthVerdict {
  try {
    return evaluate(set, targetRevision);
  } catch (error) {
    if (error instanceof MalformedField) return verdict('Unknown', 'MalformedInput', error.message);
    throw error;
  }
}

function evaluate(input: unknown, targetRevision: string | undefined): HealthVerdict {
  if (!isRecord(input)) return verdict('Unknown', 'MalformedInput', 'the StatefulSet is not an object');
  const spec = recordAt(input, 'spec', 'spec');
  const strategy = recordAt(spec, 'updateStrategy', 'spec.updateStrategy');
  const rolling = recordAt(strategy, 'rollingUpdate', 'spec.updateStrategy.rollingUpdate');
  const status = recordAt(input, 'status', 'status');
  return (
    generationVerdict(input, status) ??
    failureCondition(status) ??
    revisionVerdict(status, targetRevision) ??
    replicasVerdict(spec, rolling, status)
  );
}

function revisionVerdict(status: Record<string, unknown>, target: string | undefined): HealthVerdict | undefined {
  const updateRevision = stringAt(status, 'updateRevision', 'status.updateRevision');
  if (target === undefined || (updateRevision !== undefined && sameRevision(updateRevision, target))) return undefined;
  return verdict(
    'Progressing',
    'UpdateRevisionMismatch',
    `update revision is ${updateRevision ?? 'not set'}, waiting for ${target}`,
  );
}

/** maxUnavailable of the rolling update: 1 unless Parallel, then the value rounded up, at least 1. */
function maxUnavailableReplicas(
  spec: Record<string, unknown>,
  rolling: Record<string, unknown>,
  desired: number,
): number {
  if (stringAt(spec, 'podManagementPolicy', 'spec.podManagementPolicy') !== 'Parallel') return 1;
  const field = 'spec.updateStrategy.rollingUpdate.maxUnavailable';
  return Math.max(1, scaledValue(intOrStringAt(rolling, 'maxUnavailable', field) ?? 1, desired, true, field));
}

function replicasVerdict(
  spec: Record<string, unknown>,
  rolling: Record<string, unknown>,
  status: Record<string, unknown>,
): HealthVerdict {
  const desired = countAt(spec, 'replicas', 'spec.replicas', 1);
  const partition = Math.min(desired, countAt(rolling, 'partition', 'spec.updateStrategy.rollingUpdate.partition', 0));
  const expectedUpdated = desired - partition;
  const paused = booleanAt(rolling, 'paused', 'spec.updateStrategy.rollingUpdate.paused');
  const replicas = countAt(status, 'replicas', 'status.replicas', 0);
  const ready = countAt(status, 'readyReplicas', 'status.readyReplicas', 0);
  const available = countAt(status, 'availableReplicas', 'status.availableReplicas', 0);
  const updated = countAt(status, 'updatedReplicas', 'status.updatedReplicas', 0);
  const updatedReady =
    countAt(status, 'updatedReadyReplicas', 'status.updatedReadyReplicas') ??
    (ready >= replicas ? Math.min(updated, ready) : 0);
  if (updated < expectedUpdated || updatedReady < expectedUpdated) {
    const waiting = `${updated} of ${expectedUpdated} pods updated, ${updatedReady} of them ready`;
    if (paused) return verdict('Progressing', 'Paused', `update is paused: ${waiting}`);
    return updated < expectedUpdated
      ? verdict('Progressing', 'WaitingForUpdatedPods', waiting)
      : verdict('Progressing', 'WaitingForUpdatedPodsReady', waiting);
  }
  if (replicas !== desired) return verdict('Progressing', 'Scaling', `${replicas} pods exist, spec wants ${desired}`);
  const maxUnavailable = maxUnavailableReplicas(spec, rolling, desired);
  if (available < desired - maxUnavailable) {
    return verdict(
      'Progressing',
      'WaitingForAvailability',
      `${available} of ${desired} pods available, at most ${maxUnavailable} may be unavailable`,
    );
  }
  const partitionNote = partition > 0 ? ` (partition keeps ${partition} at the previous revision)` : '';
  return verdict('Healthy', 'Updated', `${updated} of ${desired} pods updated and ready${partitionNote}`);
}

function failureCondition(status: Record<string, unknown>): HealthVerdict | undefined {
  const conditions = status.conditions;
  if (conditions === undefined || conditions === null) return undefined;
  if (!Array.isArray(conditions)) throw new MalformedField('status.conditions', 'is not a list');
  for (const [i, raw] of conditions.entries()) {
    if (!isRecord(raw)) throw new MalformedField(`status.conditions[${i}]`, 'is not an object');
    const type = stringAt(raw, 'type', `status.conditions[${i}].type`);
    const state = stringAt(raw, 'status', `status.conditions[${i}].status`);
    const message = stringAt(raw, 'message', `status.conditions[${i}].message`) ?? '';
    if (type !== undefined && FAILURE_CONDITIONS.has(type) && state === 'True') {
      return verdict('Degraded', type, message || `${type} is True`);
    }
  }
  return undefined;
}
