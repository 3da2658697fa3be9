/**
 * An ImagePullJob's status, computed fresh on every pass from its target NodeImages
 * (calculateStatus in OpenKruise's imagepulljob_controller.go). A node counts for the job only
 * when its NodeImage tag lists the job as owner and the node daemon reported on that very tag
 * version; anything else is pulling (active) or not yet synced.
 */
import type { ImagePullJob, ImagePullJobStatus, NodeImage } from '@flotilla/api';
import { formatTime, parseTime } from '../../runtime/kube-time.js';
import type { NodeImageRef } from '../../kube/nodeimage.js';

/** A pull secret copy as NodeImages list it. */
export interface SecretRef {
  namespace: string;
  name: string;
}

export interface StatusResult {
  status: ImagePullJobStatus;
  /** Target NodeImages that don't carry this job's tag (or its secrets) yet, in target order. */
  notSynced: string[];
}

export const MESSAGE_COMPLETED = 'job has completed';
export const MESSAGE_DEADLINE = 'job exceeds activeDeadlineSeconds';
export const MESSAGE_NO_PROGRESS = 'job is running, no progress';

type NodeState = 'notSynced' | 'pulling' | 'succeeded' | 'failed';

/**
 * The new status of `job` (already defaulted) over `targets`. `image` is the job's image split as
 * NodeImage stores it; `secrets` the pull secret copies every target must list.
 */
export function calculateStatus(
  job: ImagePullJob,
  image: NodeImageRef,
  targets: readonly NodeImage[],
  secrets: readonly SecretRef[],
  nowMs: number,
): StatusResult {
  const now = formatTime(nowMs);
  const startTime = job.status?.startTime ?? now;
  const groups: Record<NodeState, string[]> = { notSynced: [], pulling: [], succeeded: [], failed: [] };
  for (const ni of targets) groups[nodeState(ni, job.metadata?.uid, image, secrets)].push(ni.metadata?.name ?? '');
  const desired = targets.length;
  const done = groups.succeeded.length + groups.failed.length;
  const always = job.spec.completionPolicy?.type !== 'Never';
  if (always && done !== desired && deadlinePassed(job, startTime, nowMs)) {
    return { status: failedAtDeadline(groups, startTime, now, desired), notSynced: [] };
  }
  const status: ImagePullJobStatus = {
    startTime,
    desired,
    active: groups.pulling.length,
    succeeded: groups.succeeded.length,
    failed: groups.failed.length,
  };
  if (groups.failed.length > 0) status.failedNodes = [...groups.failed].sort();
  if (always && done === desired) status.completionTime = now;
  status.message = statusMessage(status);
  return { status, notSynced: groups.notSynced };
}

/** Whether activeDeadlineSeconds has passed since the job started. */
function deadlinePassed(job: ImagePullJob, startTime: string, nowMs: number): boolean {
  const deadline = job.spec.completionPolicy?.activeDeadlineSeconds;
  return deadline !== undefined && nowMs - parseTime(startTime)! >= deadline * 1000;
}

/** The final status at the deadline: whatever has not finished by then has failed. */
function failedAtDeadline(
  groups: Record<NodeState, string[]>,
  startTime: string,
  now: string,
  desired: number,
): ImagePullJobStatus {
  const failedNodes = [...groups.failed, ...groups.pulling, ...groups.notSynced].sort();
  return {
    startTime,
    completionTime: now,
    desired,
    active: 0,
    succeeded: groups.succeeded.length,
    failed: failedNodes.length,
    failedNodes,
    message: MESSAGE_DEADLINE,
  };
}

/** Whether `listed` holds the pull secret copy `secret`. */
export function listsSecret(listed: readonly { namespace?: string; name?: string }[], secret: SecretRef): boolean {
  return listed.some((l) => l.namespace === secret.namespace && l.name === secret.name);
}

function nodeState(
  ni: NodeImage,
  jobUid: string | undefined,
  image: NodeImageRef,
  secrets: readonly SecretRef[],
): NodeState {
  const spec = ni.spec.images?.[image.name];
  if (!spec) return 'notSynced';
  const listed = spec.pullSecrets ?? [];
  if (!secrets.every((s) => listsSecret(listed, s))) return 'notSynced';
  const tag = spec.tags.find((t) => t.tag === image.tag);
  if (!tag || !tag.ownerReferences?.some((ref) => ref.uid === jobUid)) return 'notSynced';
  const reported = ni.status?.imageStatuses?.[image.name]?.tags.find((t) => t.tag === image.tag);
  if (!reported || reported.version !== tag.version) return 'pulling';
  if (reported.phase === 'Succeeded') return 'succeeded';
  if (reported.phase === 'Failed') return 'failed';
  return 'pulling';
}

/** OpenKruise's messages: completed, no progress (nothing to pull on), or the share of nodes done. */
export function statusMessage(status: ImagePullJobStatus): string {
  if (status.completionTime) return MESSAGE_COMPLETED;
  if (status.desired === 0) return MESSAGE_NO_PROGRESS;
  const done = (status.succeeded ?? 0) + (status.failed ?? 0);
  return `job is running, progress ${((100 * done) / status.desired).toFixed(1)}%`;
}
