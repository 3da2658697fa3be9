/**
 * One pass of the BroadcastJob controller, decided from plain inputs in OpenKruise's order
 * (Reconcile in pkg/controller/broadcastjob): count the job's pods, find the nodes its pod fits,
 * then — unless the job has failed or is paused — fail it (a failed pod under FailFast, or past
 * activeDeadlineSeconds), pause it (a failed pod under Pause), or delete pods that no longer fit,
 * start pods on the next nodes within parallelism and complete it once every desired node has a
 * finished pod. The controller (controller.ts) carries the plan out and writes the status.
 */
import {
  BroadcastJobPhase,
  scaledValue,
  type BroadcastJob,
  type BroadcastJobStatus,
  type JobCondition,
} from '@flotilla/api';
import { isPodActive } from '../../kube/pods.js';
import type { Pod } from '../../kube/types.js';
import { formatTime, parseTime } from '../../runtime/kube-time.js';
import { nodeFit, type NodeLike } from '../../kube/node-fit.js';
import { assignedNode } from './pod-template.js';

export interface JobEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface PlanInput {
  /** The job with its defaults applied. */
  job: BroadcastJob;
  /** Pods controlled by the job (by controller reference uid). */
  pods: readonly Pod[];
  nodes: readonly NodeLike[];
  nowMs: number;
}

export interface Plan {
  status: BroadcastJobStatus;
  /** Nodes to start a pod on now. */
  create: string[];
  /** Pods to delete: active ones of a failed job, or ones whose node no longer fits. */
  delete: Pod[];
  events: JobEvent[];
  /** When to look again without an event (the active deadline). */
  requeueAfterMs?: number;
}

export const REASON_FAILED_POD = 'failed pod is found';
export const MESSAGE_FAILED_POD = 'failure policy is FailurePolicyTypeFailFast and failed pod is found';
export const REASON_DEADLINE = 'DeadlineExceeded';

interface PodGroups {
  active: Pod[];
  failed: Pod[];
  succeeded: Pod[];
}

/** Whether the job ended with a Complete or Failed condition (never for completionPolicy Never). */
export function isJobFinished(job: BroadcastJob): boolean {
  if (job.spec.completionPolicy?.type === 'Never') return false;
  return (job.status?.conditions ?? []).some(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
}

/** Ms until a finished job's ttlSecondsAfterFinished passes (≤ 0: delete it); undefined: keep it. */
export function ttlLeftMs(job: BroadcastJob, nowMs: number): number | undefined {
  const ttl = job.spec.completionPolicy?.ttlSecondsAfterFinished;
  const finished = parseTime(job.status?.completionTime);
  if (ttl === undefined || finished === undefined) return undefined;
  return finished + ttl * 1000 - nowMs;
}

/**
 * Active, failed and succeeded pods (filterPods): an OnFailure pod whose containers restarted more
 * than restartLimit times in all has failed; pods being deleted count in none.
 */
export function groupPods(pods: readonly Pod[], restartLimit: number): PodGroups {
  const groups: PodGroups = { active: [], failed: [], succeeded: [] };
  for (const pod of pods) {
    const phase = pod.status?.phase;
    if (phase === 'Succeeded') groups.succeeded.push(pod);
    else if (phase === 'Failed') groups.failed.push(pod);
    else if (!pod.metadata.deletionTimestamp) {
      (restartsExceeded(pod, restartLimit) ? groups.failed : groups.active).push(pod);
    }
  }
  return groups;
}

function restartsExceeded(pod: Pod, restartLimit: number): boolean {
  if ((pod.spec as { restartPolicy?: string }).restartPolicy !== 'OnFailure') return false;
  const statuses = [
    ...((pod.status as { initContainerStatuses?: { restartCount?: number }[] } | undefined)?.initContainerStatuses ??
      []),
    ...(pod.status?.containerStatuses ?? []),
  ];
  return statuses.reduce((sum, s) => sum + (s.restartCount ?? 0), 0) > restartLimit;
}

interface NodePlacement {
  /** Every node the pod fits (or whose pod is kept), with its pod if there is one. */
  desired: Map<string, Pod | undefined>;
  /** Fitting nodes without a pod yet, by name. */
  rest: string[];
  /** Pods on nodes they no longer fit, not yet being deleted. */
  misfits: Pod[];
}

/** getNodesToRunPod: nodes sorted by name so that pods start in a stable order. */
export function placePods(job: BroadcastJob, pods: readonly Pod[], nodes: readonly NodeLike[]): NodePlacement {
  const byNode = new Map(pods.map((p) => [assignedNode(p), p]));
  const placement: NodePlacement = { desired: new Map(), rest: [], misfits: [] };
  const sorted = [...nodes].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
  for (const node of sorted) {
    const name = node.metadata?.name ?? '';
    const pod = byNode.get(name);
    const spec = pod ? pod.spec : { ...job.spec.template.spec, nodeName: name };
    const fits = nodeFit(spec, node).fits;
    if (pod && !fits && !pod.metadata.deletionTimestamp) placement.misfits.push(pod);
    else if (pod) placement.desired.set(name, pod);
    else if (fits) {
      placement.rest.push(name);
      placement.desired.set(name, undefined);
    }
  }
  return placement;
}

/** Pods allowed to run at once: parallelism as a count or a percentage of desired, rounded up. */
export function parallelismOf(job: BroadcastJob, desired: number): number {
  const value = job.spec.parallelism;
  if (value === undefined) return Number.MAX_SAFE_INTEGER;
  return scaledValue(value, desired, true) ?? Number.MAX_SAFE_INTEGER;
}

function condition(type: 'Complete' | 'Failed', message: string, now: string): JobCondition {
  return { type, status: 'True', lastProbeTime: now, lastTransitionTime: now, reason: type, message };
}

/** Plans one pass over a running (not finished) job. */
export function planBroadcastJob(input: PlanInput): Plan {
  const { job, nowMs } = input;
  const now = formatTime(nowMs);
  const prior = job.status ?? {};
  const groups = groupPods(input.pods, job.spec.failurePolicy?.restartLimit ?? 0);
  const placement = placePods(job, input.pods, input.nodes);
  const status: BroadcastJobStatus = {
    ...prior,
    startTime: prior.startTime ?? now,
    phase: prior.phase || BroadcastJobPhase.Running,
    active: groups.active.length,
    succeeded: groups.succeeded.length,
    failed: groups.failed.length,
    desired: placement.desired.size,
  };
  const plan: Plan = { status, create: [], delete: [], events: [], requeueAfterMs: deadlineLeftMs(job, status, nowMs) };
  if (status.phase === BroadcastJobPhase.Failed || holdsPaused(job, plan, groups)) return plan;
  const failure = failureOf(job, status, groups, nowMs);
  if (failure) failJob(plan, groups, failure, now);
  else runJob(job, plan, placement, now);
  return plan;
}

/**
 * Whether the job stays paused this pass: spec.paused on a running or paused job, or a failed pod
 * under failurePolicy Pause (only the status says so; spec.paused is left as it is). A job paused
 * before and not any more runs on.
 */
function holdsPaused(job: BroadcastJob, plan: Plan, groups: PodGroups): boolean {
  const { status } = plan;
  const wasPaused = status.phase === BroadcastJobPhase.Paused;
  if (job.spec.paused && (status.phase === BroadcastJobPhase.Running || wasPaused)) {
    status.phase = BroadcastJobPhase.Paused;
    return true;
  }
  if (groups.failed.length > 0 && job.spec.failurePolicy?.type === 'Pause') {
    if (!wasPaused)
      plan.events.push({ type: 'Warning', reason: 'Paused', message: 'job is paused, due to failed pod' });
    status.phase = BroadcastJobPhase.Paused;
    return true;
  }
  if (wasPaused) {
    status.phase = BroadcastJobPhase.Running;
    plan.events.push({ type: 'Normal', reason: 'Continue', message: 'continue to process job' });
  }
  return false;
}

interface Failure {
  reason: string;
  message: string;
}

/** FailFast with a failed pod, else (completionPolicy Always) the active deadline passed. */
function failureOf(
  job: BroadcastJob,
  status: BroadcastJobStatus,
  groups: PodGroups,
  nowMs: number,
): Failure | undefined {
  if (groups.failed.length > 0 && job.spec.failurePolicy?.type === 'FailFast') {
    return { reason: REASON_FAILED_POD, message: MESSAGE_FAILED_POD };
  }
  const left = deadlineLeftMs(job, status, nowMs);
  if (left !== undefined && left <= 0) {
    const name = `${job.metadata?.namespace}/${job.metadata?.name}`;
    return { reason: REASON_DEADLINE, message: `Job ${name} was active longer than specified deadline` };
  }
  return undefined;
}

/** Ms until activeDeadlineSeconds passes for an Always job; undefined without a deadline. */
function deadlineLeftMs(job: BroadcastJob, status: BroadcastJobStatus, nowMs: number): number | undefined {
  const deadline = job.spec.completionPolicy?.activeDeadlineSeconds;
  if (job.spec.completionPolicy?.type === 'Never' || deadline === undefined) return undefined;
  return parseTime(status.startTime)! + deadline * 1000 - nowMs;
}

/** Deletes the active pods (counted failed from then on) and ends the job Failed. */
function failJob(plan: Plan, groups: PodGroups, failure: Failure, now: string): void {
  const { status } = plan;
  plan.delete = groups.active;
  status.failed = (status.failed ?? 0) + groups.active.length;
  status.active = (status.active ?? 0) - groups.active.length;
  status.phase = BroadcastJobPhase.Failed;
  status.conditions = [...(status.conditions ?? []), condition('Failed', failure.message, now)];
  status.completionTime = now;
  plan.requeueAfterMs = undefined;
  plan.events.push({
    type: 'Warning',
    reason: failure.reason,
    message: `${failure.message}: ${status.succeeded} pods succeeded, ${status.failed} pods failed`,
  });
}

/**
 * Deletes misfits, starts pods within parallelism (none while the job is being deleted), and
 * completes the job when every node is done.
 */
function runJob(job: BroadcastJob, plan: Plan, placement: NodePlacement, now: string): void {
  const { status } = plan;
  plan.delete = placement.misfits;
  status.failed = (status.failed ?? 0) + placement.misfits.length;
  status.active = (status.active ?? 0) - placement.misfits.filter(isPodActive).length;
  startPods(job, plan, placement);
  if (!isComplete(job, placement)) return;
  const message = `Job completed, ${status.succeeded} pods succeeded, ${status.failed} pods failed`;
  status.phase = BroadcastJobPhase.Completed;
  status.conditions = [...(status.conditions ?? []), condition('Complete', message, now)];
  status.completionTime = now;
  plan.requeueAfterMs = undefined;
  const name = `${job.metadata?.namespace}/${job.metadata?.name}`;
  plan.events.push({
    type: 'Normal',
    reason: 'JobComplete',
    message: `Job ${name} is completed, ${status.succeeded} pods succeeded, ${status.failed} pods failed`,
  });
}

/**
 * Starts pods on the next fitting nodes within parallelism. A job being deleted (deletionTimestamp
 * set, e.g. kept by a foreground deletion until its pods are gone) starts none, as OpenKruise's
 * controller and the Kubernetes Job controller do: new pods would hold the deletion up and run a
 * job that is going away. Its pods are still counted, so its status stays true while it goes.
 */
function startPods(job: BroadcastJob, plan: Plan, placement: NodePlacement): void {
  const { status } = plan;
  if (job.metadata?.deletionTimestamp) return;
  const parallelism = parallelismOf(job, placement.desired.size);
  const active = status.active ?? 0;
  if (active > parallelism) {
    plan.events.push({
      type: 'Warning',
      reason: 'TooManyActivePods',
      message: 'Number of active pods exceed parallelism limit',
    });
    return;
  }
  plan.create = placement.rest.slice(0, Math.max(0, parallelism - active));
  status.active = active + plan.create.length;
}

/** Always jobs with at least one desired node, each with a pod that is no longer active. */
function isComplete(job: BroadcastJob, placement: NodePlacement): boolean {
  if (job.spec.completionPolicy?.type === 'Never' || placement.desired.size === 0) return false;
  return [...placement.desired.values()].every((pod) => pod !== undefined && !isPodActive(pod));
}
