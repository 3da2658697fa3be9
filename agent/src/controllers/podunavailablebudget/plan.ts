/**
 * The PodUnavailableBudget controller's pure planner (OpenKruise v1.9's
 * podunavailablebudget_controller.go, facts only): from the budget, the pods it covers and the
 * replica count expected of them, the status to write, the pods to bind to it (annotation
 * `kruise.io/related-pub`), the problems to report as conditions and events, and when to look
 * again for the next admission record to expire.
 *
 * - disruptedPods entries (deletions, evictions, resizes the webhook admitted) are dropped 20 s
 *   after admission, or once the pod is gone or being deleted; a pod still there after 20 s gets
 *   a Warning `NotDeleted` event. unavailablePods entries (admitted in-place updates) are dropped
 *   after 10 s or when the pod is gone.
 * - currentAvailable counts the covered pods that are available and in neither map;
 *   unavailableAllowed = max(currentAvailable − desiredAvailable, 0).
 */
import {
  ANNOTATION_RELATED_PUB as ANNOTATION_RELATED,
  type Condition,
  type PodUnavailableBudget,
  type PodUnavailableBudgetStatus,
} from '@flotilla/api';
import { isPodActive } from '../../kube/pods.js';
import type { Pod } from '../../kube/types.js';
import { parseTime } from '../../runtime/kube-time.js';
import { budgetedReplicas, desiredAvailable, isPodAvailable } from './availability.js';

export const DISRUPTED_POD_TIMEOUT_MS = 20_000;
export const UNAVAILABLE_POD_TIMEOUT_MS = 10_000;

/** Conditions the controller sets while a problem lasts (status True), and removes after. */
export const PubCondition = {
  NoPodsMatched: 'NoPodsMatched',
  TargetNotFound: 'TargetNotFound',
  PodsOverlap: 'PodsOverlap',
} as const;
export type PubConditionType = (typeof PubCondition)[keyof typeof PubCondition];

export interface PubPlanInput {
  pub: PodUnavailableBudget;
  /** The pods the budget covers (selector or target), any state. */
  pods: readonly Pod[];
  /** Replicas expected of the covered workloads; undefined when the targetRef names nothing. */
  expectedReplicas: number | undefined;
  /** Covered pods that another budget covers too, with that budget's name. */
  overlaps: readonly { pod: string; otherPub: string }[];
  nowMs: number;
}

export interface PlanEvent {
  /** The budget, or the named pod. */
  on: 'pub' | { pod: string };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface PubPlan {
  status: PodUnavailableBudgetStatus;
  /** Covered pods lacking the related-pub annotation. */
  bind: string[];
  events: PlanEvent[];
  /** When the next admission record expires. */
  requeueAfterMs: number | undefined;
}

type Records = Record<string, string>;

/** Keeps the records still pending; reports the expired ones and the soonest expiry. */
function pruneRecords(
  records: Records | undefined,
  timeoutMs: number,
  pods: ReadonlyMap<string, Pod>,
  nowMs: number,
  keepWhile: (pod: Pod) => boolean,
): { kept: Records; expired: string[]; nextMs: number | undefined } {
  const kept: Records = {};
  const expired: string[] = [];
  let nextMs: number | undefined;
  for (const [name, at] of Object.entries(records ?? {})) {
    const pod = pods.get(name);
    if (!pod || !keepWhile(pod)) continue;
    const until = (parseTime(at) ?? 0) + timeoutMs;
    if (until <= nowMs) {
      expired.push(name);
      continue;
    }
    kept[name] = at;
    nextMs = Math.min(nextMs ?? Infinity, until - nowMs);
  }
  return { kept, expired, nextMs };
}

const condition = (type: PubConditionType, reason: string, message: string, nowIso: string): Condition => ({
  type,
  status: 'True',
  reason,
  message,
  lastTransitionTime: nowIso,
});

/** The problems with the budget's input, as conditions (a kept condition keeps its transition time). */
function problems(input: PubPlanInput, covered: number, nowIso: string): Condition[] {
  const { pub } = input;
  const out: Condition[] = [];
  const target = pub.spec.targetRef;
  if (target && input.expectedReplicas === undefined) {
    out.push(
      condition(
        PubCondition.TargetNotFound,
        'TargetNotFound',
        `targetRef ${target.kind}/${target.name} (${target.apiVersion}) does not exist`,
        nowIso,
      ),
    );
  } else if (covered === 0) {
    out.push(condition(PubCondition.NoPodsMatched, 'NoPods', 'No matching pods found', nowIso));
  }
  if (input.overlaps.length > 0) {
    const list = input.overlaps
      .slice(0, 5)
      .map((o) => `${o.pod} (also ${o.otherPub})`)
      .join(', ');
    const more = input.overlaps.length > 5 ? ` and ${input.overlaps.length - 5} more` : '';
    out.push(
      condition(PubCondition.PodsOverlap, 'OverlappingBudgets', `pods covered by two budgets: ${list}${more}`, nowIso),
    );
  }
  const previous = pub.status?.conditions ?? [];
  return out.map((c) => {
    const was = previous.find((p) => p.type === c.type);
    return was && was.status === c.status ? { ...c, lastTransitionTime: was.lastTransitionTime } : c;
  });
}

/** Warnings: records that expired with their pod still there, and problems that just appeared. */
function planEvents(
  pub: PodUnavailableBudget,
  expired: readonly string[],
  conditions: readonly Condition[],
): PlanEvent[] {
  const events: PlanEvent[] = expired.map((pod) => ({
    on: { pod },
    type: 'Warning',
    reason: 'NotDeleted',
    message: `pod was not deleted in ${DISRUPTED_POD_TIMEOUT_MS / 1000}s after PodUnavailableBudget ${pub.metadata?.name} admitted it`,
  }));
  // A problem is announced when it appears (its condition is new), not on every pass.
  const before = new Set((pub.status?.conditions ?? []).filter((c) => c.status === 'True').map((c) => c.type));
  for (const c of conditions) {
    if (before.has(c.type)) continue;
    events.push({ on: 'pub', type: 'Warning', reason: c.reason ?? c.type, message: c.message ?? '' });
  }
  return events;
}

/** Active pods not yet bound; a pod two budgets cover goes to the first by name (OpenKruise binds the first it lists). */
function toBind(pub: PodUnavailableBudget, active: readonly Pod[], overlaps: PubPlanInput['overlaps']): string[] {
  const mine = pub.metadata?.name ?? '';
  const elsewhere = new Set(overlaps.filter((o) => o.otherPub < mine).map((o) => o.pod));
  return active
    .filter((p) => !p.metadata.annotations?.[ANNOTATION_RELATED] && !elsewhere.has(p.metadata.name))
    .map((p) => p.metadata.name);
}

export function planPub(input: PubPlanInput): PubPlan {
  const { pub, nowMs } = input;
  const nowIso = new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const active = input.pods.filter(isPodActive);
  const byName = new Map(input.pods.map((p) => [p.metadata.name, p]));
  const disrupted = pruneRecords(
    pub.status?.disruptedPods,
    DISRUPTED_POD_TIMEOUT_MS,
    byName,
    nowMs,
    (p) => !p.metadata.deletionTimestamp,
  );
  const unavailable = pruneRecords(pub.status?.unavailablePods, UNAVAILABLE_POD_TIMEOUT_MS, byName, nowMs, () => true);
  const currentAvailable = active.filter(
    (p) => isPodAvailable(p) && !(p.metadata.name in disrupted.kept) && !(p.metadata.name in unavailable.kept),
  ).length;
  const replicas = budgetedReplicas(pub, input.expectedReplicas ?? 0);
  const desired = desiredAvailable(pub, replicas);
  const conditions = problems(input, active.length, nowIso);
  const status: PodUnavailableBudgetStatus = {
    observedGeneration: pub.metadata?.generation ?? 0,
    ...(Object.keys(disrupted.kept).length > 0 ? { disruptedPods: disrupted.kept } : {}),
    ...(Object.keys(unavailable.kept).length > 0 ? { unavailablePods: unavailable.kept } : {}),
    unavailableAllowed: Math.max(currentAvailable - desired, 0),
    currentAvailable,
    desiredAvailable: desired,
    totalReplicas: replicas,
    ...(conditions.length > 0 ? { conditions } : {}),
  };
  const events = planEvents(pub, disrupted.expired, conditions);
  const bind = toBind(pub, active, input.overlaps);
  const next = [disrupted.nextMs, unavailable.nextMs].filter((n): n is number => n !== undefined);
  return { status, bind, events, requeueAfterMs: next.length > 0 ? Math.min(...next) : undefined };
}

/**
 * Whether a new status must be written at once: it changes what admissions may take
 * (unavailableAllowed), what the budget keeps (desiredAvailable, the generation) or a condition.
 * A change of only the counts (available pods, replicas: they matter through desiredAvailable)
 * and of the admission records can wait: the webhook's own writes keep unavailableAllowed
 * current between them, and in a storm of admissions each such write would only make the
 * admissions' next write conflict.
 */
export function statusChangeIsUrgent(
  before: PodUnavailableBudgetStatus | undefined,
  after: PodUnavailableBudgetStatus,
): boolean {
  if (!before) return true;
  const urgent = (s: PodUnavailableBudgetStatus): unknown[] => [
    s.unavailableAllowed,
    s.desiredAvailable,
    s.observedGeneration,
    s.conditions ?? [],
  ];
  return JSON.stringify(urgent(before)) !== JSON.stringify(urgent(after));
}
