import { MalformedField, booleanAt, countAt, intOrStringAt, isRecord, recordAt, stringAt } from './fields.js';
import { generationVerdict } from './generation.js';
import { sameRevision } from './revisionMatch.js';
import { scaledValue } from './scaled.js';
import { type HealthVerdict, verdict } from './verdict.js';

/** What daemonSetHealth reads of an Advanced DaemonSet (either version); both DaemonSet types fit. */
export interface DaemonSetHealthInput {
  metadata?: { generation?: number } | null;
  spec?: {
    updateStrategy?: {
      type?: string;
      rollingUpdate?: { partition?: number | string; maxUnavailable?: number | string; paused?: boolean } | null;
    } | null;
  } | null;
  status?: {
    observedGeneration?: number;
    desiredNumberScheduled?: number;
    currentNumberScheduled?: number;
    numberMisscheduled?: number;
    updatedNumberScheduled?: number;
    numberAvailable?: number;
    /** v1beta1. */
    updateRevision?: string;
    /** v1alpha1's name for updateRevision. */
    daemonSetHash?: string;
  } | null;
}

/**
 * Health of a cluster's Advanced DaemonSet at `targetRevision` (a revision hash; omitted: the
 * set's own). Healthy when the status is current, the update revision is the target, every node
 * that should run the pod has one and no other node does, the nodes the partition lets update
 * (rounded down against desiredNumberScheduled, as OpenKruise rounds it) run the updated pod,
 * and unavailability is within maxUnavailable (at least 1, as the controller allows). So an
 * in-cluster partition step counts as done once its nodes are updated. OnDelete sets are judged
 * on scheduling and availability only. Never throws: malformed input gives Unknown.
 */
export function daemonSetHealth(ds: DaemonSetHealthInput, targetRevision?: string): HealthVerdict {
  try {
    return evaluate(ds, targetRevision);
  } catch (error) {
    if (error instanceof MalformedField) return verdict('Unknown', 'MalformedInput', error.message);
    throw error;
  }
}

function evaluate(input: unknown, targetRevision: string | undefined): HealthVerdict {
  if (!isRecord(input)) return verdict('Unknown', 'MalformedInput', 'the DaemonSet is not an object');
  const spec = recordAt(input, 'spec', 'spec');
  const strategy = recordAt(spec, 'updateStrategy', 'spec.updateStrategy');
  const status = recordAt(input, 'status', 'status');
  return generationVerdict(input, status) ?? revisionVerdict(status, targetRevision) ?? nodesVerdict(strategy, status);
}

function revisionVerdict(status: Record<string, unknown>, target: string | undefined): HealthVerdict | undefined {
  const revision =
    stringAt(status, 'updateRevision', 'status.updateRevision') ??
    stringAt(status, 'daemonSetHash', 'status.daemonSetHash');
  if (target === undefined || (revision !== undefined && sameRevision(revision, target))) return undefined;
  return verdict(
    'Progressing',
    'UpdateRevisionMismatch',
    `update revision is ${revision ?? 'not set'}, waiting for ${target}`,
  );
}

function nodesVerdict(strategy: Record<string, unknown>, status: Record<string, unknown>): HealthVerdict {
  const desired = countAt(status, 'desiredNumberScheduled', 'status.desiredNumberScheduled', 0);
  const current = countAt(status, 'currentNumberScheduled', 'status.currentNumberScheduled', 0);
  const misscheduled = countAt(status, 'numberMisscheduled', 'status.numberMisscheduled', 0);
  const updated = countAt(status, 'updatedNumberScheduled', 'status.updatedNumberScheduled', 0);
  const available = countAt(status, 'numberAvailable', 'status.numberAvailable', 0);
  const onDelete = stringAt(strategy, 'type', 'spec.updateStrategy.type') === 'OnDelete';
  const rolling = recordAt(strategy, 'rollingUpdate', 'spec.updateStrategy.rollingUpdate');
  const partitionValue = intOrStringAt(rolling, 'partition', 'spec.updateStrategy.rollingUpdate.partition');
  const partition =
    partitionValue === undefined
      ? 0
      : Math.min(
          Math.max(scaledValue(partitionValue, desired, false, 'spec.updateStrategy.rollingUpdate.partition'), 0),
          desired,
        );
  const unavailableValue = intOrStringAt(rolling, 'maxUnavailable', 'spec.updateStrategy.rollingUpdate.maxUnavailable');
  const maxUnavailable = Math.max(
    1,
    unavailableValue === undefined
      ? 0
      : scaledValue(unavailableValue, desired, true, 'spec.updateStrategy.rollingUpdate.maxUnavailable'),
  );
  const expectedUpdated = onDelete ? 0 : desired - partition;
  if (current < desired) return verdict('Progressing', 'Scheduling', `${current} of ${desired} nodes run the pod`);
  if (misscheduled > 0)
    return verdict('Progressing', 'Misscheduled', `${misscheduled} nodes run the pod but should not`);
  if (updated < expectedUpdated) {
    const waiting = `${updated} of ${expectedUpdated} nodes updated`;
    const paused = booleanAt(rolling, 'paused', 'spec.updateStrategy.rollingUpdate.paused');
    return paused
      ? verdict('Progressing', 'Paused', `update is paused: ${waiting}`)
      : verdict('Progressing', 'WaitingForUpdatedPods', waiting);
  }
  if (available < desired - maxUnavailable) {
    return verdict('Progressing', 'WaitingForAvailability', `${available} of ${desired} nodes have an available pod`);
  }
  return verdict('Healthy', 'Available', `${updated} of ${desired} nodes updated, ${available} available`);
}
