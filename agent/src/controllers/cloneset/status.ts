/**
 * The CloneSet status, computed fresh from the pods on every reconcile (OpenKruise
 * cloneset_status.go) and compared with the stored one, so it is written only when it changed.
 *
 * - replicas: active owned pods; readyReplicas: Running, Ready and InPlaceUpdateReady not False;
 *   availableReplicas: also ready for minReadySeconds and in lifecycle state '' or Normal;
 * - updated*: the same three restricted to pods at the update revision;
 * - expectedUpdatedReplicas: replicas − partition;
 * - currentRevision becomes updateRevision once every pod is updated and the count is right
 *   (readiness not required);
 * - conditions: FailedScale / FailedUpdate while the last reconcile failed, with the error as
 *   message. Unlike OpenKruise they also count as a change, so a failure is always reported.
 *   Progressing under progressDeadlineSeconds (progressing.ts).
 */
import type { LabelSelector } from '../../runtime/label-selector.js';
import { formatTime } from '../../runtime/kube-time.js';
import { podReadySince } from '../../kube/pods.js';
import { hasRevision, isPodAvailable, isPodUpdateReady } from './pods.js';
import { partitionReplicas } from './strategy.js';
import type { Pod } from '../../kube/types.js';
import type { CloneSet } from './types.js';
import type { CloneSetStatus } from '@flotilla/api';
import { progressingCondition } from './progressing.js';

export type CloneSetConditionType = 'FailedScale' | 'FailedUpdate';

export interface CloneSetCondition {
  type: string;
  status: string;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface StatusInput {
  /** The defaulted CloneSet. */
  cs: CloneSet;
  pods: readonly Pod[];
  currentRevision: string;
  updateRevision: string;
  collisionCount: number;
  /** Failures of this reconcile, by condition type. */
  failures?: Partial<Record<CloneSetConditionType, string>>;
  now: number;
}

const OPERATORS: Readonly<Record<string, (key: string, values: string) => string>> = {
  In: (k, v) => `${k} in (${v})`,
  NotIn: (k, v) => `${k} notin (${v})`,
  Exists: (k) => k,
  DoesNotExist: (k) => `!${k}`,
};

/**
 * The selector as k8s `labels.Selector.String()` prints it for the scale subresource:
 * requirements sorted by key, set values sorted, `k=v` for matchLabels.
 */
export function selectorString(selector: LabelSelector): string {
  const reqs: [string, string][] = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => [k, `${k}=${v}`]);
  for (const e of selector.matchExpressions ?? []) {
    const format = OPERATORS[e.operator];
    if (format) reqs.push([e.key, format(e.key, [...new Set(e.values ?? [])].sort().join(','))]);
  }
  return reqs
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, text]) => text)
    .join(',');
}

/** Keeps lastTransitionTime of a condition that is still there with the same status. */
function conditions(
  old: readonly CloneSetCondition[] | undefined,
  failures: StatusInput['failures'],
  now: number,
): CloneSetCondition[] | undefined {
  const out: CloneSetCondition[] = [];
  for (const type of ['FailedScale', 'FailedUpdate'] as const) {
    const message = failures?.[type];
    if (message === undefined) continue;
    const before = old?.find((c) => c.type === type && c.status === 'True');
    out.push({ type, status: 'True', lastTransitionTime: before?.lastTransitionTime ?? formatTime(now), message });
  }
  return out.length > 0 ? out : undefined;
}

/** The status the CloneSet should have. */
export function calculateStatus(input: StatusInput): CloneSetStatus {
  const { cs, now } = input;
  const replicas = cs.spec.replicas ?? 1;
  const status: CloneSetStatus = {
    observedGeneration: cs.metadata?.generation ?? 0,
    ...countReplicas(input),
    expectedUpdatedReplicas: replicas - partitionReplicas(cs.spec.updateStrategy?.partition, replicas),
    updateRevision: input.updateRevision,
    currentRevision: input.currentRevision,
    collisionCount: input.collisionCount,
    labelSelector: selectorString(cs.spec.selector),
  };
  if (status.updatedReplicas === status.replicas && status.replicas === replicas) {
    status.currentRevision = input.updateRevision;
  }
  const conds = conditions(cs.status?.conditions, input.failures, now) ?? [];
  const progressing = progressingCondition(cs, status, cs.status?.conditions, now);
  if (progressing) conds.push(progressing);
  if (conds.length > 0) status.conditions = conds;
  return status;
}

type ReplicaCounts = Required<
  Pick<
    CloneSetStatus,
    | 'replicas'
    | 'readyReplicas'
    | 'availableReplicas'
    | 'updatedReplicas'
    | 'updatedReadyReplicas'
    | 'updatedAvailableReplicas'
  >
>;

/** The pods counted by readiness, availability (minReadySeconds) and revision. */
function countReplicas({ cs, pods, now, updateRevision }: StatusInput): ReplicaCounts {
  const minReady = cs.spec.minReadySeconds ?? 0;
  const counts: ReplicaCounts = {
    replicas: 0,
    readyReplicas: 0,
    availableReplicas: 0,
    updatedReplicas: 0,
    updatedReadyReplicas: 0,
    updatedAvailableReplicas: 0,
  };
  for (const pod of pods) {
    const ready = isPodUpdateReady(pod, 0, now);
    const available = isPodAvailable(pod, minReady, now);
    const updated = hasRevision(pod, updateRevision);
    counts.replicas++;
    if (ready) counts.readyReplicas++;
    if (available) counts.availableReplicas++;
    if (updated) counts.updatedReplicas++;
    if (updated && ready) counts.updatedReadyReplicas++;
    if (updated && available) counts.updatedAvailableReplicas++;
  }
  return counts;
}

const COMPARED = [
  'replicas',
  'readyReplicas',
  'availableReplicas',
  'updatedReplicas',
  'updatedReadyReplicas',
  'updatedAvailableReplicas',
  'expectedUpdatedReplicas',
  'updateRevision',
  'currentRevision',
  'labelSelector',
  'collisionCount',
] as const;

function conditionKey(c: CloneSetCondition): string {
  return `${c.type}|${c.status}|${c.reason ?? ''}|${c.message ?? ''}`;
}

/** Whether `next` differs from the stored status in anything worth a write. */
export function statusChanged(old: CloneSetStatus | undefined, next: CloneSetStatus): boolean {
  if (!old) return true;
  if ((next.observedGeneration ?? 0) > (old.observedGeneration ?? 0)) return true;
  if (COMPARED.some((k) => (old[k] ?? 0) !== (next[k] ?? 0))) return true;
  const a = (old.conditions ?? []).map(conditionKey).sort().join('\n');
  const b = (next.conditions ?? []).map(conditionKey).sort().join('\n');
  return a !== b;
}

/**
 * How long until the next pod that is ready but short of minReadySeconds becomes available, so
 * the reconcile comes back exactly then (the status and scaleStrategy.maxUnavailable depend on
 * it). Undefined when no pod is waiting.
 */
export function nextAvailableIn(pods: readonly Pod[], minReadySeconds: number, now: number): number | undefined {
  if (minReadySeconds <= 0) return undefined;
  let next: number | undefined;
  for (const pod of pods) {
    if (pod.status?.phase !== 'Running') continue;
    const since = podReadySince(pod);
    if (since === undefined) continue;
    const wait = since + minReadySeconds * 1000 - now;
    if (wait > 0 && (next === undefined || wait < next)) next = wait;
  }
  return next;
}
