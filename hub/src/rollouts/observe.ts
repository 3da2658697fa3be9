/**
 * What the scheduler believes about one cluster: online, removed, and the workload's health
 * there judged against the rollout's target. Only a fresh report counts: it must be about the
 * desired generation the hub last sent (so a report written before the new revision arrived can
 * never pass for the new revision's health), at the target revision.
 */
import type { HealthVerdict, ObjectHealth } from '@flotilla/api';
import type { ClusterObservation } from './types.js';

export interface ObservedDesired {
  revision: number;
  generation: number;
  deleted: boolean;
}

export interface ObservedStatus {
  revision: number;
  generation: number;
  health: ObjectHealth;
  message: string;
}

export interface ObserveInput {
  targetRevision: number;
  /** The cluster's registration state ('accepted', 'removed', ...). */
  clusterState: string;
  lastHeartbeatAt: Date | null;
  desired: ObservedDesired | undefined;
  status: ObservedStatus | undefined;
  now: Date;
  heartbeatTimeoutMs: number;
  /** Since when this hub has been observing (receiving heartbeats); absent: long enough. */
  observingSince?: Date;
}

function verdictOf(input: ObserveInput): HealthVerdict {
  const { desired, status, targetRevision } = input;
  if (!desired || desired.deleted)
    return { state: 'Unknown', reason: 'NotDesired', message: 'the hub has not sent this workload to the cluster' };
  if (desired.revision !== targetRevision) {
    return {
      state: 'Progressing',
      reason: 'NotDispatched',
      message: `desired revision is ${desired.revision}, not ${targetRevision}`,
    };
  }
  if (!status) return { state: 'Unknown', reason: 'NoStatus', message: 'the agent has not reported this workload yet' };
  if (status.generation < desired.generation) {
    return {
      state: 'Stale',
      reason: 'StaleStatus',
      message: `last report is for desired generation ${status.generation}; waiting for ${desired.generation}`,
    };
  }
  if (status.revision !== targetRevision) {
    return {
      state: 'Progressing',
      reason: 'OtherRevision',
      message: `the cluster reports revision ${status.revision}`,
    };
  }
  switch (status.health) {
    case 'Healthy':
    case 'Progressing':
    case 'Degraded':
    case 'Unknown':
      return { state: status.health, reason: `Agent${status.health}`, message: status.message };
    case 'Missing':
    case 'Deleted':
      return { state: 'Degraded', reason: `Object${status.health}`, message: status.message };
  }
}

export function observeCluster(input: ObserveInput): ClusterObservation {
  const removed = input.clusterState === 'removed';
  const online =
    !removed &&
    input.lastHeartbeatAt !== null &&
    input.now.getTime() - input.lastHeartbeatAt.getTime() <= input.heartbeatTimeoutMs;
  const unsure =
    !online &&
    !removed &&
    input.observingSince !== undefined &&
    input.now.getTime() - input.observingSince.getTime() < input.heartbeatTimeoutMs;
  return { online, removed, ...(unsure ? { unsure } : {}), health: verdictOf(input) };
}
