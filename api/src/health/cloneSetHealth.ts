import { MalformedField, booleanAt, countAt, intOrStringAt, isRecord, recordAt, stringAt } from './fields.js';
import { generationVerdict } from './generation.js';
import { sameRevision } from './revisionMatch.js';
import { partitionReplicas, scaledValue } from './scaled.js';
import { type HealthVerdict, verdict } from './verdict.js';

/** What cloneSetHealth reads of a CloneSet; the full CloneSet type fits. */
export interface CloneSetHealthInput {
  metadata?: { generation?: number } | null;
  spec?: {
    replicas?: number;
    updateStrategy?: {
      partition?: number | string;
      maxUnavailable?: number | string;
      maxSurge?: number | string;
      paused?: boolean;
    } | null;
  } | null;
  status?: {
    observedGeneration?: number;
    replicas?: number;
    availableReplicas?: number;
    updatedReplicas?: number;
    updatedReadyReplicas?: number;
    updatedAvailableReplicas?: number;
    updateRevision?: string;
    conditions?: readonly { type?: string; status?: string; reason?: string; message?: string }[] | null;
  } | null;
}

// Conditions OpenKruise sets when it cannot make progress (v1.8: FailedScale, FailedUpdate;
// v1.9 adds Progressing=False with ProgressDeadlineExceeded).
const FAILURE_CONDITIONS = new Set(['FailedScale', 'FailedUpdate']);

/**
 * Health of a cluster's CloneSet at `targetRevision` (a revision name or hash; omitted: the
 * CloneSet's own update revision). Healthy when the status is current, the update revision is
 * the target, exactly spec.replicas pods exist, the pods the partition lets update (all, without
 * a partition) are updated and available, and overall availability is within maxUnavailable.
 * So an in-cluster canary step (partition) counts as done once its pods are up.
 * Never throws: malformed input gives Unknown.
 */
export function cloneSetHealth(cloneSet: CloneSetHealthInput, targetRevision?: string): HealthVerdict {
  try {
    return evaluate(cloneSet, targetRevision);
  } catch (error) {
    if (error instanceof MalformedField) return verdict('Unknown', 'MalformedInput', error.message);
    throw error;
  }
}

function evaluate(input: unknown, targetRevision: string | undefined): HealthVerdict {
  if (!isRecord(input)) return verdict('Unknown', 'MalformedInput', 'the CloneSet is not an object');
  const spec = recordAt(input, 'spec', 'spec');
  const strategy = recordAt(spec, 'updateStrategy', 'spec.updateStrategy');
  const status = recordAt(input, 'status', 'status');
  // In this order: the first verdict that applies wins, and so does the first malformed field.
  return (
    generationVerdict(input, status) ??
    failureCondition(status) ??
    revisionVerdict(status, targetRevision) ??
    replicasVerdict(spec, strategy, status)
  );
}

/** Progressing while the status's update revision is not the target. */
function revisionVerdict(
  status: Record<string, unknown>,
  targetRevision: string | undefined,
): HealthVerdict | undefined {
  const updateRevision = stringAt(status, 'updateRevision', 'status.updateRevision');
  if (targetRevision === undefined || (updateRevision !== undefined && sameRevision(updateRevision, targetRevision))) {
    return undefined;
  }
  return verdict(
    'Progressing',
    'UpdateRevisionMismatch',
    `update revision is ${updateRevision ?? 'not set'}, waiting for ${targetRevision}`,
  );
}

/** At the target revision: whether the pods are updated, scaled and available as the spec asks. */
function replicasVerdict(
  spec: Record<string, unknown>,
  strategy: Record<string, unknown>,
  status: Record<string, unknown>,
): HealthVerdict {
  const desired = countAt(spec, 'replicas', 'spec.replicas', 1);
  const partition = partitionReplicas(
    intOrStringAt(strategy, 'partition', 'spec.updateStrategy.partition'),
    desired,
    'spec.updateStrategy.partition',
  );
  const expectedUpdated = desired - partition;
  const maxUnavailable = maxUnavailableReplicas(strategy, desired);
  const paused = booleanAt(strategy, 'paused', 'spec.updateStrategy.paused');

  const replicas = countAt(status, 'replicas', 'status.replicas', 0);
  const available = countAt(status, 'availableReplicas', 'status.availableReplicas', 0);
  const updated = countAt(status, 'updatedReplicas', 'status.updatedReplicas', 0);
  // updatedAvailableReplicas is newer than updatedReadyReplicas; older controllers lack it.
  const updatedAvailable =
    countAt(status, 'updatedAvailableReplicas', 'status.updatedAvailableReplicas') ??
    countAt(status, 'updatedReadyReplicas', 'status.updatedReadyReplicas', 0);

  if (updated < expectedUpdated || updatedAvailable < expectedUpdated) {
    const waiting = `${updated} of ${expectedUpdated} pods updated, ${updatedAvailable} of them available`;
    if (paused) return verdict('Progressing', 'Paused', `update is paused: ${waiting}`);
    return updated < expectedUpdated
      ? verdict('Progressing', 'WaitingForUpdatedPods', waiting)
      : verdict('Progressing', 'WaitingForUpdatedPodsAvailable', waiting);
  }
  if (replicas !== desired) {
    return verdict('Progressing', 'Scaling', `${replicas} pods exist, spec wants ${desired}`);
  }
  if (available < desired - maxUnavailable) {
    return verdict(
      'Progressing',
      'WaitingForAvailability',
      `${available} of ${desired} pods available, at most ${maxUnavailable} may be unavailable`,
    );
  }
  const partitionNote = partition > 0 ? ` (partition keeps ${partition} at the previous revision)` : '';
  return verdict('Healthy', 'Updated', `${updated} of ${desired} pods updated and available${partitionNote}`);
}

function failureCondition(status: Record<string, unknown>): HealthVerdict | undefined {
  const conditions = status.conditions;
  if (conditions === undefined || conditions === null) return undefined;
  if (!Array.isArray(conditions)) throw new MalformedField('status.conditions', 'is not a list');
  for (const [i, raw] of conditions.entries()) {
    if (!isRecord(raw)) throw new MalformedField(`status.conditions[${i}]`, 'is not an object');
    const type = stringAt(raw, 'type', `status.conditions[${i}].type`);
    const state = stringAt(raw, 'status', `status.conditions[${i}].status`);
    const reason = stringAt(raw, 'reason', `status.conditions[${i}].reason`);
    const message = stringAt(raw, 'message', `status.conditions[${i}].message`) ?? '';
    if (type !== undefined && FAILURE_CONDITIONS.has(type) && state === 'True') {
      return verdict('Degraded', type, message || `${type} is True`);
    }
    if (type === 'Progressing' && state === 'False' && reason === 'ProgressDeadlineExceeded') {
      return verdict('Degraded', reason, message || 'the CloneSet exceeded its progress deadline');
    }
  }
  return undefined;
}

// maxUnavailable (default 20%) rounds up unless maxSurge is set, then down (OpenKruise's
// calculateDiffsWithExpectation); maxSurge counts as 0 while paused.
function maxUnavailableReplicas(strategy: Record<string, unknown>, replicas: number): number {
  const paused = booleanAt(strategy, 'paused', 'spec.updateStrategy.paused');
  const surgeValue = intOrStringAt(strategy, 'maxSurge', 'spec.updateStrategy.maxSurge') ?? 0;
  const maxSurge = paused ? 0 : scaledValue(surgeValue, replicas, true, 'spec.updateStrategy.maxSurge');
  const unavailableValue = intOrStringAt(strategy, 'maxUnavailable', 'spec.updateStrategy.maxUnavailable') ?? '20%';
  return scaledValue(unavailableValue, replicas, maxSurge === 0, 'spec.updateStrategy.maxUnavailable');
}
