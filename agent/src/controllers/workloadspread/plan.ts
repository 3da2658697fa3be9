/**
 * The WorkloadSpread controller's pure planner, as OpenKruise v1.9's syncWorkloadSpread: the
 * workload's pods grouped by version and subset, each subset's status (replicas, missingReplicas,
 * creatingPods and deletingPods expiring after 30 s and 15 s), Adaptive rescheduling of pods
 * unschedulable too long, and pod deletion costs so that a scale-down removes the pods of later
 * subsets, and a subset's pods above its limit, first.
 */
import {
  WORKLOADSPREAD_CREATE_TIMEOUT_MS,
  WORKLOADSPREAD_DELETE_TIMEOUT_MS,
  WORKLOADSPREAD_DELETION_COST_STEP,
  WORKLOADSPREAD_FAKE_SUBSET,
  WORKLOADSPREAD_MAX_SCHEDULE_FAILED_SECONDS,
  WORKLOADSPREAD_SUBSET_SCHEDULABLE,
  WORKLOADSPREAD_VERSION_IGNORED,
  type WorkloadSpread,
  type WorkloadSpreadStatus,
  type WorkloadSpreadSubset,
  type WorkloadSpreadSubsetCondition,
  type WorkloadSpreadSubsetStatus,
} from '@flotilla/api';
import type { NodeLike } from '../../kube/node-fit.js';
import { adoptPods, withAdoption, type Adoption } from './adopt.js';
import { isPodActive, matchedSubsetOf, podVersion, type SpreadPod, subsetLimit } from './subsets.js';

/** What the planner knows of the target workload. */
export interface TargetView {
  /** spec.replicas (a Job's parallelism). */
  replicas: number;
  /** The version new pods get (Deployment: the current ReplicaSet's pod-template-hash); unset: unknown. */
  latestVersion?: string;
}

export interface PlannedEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface SpreadPlan {
  status: WorkloadSpreadStatus;
  /**
   * Pods not placed by this WorkloadSpread (created before it, say) matched to a subset by their
   * node (adopt.ts): pod name → subset and the metadata to patch on. The status and the deletion
   * costs already count them in those subsets.
   */
  adopted: Map<string, Adoption>;
  /** Pod name → the deletion cost it should carry (only pods whose annotation must change). */
  deletionCosts: Map<string, string>;
  /** Pods unschedulable past rescheduleCriticalSeconds, to delete so they are recreated elsewhere. */
  reschedule: string[];
  events: PlannedEvent[];
  /** When to look again (an expiry or a recovery is due), ms from now; undefined: no need. */
  requeueAfterMs?: number;
}

type PodsBySubset = Map<string, SpreadPod[]>;

const ANNOTATION_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

function groupBySubset(ws: WorkloadSpread, pods: readonly SpreadPod[]): PodsBySubset {
  const groups: PodsBySubset = new Map([[WORKLOADSPREAD_FAKE_SUBSET, []]]);
  for (const subset of ws.spec.subsets) groups.set(subset.name, []);
  for (const pod of pods) {
    const matched = matchedSubsetOf(pod);
    const name =
      matched && matched.name === ws.metadata?.name && groups.has(matched.subset)
        ? matched.subset
        : WORKLOADSPREAD_FAKE_SUBSET;
    groups.get(name)!.push(pod);
  }
  return groups;
}

function groupByVersion(ws: WorkloadSpread, pods: readonly SpreadPod[]): Map<string, PodsBySubset> {
  const versions = new Map<string, SpreadPod[]>();
  for (const pod of pods) {
    const version = podVersion(pod);
    versions.set(version, [...(versions.get(version) ?? []), pod]);
  }
  return new Map([...versions].map(([v, ps]) => [v, groupBySubset(ws, ps)]));
}

interface Clock {
  now: number;
  /** Earliest time something expires or recovers, ms since epoch. */
  next?: number;
  events: PlannedEvent[];
}

/** What every step of one plan shares. */
interface Ctx {
  ws: WorkloadSpread;
  replicas: number;
  clock: Clock;
}

function due(clock: Clock, at: number): void {
  if (at > clock.now && (clock.next === undefined || at < clock.next)) clock.next = at;
}

function expiryEvent(ctx: Ctx, reason: string, pod: string, expected: string): PlannedEvent {
  const namespace = ctx.ws.metadata?.namespace ?? '';
  return { type: 'Warning', reason, message: `Pod ${namespace}/${pod} was expected to be ${expected} but it wasn't` };
}

/** A subset's count while its status is built: missing pods and the recorded operations kept. */
interface Tally {
  limit: number;
  missing: number;
  active: number;
  creating: Record<string, string>;
  deleting: Record<string, string>;
}

/** Active pods take a missing slot; a recorded deletion not yet done gives it back until it expires. */
function countPod(ctx: Ctx, tally: Tally, pod: SpreadPod, deletedAt: string | undefined): void {
  if (!isPodActive(pod)) return;
  tally.active++;
  if (tally.missing > 0) tally.missing--;
  if (deletedAt === undefined) return;
  const expires = Date.parse(deletedAt) + WORKLOADSPREAD_DELETE_TIMEOUT_MS;
  if (expires < ctx.clock.now) {
    ctx.clock.events.push(expiryEvent(ctx, 'DeletePodFailed', pod.metadata.name, 'deleted'));
    return;
  }
  tally.deleting[pod.metadata.name] = deletedAt;
  if (tally.missing < tally.limit) tally.missing++;
  due(ctx.clock, expires);
}

/** A recorded creation whose pod is not seen yet takes a slot until it expires. */
function countCreation(ctx: Ctx, tally: Tally, key: string, createdAt: string): void {
  const expires = Date.parse(createdAt) + WORKLOADSPREAD_CREATE_TIMEOUT_MS;
  if (expires < ctx.clock.now) {
    ctx.clock.events.push(expiryEvent(ctx, 'CreatePodFailed', key, 'created'));
    return;
  }
  tally.creating[key] = createdAt;
  if (tally.missing > 0) tally.missing--;
  due(ctx.clock, expires);
}

/** One subset's status from its pods and the previous status (v1.9's calculateWorkloadSpreadSubsetStatus). */
function subsetStatus(
  ctx: Ctx,
  subset: WorkloadSpreadSubset,
  pods: readonly SpreadPod[],
  old: WorkloadSpreadSubsetStatus | undefined,
): WorkloadSpreadSubsetStatus | undefined {
  const limit = subsetLimit(subset, ctx.replicas);
  if (limit === undefined) return undefined;
  const tally: Tally = { limit, missing: limit, active: 0, creating: {}, deleting: {} };
  const pendingCreations = new Map(Object.entries(old?.creatingPods ?? {}));
  for (const pod of pods) {
    pendingCreations.delete(matchedSubsetOf(pod)?.uid || pod.metadata.name);
    countPod(ctx, tally, pod, old?.deletingPods?.[pod.metadata.name]);
  }
  for (const [key, createdAt] of pendingCreations) countCreation(ctx, tally, key, createdAt);
  return {
    name: subset.name,
    replicas: tally.active,
    missingReplicas: tally.missing,
    ...(Object.keys(tally.creating).length > 0 ? { creatingPods: tally.creating } : {}),
    ...(Object.keys(tally.deleting).length > 0 ? { deletingPods: tally.deleting } : {}),
  };
}

/** Unschedulable since when (the PodScheduled=False/Unschedulable transition), for a pod not yet bound. */
function unschedulableSince(pod: SpreadPod): number | undefined {
  if (pod.spec?.nodeName || !isPodActive(pod)) return undefined;
  const condition = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (condition?.status !== 'False' || condition.reason !== 'Unschedulable') return undefined;
  const since = Date.parse(condition.lastTransitionTime ?? pod.metadata.creationTimestamp ?? '');
  return Number.isNaN(since) ? undefined : since;
}

function schedulableCondition(status: 'True' | 'False', at: number): WorkloadSpreadSubsetCondition {
  return { type: WORKLOADSPREAD_SUBSET_SCHEDULABLE, status, lastTransitionTime: new Date(at).toISOString() };
}

/** The pods of a subset unschedulable for longer than `criticalSeconds`. */
function timedOut(ctx: Ctx, pods: readonly SpreadPod[], criticalSeconds: number): string[] {
  const failed: string[] = [];
  for (const pod of pods) {
    const since = unschedulableSince(pod);
    if (since === undefined) continue;
    const timeout = since + criticalSeconds * 1000;
    if (timeout <= ctx.clock.now) failed.push(pod.metadata.name);
    else due(ctx.clock, timeout);
  }
  return failed;
}

/** How long a subset stays unschedulable after its last failure (v1.9's MaxScheduledFailedDuration). */
const RECOVER_AFTER_MS = (WORKLOADSPREAD_MAX_SCHEDULE_FAILED_SECONDS + 5) * 1000;

/** The Schedulable condition after this round, given whether pods just failed to schedule. */
function nextSchedulable(
  ctx: Ctx,
  subset: string,
  previous: WorkloadSpreadSubsetCondition | undefined,
  failing: boolean,
): WorkloadSpreadSubsetCondition {
  const { clock, ws } = ctx;
  if (failing) return previous?.status === 'False' ? previous : schedulableCondition('False', clock.now);
  if (previous?.status !== 'False') return previous ?? schedulableCondition('True', clock.now);
  const recoverAt = Date.parse(previous.lastTransitionTime ?? '') + RECOVER_AFTER_MS;
  if (!Number.isNaN(recoverAt) && recoverAt > clock.now) {
    due(clock, recoverAt);
    return previous;
  }
  clock.events.push({
    type: 'Normal',
    reason: 'RecoverSchedulable',
    message: `Subset ${subset} of WorkloadSpread ${ws.metadata?.namespace}/${ws.metadata?.name} is recovered from unschedulable to schedulable`,
  });
  return schedulableCondition('True', clock.now);
}

/** Adaptive rescheduling's seconds, 0 when off. */
function criticalSecondsOf(ws: WorkloadSpread): number {
  const strategy = ws.spec.scheduleStrategy;
  return strategy?.type === 'Adaptive' ? (strategy.adaptive?.rescheduleCriticalSeconds ?? 0) : 0;
}

/**
 * Every subset's status; under Adaptive, a subset (but the last) with pods unschedulable past
 * rescheduleCriticalSeconds turns Schedulable=False (new pods skip it) and those pods go into
 * `rescheduled`; it turns back True 5 minutes after. Undefined when a limit cannot be read.
 */
function subsetStatuses(
  ctx: Ctx,
  groups: PodsBySubset | undefined,
  old: readonly WorkloadSpreadSubsetStatus[] | undefined,
  rescheduled?: string[],
): WorkloadSpreadSubsetStatus[] | undefined {
  const critical = criticalSecondsOf(ctx.ws);
  const subsets = ctx.ws.spec.subsets;
  const out: WorkloadSpreadSubsetStatus[] = [];
  for (const [i, subset] of subsets.entries()) {
    const previous = old?.find((s) => s.name === subset.name);
    const pods = groups?.get(subset.name) ?? [];
    const status = subsetStatus(ctx, subset, pods, previous);
    if (!status) return undefined;
    out.push(status);
    if (critical <= 0) continue;
    const previousCondition = previous?.conditions?.find((c) => c.type === WORKLOADSPREAD_SUBSET_SCHEDULABLE);
    const failed = i < subsets.length - 1 ? timedOut(ctx, pods, critical) : [];
    rescheduled?.push(...failed);
    const last = i === subsets.length - 1;
    status.conditions = [
      last && previousCondition?.status === 'True'
        ? previousCondition
        : last
          ? schedulableCondition('True', ctx.clock.now)
          : nextSchedulable(ctx, subset.name, previousCondition, failed.length > 0),
    ];
  }
  return out;
}

const isEmpty = (statuses: readonly WorkloadSpreadSubsetStatus[]): boolean =>
  statuses.every(
    (s) =>
      s.replicas === 0 && Object.keys(s.creatingPods ?? {}).length + Object.keys(s.deletingPods ?? {}).length === 0,
  );

/**
 * Deletion costs for one version's pods (v1.9's updateDeletionCostBySubset): subset i's pods
 * within its limit cost +100 × (subsets − i), those above it (the youngest first) and pods in no
 * subset −100 × (i + 1). An older version ranks its subsets the other way round, so a rolling
 * update keeps the newer pods where the spread wants them.
 */
function versionCosts(
  ws: WorkloadSpread,
  groups: PodsBySubset,
  replicas: number,
  reverse: boolean,
  costs: Map<string, string>,
): void {
  const count = ws.spec.subsets.length;
  const rank = (i: number): number => (reverse ? count - i - 1 : i);
  const assign = (pods: readonly SpreadPod[], cost: number): void => {
    for (const pod of pods) {
      const value = String(cost);
      const current = pod.metadata.annotations?.[ANNOTATION_DELETION_COST];
      if (current === value || (current === undefined && value === '0')) continue;
      costs.set(pod.metadata.name, value);
    }
  };
  ws.spec.subsets.forEach((subset, i) => {
    const active = (groups.get(subset.name) ?? []).filter(isPodActive);
    const positive = WORKLOADSPREAD_DELETION_COST_STEP * (count - rank(i));
    const negative = -WORKLOADSPREAD_DELETION_COST_STEP * (rank(i) + 1);
    const limit = subsetLimit(subset, replicas);
    if (limit === undefined) return;
    if (limit === -1 || active.length <= limit) {
      assign(active, positive);
      return;
    }
    const surplus = active.length - limit;
    const ordered = [...active].sort(deleteFirst);
    assign(ordered.slice(0, surplus), negative);
    assign(ordered.slice(surplus), positive);
  });
  const strays = (groups.get(WORKLOADSPREAD_FAKE_SUBSET) ?? []).filter(isPodActive);
  assign(strays, -WORKLOADSPREAD_DELETION_COST_STEP * (count + 1));
}

/**
 * kubecontroller.ActivePods ordering, the pods to delete first: unbound, then pending, then not
 * ready, then the youngest.
 */
function deleteFirst(a: SpreadPod, b: SpreadPod): number {
  const bound = (p: SpreadPod): number => (p.spec?.nodeName ? 1 : 0);
  const phase = (p: SpreadPod): number => (p.status?.phase === 'Pending' ? 0 : p.status?.phase === 'Unknown' ? 1 : 2);
  const ready = (p: SpreadPod): number =>
    p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? 1 : 0;
  const created = (p: SpreadPod): number => Date.parse(p.metadata.creationTimestamp ?? '') || 0;
  return bound(a) - bound(b) || phase(a) - phase(b) || ready(a) - ready(b) || created(b) - created(a);
}

/** The kinds whose controllers honour pod-deletion-cost (v1.9's isEffectiveKindForDeletionCost). */
const COST_KINDS = new Set(['CloneSet', 'Deployment', 'ReplicaSet']);

/** Statuses per pod version; a version whose pods are all gone stays until its records expire. */
function versionedStatuses(
  ctx: Ctx,
  versions: Map<string, PodsBySubset>,
): Record<string, WorkloadSpreadSubsetStatus[]> {
  const old = ctx.ws.status?.versionedSubsetStatuses ?? {};
  const versioned: Record<string, WorkloadSpreadSubsetStatus[]> = {};
  for (const [version, groups] of versions) {
    const statuses = subsetStatuses(ctx, groups, old[version]);
    if (statuses) versioned[version] = statuses;
  }
  for (const [version, previous] of Object.entries(old)) {
    if (versions.has(version)) continue;
    const statuses = subsetStatuses(ctx, undefined, previous);
    if (statuses && !isEmpty(statuses)) versioned[version] = statuses;
  }
  return versioned;
}

/** Deletion costs of every version's pods; none for kinds that ignore them. */
function deletionCosts(ctx: Ctx, versions: Map<string, PodsBySubset>, latestVersion?: string): Map<string, string> {
  const costs = new Map<string, string>();
  if (!COST_KINDS.has(ctx.ws.spec.targetRef.kind)) return costs;
  for (const [version, groups] of versions) {
    // Only a known latest version makes the others "older" (unversioned pods never are).
    const reverse =
      latestVersion !== undefined && version !== WORKLOADSPREAD_VERSION_IGNORED && version !== latestVersion;
    versionCosts(ctx.ws, groups, ctx.replicas, reverse, costs);
  }
  return costs;
}

/**
 * The whole plan for one WorkloadSpread. `pods` are the target's pods; `now` in ms; `nodeOf` reads
 * a node by name, for adopting pods the WorkloadSpread did not place (none without it).
 */
export function planWorkloadSpread(
  ws: WorkloadSpread,
  target: TargetView,
  targetPods: readonly SpreadPod[],
  now: number,
  nodeOf?: (name: string) => NodeLike | undefined,
): SpreadPlan | undefined {
  const ctx: Ctx = { ws, replicas: target.replicas, clock: { now, events: [] } };
  if (ws.spec.subsets.some((s) => subsetLimit(s, target.replicas) === undefined)) return undefined;
  const adopted = nodeOf ? adoptPods(ws, targetPods, target.replicas, nodeOf) : new Map<string, Adoption>();
  const pods = targetPods.map((p) => {
    const adoption = adopted.get(p.metadata.name);
    return adoption ? withAdoption(p, adoption) : p;
  });
  const versions = groupByVersion(ws, pods);
  const reschedulePods: string[] = [];
  const subsetStatusesNow = subsetStatuses(ctx, groupBySubset(ws, pods), ws.status?.subsetStatuses, reschedulePods);
  if (!subsetStatusesNow) return undefined;
  const status: WorkloadSpreadStatus = {
    ...(ws.status?.conditions ? { conditions: ws.status.conditions } : {}),
    observedGeneration: ws.metadata?.generation ?? 0,
    subsetStatuses: subsetStatusesNow,
    versionedSubsetStatuses: versionedStatuses(ctx, versions),
  };
  const next = ctx.clock.next;
  return {
    status,
    adopted,
    deletionCosts: deletionCosts(ctx, versions, target.latestVersion),
    reschedule: reschedulePods,
    events: ctx.clock.events,
    requeueAfterMs: next === undefined ? undefined : next - now,
  };
}
