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
  cloneSetHealth,
  imagePullJobHealth,
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

/** Replica-like counts per kind (SidecarSet: matched pods; ImagePullJob: nodes). */
export function countsOf(kind: WorkloadKind, status: Record<string, unknown>): StatusCounts {
  switch (kind) {
    case 'CloneSet':
      return {
        replicas: num(status['replicas']),
        readyReplicas: num(status['readyReplicas']),
        updatedReplicas: num(status['updatedReplicas']),
        updatedReadyReplicas: num(status['updatedReadyReplicas']),
        availableReplicas: num(status['availableReplicas']),
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
      return {
        replicas: num(status['desired']),
        readyReplicas: num(status['succeeded']),
        updatedReplicas: num(status['succeeded']) + num(status['failed']),
        updatedReadyReplicas: num(status['succeeded']),
        availableReplicas: num(status['succeeded']),
      };
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

/** A report for an object that is gone (pruned by the hub, or deleted behind its back). */
export function goneReport(
  cluster: string,
  ref: ObjectRef,
  last: { workloadId: string; revision: number; generation: number; observedGeneration: number },
  health: 'Deleted' | 'Missing',
  now: Date,
  message?: string,
): StatusMessage {
  return {
    v: PROTOCOL_VERSION,
    cluster,
    kind: ref.kind,
    namespace: ref.namespace,
    name: ref.name,
    ...last,
    counts: { replicas: 0, readyReplicas: 0, updatedReplicas: 0, updatedReadyReplicas: 0, availableReplicas: 0 },
    health,
    message: message ?? (health === 'Deleted' ? 'deleted as the hub asked' : 'the object is missing from the cluster'),
    reportedAt: now.toISOString(),
  };
}

/** What decides whether a report changed (timestamps excluded). */
export function reportDigest(m: StatusMessage): string {
  const { reportedAt: _ignored, ...rest } = m;
  return JSON.stringify(rest);
}
