/**
 * The status report for one managed object: counts from its status, health from the api
 * package's per-kind rules, and the revision/generation the hub stamped on it, so the hub can
 * tell which desired generation the report is about. Pure.
 */
import {
  GENERATION_ANNOTATION,
  PROTOCOL_VERSION,
  REVISION_ANNOTATION,
  WORKLOAD_ANNOTATION,
  broadcastJobHealth,
  daemonSetHealth,
  statefulSetHealth,
  workloadSpreadHealth,
  cloneSetHealth,
  imagePullJobHealth,
  podUnavailableBudgetHealth,
  sidecarSetHealth,
  type HealthVerdict,
  type ObjectHealth,
  type StatusCounts,
  type StatusMessage,
  type WorkloadKind,
} from '@flotilla/api';
import type { KubeObject, ObjectRef } from './types.js';

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0;
}

function intAnnotation(obj: KubeObject, key: string): number {
  const n = Number(obj.metadata?.annotations?.[key]);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}

/** Replica-like counts per kind (SidecarSet: matched pods; ImagePullJob and BroadcastJob: nodes). */
export function countsOf(kind: WorkloadKind, status: Record<string, unknown>): StatusCounts {
  switch (kind) {
    case 'CloneSet':
    case 'StatefulSet':
      return {
        replicas: num(status['replicas']),
        readyReplicas: num(status['readyReplicas']),
        updatedReplicas: num(status['updatedReplicas']),
        updatedReadyReplicas: num(status['updatedReadyReplicas']),
        availableReplicas: num(status['availableReplicas']),
      };
    case 'DaemonSet':
      return {
        replicas: num(status['desiredNumberScheduled']),
        readyReplicas: num(status['numberReady']),
        updatedReplicas: num(status['updatedNumberScheduled']),
        updatedReadyReplicas: Math.min(num(status['updatedNumberScheduled']), num(status['numberReady'])),
        availableReplicas: num(status['numberAvailable']),
      };
    case 'PodUnavailableBudget':
      // The pods it covers: expected, available, and those it keeps available.
      return {
        replicas: num(status['totalReplicas']),
        readyReplicas: num(status['currentAvailable']),
        updatedReplicas: num(status['currentAvailable']),
        updatedReadyReplicas: num(status['currentAvailable']),
        availableReplicas: num(status['currentAvailable']),
      };
    case 'SidecarSet':
      return {
        replicas: num(status['matchedPods']),
        readyReplicas: num(status['readyPods']),
        updatedReplicas: num(status['updatedPods']),
        updatedReadyReplicas: num(status['updatedReadyPods']),
        availableReplicas: num(status['readyPods']),
      };
    case 'ImagePullJob':
    case 'BroadcastJob':
      return {
        replicas: num(status['desired']),
        readyReplicas: num(status['succeeded']),
        updatedReplicas: num(status['succeeded']) + num(status['failed']),
        updatedReadyReplicas: num(status['succeeded']),
        availableReplicas: num(status['succeeded']),
      };
    case 'WorkloadSpread': {
      // The pods placed in its subsets; a WorkloadSpread makes no pods of its own.
      // Whatever the cluster wrote: an entry that is no object counts nothing (health names it).
      const subsets: unknown[] = Array.isArray(status['subsetStatuses']) ? status['subsetStatuses'] : [];
      const placed = subsets.reduce<number>(
        (n, s) => n + (typeof s === 'object' && s !== null ? num((s as Record<string, unknown>)['replicas']) : 0),
        0,
      );
      return {
        replicas: placed,
        readyReplicas: placed,
        updatedReplicas: placed,
        updatedReadyReplicas: placed,
        availableReplicas: placed,
      };
    }
  }
}

function verdictOf(kind: WorkloadKind, obj: KubeObject): HealthVerdict {
  switch (kind) {
    case 'CloneSet':
      return cloneSetHealth(obj as Parameters<typeof cloneSetHealth>[0]);
    case 'SidecarSet':
      return sidecarSetHealth(obj as Parameters<typeof sidecarSetHealth>[0]);
    case 'ImagePullJob':
      return imagePullJobHealth(obj as Parameters<typeof imagePullJobHealth>[0]);
    case 'BroadcastJob':
      return broadcastJobHealth(obj as Parameters<typeof broadcastJobHealth>[0]);
    case 'DaemonSet':
      return daemonSetHealth(obj as Parameters<typeof daemonSetHealth>[0]);
    case 'StatefulSet':
      return statefulSetHealth(obj as Parameters<typeof statefulSetHealth>[0]);
    case 'PodUnavailableBudget':
      return podUnavailableBudgetHealth(obj as Parameters<typeof podUnavailableBudgetHealth>[0]);
    case 'WorkloadSpread':
      return workloadSpreadHealth(obj as Parameters<typeof workloadSpreadHealth>[0]);
  }
}

/** The protocol has no Stale: a status the controller has not caught up with is still Progressing. */
function healthOf(v: HealthVerdict): ObjectHealth {
  return v.state === 'Stale' ? 'Progressing' : v.state;
}

export function statusReport(cluster: string, ref: ObjectRef, obj: KubeObject, now: Date): StatusMessage {
  const status = typeof obj.status === 'object' && obj.status !== null ? (obj.status as Record<string, unknown>) : {};
  const verdict = verdictOf(ref.kind, obj);
  return {
    v: PROTOCOL_VERSION,
    cluster,
    kind: ref.kind,
    namespace: ref.namespace,
    name: ref.name,
    workloadId: obj.metadata?.annotations?.[WORKLOAD_ANNOTATION] ?? '',
    revision: intAnnotation(obj, REVISION_ANNOTATION),
    generation: intAnnotation(obj, GENERATION_ANNOTATION),
    observedGeneration: num(status['observedGeneration']),
    counts: countsOf(ref.kind, status),
    health: healthOf(verdict),
    message: verdict.message.slice(0, 1024),
    reportedAt: now.toISOString(),
  };
}

/** What the desired message that removed an object says about it. */
export interface GoneAbout {
  workloadId: string;
  revision: number;
  generation: number;
}

/** The fields of the last report a gone report repeats. */
export type LastReported = Pick<StatusMessage, 'workloadId' | 'revision' | 'generation' | 'observedGeneration'>;

/**
 * What a gone report says of the object: the removing desired message's identity (`about`), so
 * the report sorts after earlier ones, else the last report's.
 */
export function lastReported(about: GoneAbout | undefined, prev: StatusMessage | undefined): LastReported {
  return {
    workloadId: about?.workloadId ?? prev?.workloadId ?? '',
    revision: about?.revision ?? prev?.revision ?? 0,
    generation: about?.generation ?? prev?.generation ?? 0,
    observedGeneration: prev?.observedGeneration ?? 0,
  };
}

/** Why an object is gone: Deleted (pruned by the hub) or Missing, and a message when the default says too little. */
export interface Gone {
  last: LastReported;
  health: 'Deleted' | 'Missing';
  message?: string;
}

/** A report for an object that is gone (pruned by the hub, or deleted behind its back). */
export function goneReport(cluster: string, ref: ObjectRef, gone: Gone, now: Date): StatusMessage {
  return {
    v: PROTOCOL_VERSION,
    cluster,
    kind: ref.kind,
    namespace: ref.namespace,
    name: ref.name,
    ...gone.last,
    counts: { replicas: 0, readyReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0, availableReplicas: 0 },
    health: gone.health,
    message:
      gone.message ??
      (gone.health === 'Deleted' ? 'deleted as the hub asked' : 'the object is missing from the cluster'),
    reportedAt: now.toISOString(),
  };
}

/** What decides whether a report changed (timestamps excluded). */
export function reportDigest(m: StatusMessage): string {
  const { reportedAt: _ignored, ...rest } = m;
  return JSON.stringify(rest);
}
