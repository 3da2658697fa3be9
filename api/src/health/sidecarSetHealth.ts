import { MalformedField, booleanAt, countAt, intOrStringAt, isRecord, recordAt, stringAt } from './fields.js';
import { generationVerdict } from './generation.js';
import { sameRevision } from './revisionMatch.js';
import { partitionReplicas } from './scaled.js';
import { type HealthVerdict, verdict } from './verdict.js';

/** What sidecarSetHealth reads of a SidecarSet; the full SidecarSet type fits. */
export interface SidecarSetHealthInput {
  metadata?: { generation?: number } | null;
  spec?: {
    updateStrategy?: { type?: string; partition?: number | string; paused?: boolean } | null;
  } | null;
  status?: {
    observedGeneration?: number;
    matchedPods?: number;
    updatedPods?: number;
    readyPods?: number;
    updatedReadyPods?: number;
    latestRevision?: string;
  } | null;
}

/**
 * Health of a cluster's SidecarSet at `targetRevision` (compared with status.latestRevision
 * when given). Healthy when the status is current, every matched pod is ready, and the pods the
 * partition lets update (all matched pods, without a partition) run the latest sidecars and are
 * ready. With updateStrategy.type NotUpdate, existing pods are never upgraded, so only
 * readiness counts. Never throws: malformed input gives Unknown.
 */
export function sidecarSetHealth(sidecarSet: SidecarSetHealthInput, targetRevision?: string): HealthVerdict {
  try {
    return evaluate(sidecarSet, targetRevision);
  } catch (error) {
    if (error instanceof MalformedField) return verdict('Unknown', 'MalformedInput', error.message);
    throw error;
  }
}

function evaluate(input: unknown, targetRevision: string | undefined): HealthVerdict {
  if (!isRecord(input)) return verdict('Unknown', 'MalformedInput', 'the SidecarSet is not an object');
  const spec = recordAt(input, 'spec', 'spec');
  const strategy = recordAt(spec, 'updateStrategy', 'spec.updateStrategy');
  const status = recordAt(input, 'status', 'status');

  const stale = generationVerdict(input, status);
  if (stale) return stale;

  const latestRevision = stringAt(status, 'latestRevision', 'status.latestRevision');
  if (targetRevision !== undefined && (latestRevision === undefined || !sameRevision(latestRevision, targetRevision))) {
    return verdict(
      'Progressing',
      'LatestRevisionMismatch',
      `latest revision is ${latestRevision ?? 'not set'}, waiting for ${targetRevision}`,
    );
  }

  const matched = countAt(status, 'matchedPods', 'status.matchedPods', 0);
  const updated = countAt(status, 'updatedPods', 'status.updatedPods', 0);
  const ready = countAt(status, 'readyPods', 'status.readyPods', 0);
  const updatedReady = countAt(status, 'updatedReadyPods', 'status.updatedReadyPods');
  const noUpdate = stringAt(strategy, 'type', 'spec.updateStrategy.type') === 'NotUpdate';
  const paused = booleanAt(strategy, 'paused', 'spec.updateStrategy.paused');
  const partition = partitionReplicas(
    intOrStringAt(strategy, 'partition', 'spec.updateStrategy.partition'),
    matched,
    'spec.updateStrategy.partition',
  );
  const expectedUpdated = noUpdate ? 0 : matched - partition;

  if (updated < expectedUpdated) {
    const waiting = `${updated} of ${expectedUpdated} matched pods run the latest sidecars`;
    return paused
      ? verdict('Progressing', 'Paused', `update is paused: ${waiting}`)
      : verdict('Progressing', 'WaitingForUpdatedPods', waiting);
  }
  // updatedReadyPods is missing from older controllers; readyPods == matchedPods covers them.
  if (updatedReady !== undefined && updatedReady < expectedUpdated) {
    return verdict(
      'Progressing',
      'WaitingForUpdatedPodsReady',
      `${updatedReady} of ${expectedUpdated} updated pods are ready`,
    );
  }
  if (ready < matched) {
    return verdict('Progressing', 'WaitingForReadyPods', `${ready} of ${matched} matched pods are ready`);
  }
  const partitionNote = partition > 0 && !noUpdate ? ` (partition keeps ${partition} at the previous sidecars)` : '';
  return verdict('Healthy', 'Updated', `${updated} of ${matched} matched pods updated, all ready${partitionNote}`);
}
