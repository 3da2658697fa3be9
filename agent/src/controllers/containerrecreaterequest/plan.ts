/**
 * The ContainerRecreateRequest manager's decisions, as a pure function of the CRR, its pod, the
 * pod's node and the time. The node daemon does the recreating; the manager watches over it:
 *
 * 1. A deleted CRR releases what it holds (the pod's not-ready key, then its finalizer).
 * 2. A finished CRR (Completed or Failed) releases the same, drops the `active` label (the daemon
 *    then stops watching it) and is deleted ttlSecondsAfterFinished after its completionTime.
 * 3. An unfinished one ends Failed, with a message, when its pod is gone (or was replaced), the
 *    pod's node is gone or NotReady (no daemon will ever act), activeDeadlineSeconds has passed,
 *    or the daemon has not picked it up within a minute. OpenKruise ends these Completed; the
 *    phase Failed says plainly that nothing was recreated.
 * 4. With unreadyGracePeriodSeconds it first takes the pod out of service: finalizer, not-ready
 *    key on KruisePodReady (when the pod has that gate), then the unready-acquired annotation the
 *    daemon waits on.
 * 5. While Recreating it copies the pod's container statuses (name, ready, restartCount,
 *    containerID) into the sync annotation, which the daemon reads to tell a recreated container
 *    that is up from one that is not.
 */
import {
  ANNOTATION_CRR_SYNC_CONTAINER_STATUSES,
  ANNOTATION_CRR_UNREADY_ACQUIRED,
  FINALIZER_CRR_UNREADY_ACQUIRED,
  LABEL_CRR_ACTIVE,
  LABEL_CRR_POD_UID,
  type ContainerRecreateRequest,
  type CrrStatus,
} from '@flotilla/api';
import { formatTime, parseTime } from '../../runtime/kube-time.js';
import type { Pod, PodCondition } from '../../kube/types.js';
import { addNotReadyKey, removeNotReadyKey, type NotReadyKey } from '../cloneset/readiness.js';

/** How long a CRR may wait for the daemon to set any phase. */
export const DAEMON_RESPONSE_TIMEOUT_MS = 60_000;

export const MESSAGE_POD_GONE = 'pod has gone';
export const MESSAGE_DAEMON_SILENT = 'daemon has not responded for a long time';
export const MESSAGE_DEADLINE = 'recreating has exceeded the activeDeadlineSeconds';

/** The slice of a Node the manager reads. */
export interface CrrNode {
  metadata: { name: string };
  status?: { conditions?: { type: string; status: string }[] };
}

export interface CrrObserved {
  crr: ContainerRecreateRequest;
  /** The pod named by the CRR, if it exists. */
  pod: Pod | undefined;
  /** The node the CRR's pod runs on, if it exists. */
  node: CrrNode | undefined;
  now: number;
}

/** What to write, in order; every field empty or undefined means nothing. */
export interface CrrPlan {
  /** Conditions to merge into the pod's status (the not-ready key added or removed). */
  podConditions: PodCondition[];
  /** Metadata changes of the CRR: labels/annotations set (null deletes), finalizer added or removed. */
  labels: Record<string, string | null>;
  annotations: Record<string, string | null>;
  finalizer?: 'add' | 'remove';
  /** The new status, when it differs from the stored one. */
  status?: CrrStatus;
  /** Delete the CRR (its TTL ran out). */
  delete: boolean;
  /** Look again after this long (a deadline, TTL or grace runs out). */
  requeueAfterMs?: number;
}

/** The key this CRR puts on the pod's KruisePodReady condition. */
export function notReadyKeyOf(crr: ContainerRecreateRequest): NotReadyKey {
  return {
    userAgent: 'ContainerRecreateRequest',
    key: `${crr.metadata?.namespace ?? ''}/${crr.metadata?.name ?? ''}`,
  };
}

const emptyPlan = (): CrrPlan => ({ podConditions: [], labels: {}, annotations: {}, delete: false });

export function isCrrFinished(crr: ContainerRecreateRequest): boolean {
  return crr.status?.phase === 'Completed' || crr.status?.phase === 'Failed';
}

/** Node gone or NotReady: its daemon is not running. */
function deadNodeMessage(pod: Pod, node: CrrNode | undefined): string | undefined {
  const name = pod.spec.nodeName ?? '';
  if (!node) return `node ${name} of the pod does not exist`;
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  return ready?.status === 'True' ? undefined : `node ${name} of the pod is not ready`;
}

/** The pod is missing, being deleted, or a different pod of the same name. */
function podGone(crr: ContainerRecreateRequest, pod: Pod | undefined): boolean {
  const uid = crr.metadata?.labels?.[LABEL_CRR_POD_UID];
  return !pod || Boolean(pod.metadata.deletionTimestamp) || (uid !== undefined && pod.metadata.uid !== uid);
}

/** Time left before the deadline and before the daemon must have answered; a message when one ran out. */
function timeouts(crr: ContainerRecreateRequest, now: number): { message?: string; recheckMs?: number } {
  const created = parseTime(crr.metadata?.creationTimestamp) ?? now;
  const checks: number[] = [];
  const deadline = crr.spec.activeDeadlineSeconds;
  if (deadline !== undefined) {
    const left = created + deadline * 1000 - now;
    if (left <= 0) return { message: MESSAGE_DEADLINE };
    checks.push(left);
  }
  if (!crr.status?.phase) {
    const left = created + DAEMON_RESPONSE_TIMEOUT_MS - now;
    if (left <= 0) return { message: MESSAGE_DAEMON_SILENT };
    checks.push(left);
  }
  return { recheckMs: checks.length > 0 ? Math.min(...checks) : undefined };
}

/** Why an unfinished CRR must end now, or undefined; also when to check again. */
function failure({ crr, pod, node, now }: CrrObserved): { message?: string; recheckMs?: number } {
  if (!pod || podGone(crr, pod)) return { message: MESSAGE_POD_GONE };
  const dead = deadNodeMessage(pod, node);
  if (dead) return { message: dead };
  return timeouts(crr, now);
}

/** Steps 1 and 2's release: the pod's key, then the finalizer. */
function release(plan: CrrPlan, { crr, pod, now }: CrrObserved): void {
  if (pod) plan.podConditions = removeNotReadyKey(pod, notReadyKeyOf(crr), now);
  if (crr.metadata?.finalizers?.includes(FINALIZER_CRR_UNREADY_ACQUIRED)) plan.finalizer = 'remove';
}

/** Step 4: one step of taking the pod out of service per pass, in order. */
function acquireUnready(plan: CrrPlan, { crr, pod, now }: CrrObserved): void {
  if (crr.spec.strategy?.unreadyGracePeriodSeconds === undefined || !pod) return;
  if (crr.metadata?.annotations?.[ANNOTATION_CRR_UNREADY_ACQUIRED]) return;
  if (!crr.metadata?.finalizers?.includes(FINALIZER_CRR_UNREADY_ACQUIRED)) {
    plan.finalizer = 'add';
    return;
  }
  plan.podConditions = addNotReadyKey(pod, notReadyKeyOf(crr), now);
  if (plan.podConditions.length === 0) plan.annotations[ANNOTATION_CRR_UNREADY_ACQUIRED] = formatTime(now);
}

/** Step 5: the pod's statuses of the CRR's containers, as the daemon reads them. */
export function syncedStatuses(crr: ContainerRecreateRequest, pod: Pod): string {
  const names = new Set(crr.spec.containers.map((c) => c.name));
  const statuses = (pod.status?.containerStatuses ?? [])
    .filter((s) => names.has(s.name))
    .map((s) => ({
      name: s.name,
      ready: s.ready ?? false,
      restartCount: s.restartCount ?? 0,
      containerID: s.containerID ?? '',
    }));
  return JSON.stringify(statuses);
}

function finishedPlan(observed: CrrObserved): CrrPlan {
  const { crr, now } = observed;
  const plan = emptyPlan();
  release(plan, observed);
  if (crr.metadata?.labels?.[LABEL_CRR_ACTIVE] !== undefined) plan.labels[LABEL_CRR_ACTIVE] = null;
  const ttl = crr.spec.ttlSecondsAfterFinished;
  const done = parseTime(crr.status?.completionTime);
  if (ttl !== undefined && done !== undefined) {
    const left = done + ttl * 1000 - now;
    if (left <= 0) plan.delete = true;
    else plan.requeueAfterMs = left;
  }
  return plan;
}

/** Everything the manager should do for this CRR now. */
export function planContainerRecreateRequest(observed: CrrObserved): CrrPlan {
  const { crr, pod, now } = observed;
  if (crr.metadata?.deletionTimestamp) {
    const plan = emptyPlan();
    release(plan, observed);
    return plan;
  }
  if (isCrrFinished(crr)) return finishedPlan(observed);
  const plan = emptyPlan();
  const { message, recheckMs } = failure(observed);
  if (message) {
    plan.status = { ...crr.status, phase: 'Failed', message, completionTime: formatTime(now) };
    return plan;
  }
  plan.requeueAfterMs = recheckMs;
  acquireUnready(plan, observed);
  if (crr.status?.phase === 'Recreating' && pod) {
    const synced = syncedStatuses(crr, pod);
    if (crr.metadata?.annotations?.[ANNOTATION_CRR_SYNC_CONTAINER_STATUSES] !== synced) {
      plan.annotations[ANNOTATION_CRR_SYNC_CONTAINER_STATUSES] = synced;
    }
  }
  return plan;
}
