/**
 * What the scheduler believes about one cluster: online, removed, and the workload's health
 * there judged against the rollout's target. Only a fresh report counts: it must be about the
 * desired generation the hub last sent (so a report written before the new revision arrived can
 * never pass for the new revision's health), at the target revision. How current that belief is
 * (`freshUntil`) comes from when the hub last heard the cluster — its newest heartbeat or this
 * object's report, by JetStream's clock — and from whether the hub hears NATS at all.
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
  /** When JetStream stored the report. */
  storedAt?: Date;
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
  /** What the hub heard of a cluster counts as current for this long; absent: always current. */
  freshnessMs?: number;
  /** Since when the hub cannot hear NATS (epoch ms); absent: it hears it. */
  deafSince?: number;
}

/** Until when what the hub heard of the cluster counts as current (see ClusterObservation). */
function freshUntil(input: ObserveInput): number | undefined {
  if (input.freshnessMs === undefined) return input.deafSince;
  const heard = Math.max(input.lastHeartbeatAt?.getTime() ?? 0, input.status?.storedAt?.getTime() ?? 0);
  const until = heard === 0 ? 0 : heard + input.freshnessMs;
  return input.deafSince === undefined ? until : Math.min(until, input.deafSince);
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
  const deaf = !removed && input.deafSince !== undefined;
  const unsure =
    deaf ||
    (!online &&
      !removed &&
      input.observingSince !== undefined &&
      input.now.getTime() - input.observingSince.getTime() < input.heartbeatTimeoutMs);
  const until = freshUntil(input);
  return {
    online,
    removed,
    ...(unsure ? { unsure } : {}),
    ...(deaf ? { hubDeaf: true as const } : {}),
    ...(until === undefined ? {} : { freshUntil: until }),
    health: verdictOf(input),
  };
}
