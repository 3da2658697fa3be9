/**
 * The Advanced StatefulSet planner, pure: given the set (defaulted, v1beta1), its pods and
 * claims, and its two revisions, what to create, delete and update in place now. The semantics
 * are OpenKruise v1.9's (pkg/controller/statefulset/stateful_set_control.go), which are apps/v1's
 * plus reserved ordinals, scaleStrategy.maxUnavailable and the rolling update's maxUnavailable,
 * podUpdatePolicy and paused:
 *
 * - the wanted ordinals are the first `replicas` ordinals from 0 that are not reserved; pods on
 *   other ordinals are condemned; a Failed pod is deleted and comes back on the next pass;
 * - OrderedReady creates the lowest missing ordinal once every lower pod is running and ready
 *   for rollingUpdate.minReadySeconds, and deletes condemned pods one at a time, highest first,
 *   once it is available itself (or is the lowest unhealthy one); Parallel creates and deletes
 *   them all, creations limited by scaleStrategy.maxUnavailable;
 * - the revision of a new pod and the order of the rolling update follow the partition and
 *   unorderedUpdate.priorityStrategy (update-order.ts);
 * - pods labelled apps.kruise.io/specified-delete are deleted by the rolling update first (not
 *   held by the partition) and come back at the revision the partition gives them;
 * - the rolling update keeps at most maxUnavailable pods unavailable (not ready for
 *   minReadySeconds, or in an in-place update; an already unavailable pod is updated without
 *   using up the budget); ReCreate deletes the pod, InPlaceIfPossible updates it in place when
 *   only images (and template metadata) changed and deletes it otherwise, InPlaceOnly never
 *   deletes;
 * - the claims follow persistentVolumeClaimRetentionPolicy (claims.ts);
 * - the preDelete and inPlaceUpdate hooks hold pods in PreparingDelete / PreparingUpdate, marking
 *   them not ready when asked (lifecycle.ts);
 * - a pod ready but not yet for minReadySeconds asks for a look again when it will be.
 */
import { CONDITION_INPLACE_UPDATE_READY, reservedOrdinals, scaledValue, type StatefulSet } from '@flotilla/api';
import { isPodReady, podCondition, podReadySince } from '../../kube/pods.js';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.js';
import { calculateInPlaceSpec, type UpdateSpec } from '../cloneset/inplace.js';
import { hasRevision, isRunningAndAvailable, isSpecifiedDelete } from '../cloneset/pods.js';
import { claimOwnerUpdates, claimsToDelete, type ClaimOwnerUpdate } from './claims.js';
import { claimsFor, ordinalOf } from './identity.js';
import { holdByHooks, type Preparation } from './lifecycle.js';
import { newPodRevisions, updateOrder } from './update-order.js';

export interface PlanInput {
  set: StatefulSet;
  /** Pods the set controls. */
  pods: readonly Pod[];
  /** The claims in the set's namespace. */
  claims: readonly PersistentVolumeClaim[];
  currentRevision: string;
  updateRevision: string;
  /** Parsed data of a revision by name (to compute in-place changes). */
  revisionData: (name: string) => unknown;
  now: number;
}

export interface PodCreation {
  ordinal: number;
  revision: string;
}

export interface Plan {
  /** Claims to create before the pods that mount them. */
  createClaims: PersistentVolumeClaim[];
  create: PodCreation[];
  /** Pods to delete: condemned, failed, or replaced by the rolling update. */
  delete: Pod[];
  inPlace: { pod: Pod; spec: UpdateSpec }[];
  /** Pods to move to a lifecycle state first (PreparingDelete, PreparingUpdate), held by a hook. */
  prepare: Preparation[];
  /** Claims of ordinals no longer wanted (whenScaled: Delete), their pod gone. */
  deleteClaims: string[];
  /** Claims whose owner references must follow the retention policy. */
  claimOwners: ClaimOwnerUpdate[];
  /** When a pod ready but not yet for minReadySeconds becomes available (ms from now). */
  availableAfterMs?: number;
}

/** The first `replicas` ordinals from 0 that are not reserved. */
export function wantedOrdinals(set: StatefulSet): number[] {
  const reserved = reservedOrdinals(set.spec.reserveOrdinals);
  const out: number[] = [];
  for (let i = 0; out.length < (set.spec.replicas ?? 1); i++) if (!reserved.has(i)) out.push(i);
  return out;
}

const terminating = (pod: Pod): boolean => pod.metadata.deletionTimestamp !== undefined;
const failed = (pod: Pod): boolean => pod.status?.phase === 'Failed' || pod.status?.phase === 'Succeeded';

/** Running, ready for minReadySeconds, and not in the middle of an in-place update. */
export function isAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (terminating(pod) || !isRunningAndAvailable(pod, minReadySeconds, now)) return false;
  return podCondition(pod, CONDITION_INPLACE_UPDATE_READY)?.status !== 'False';
}

/** Pods by ordinal; pods whose name carries no ordinal of this set are left out. */
function byOrdinal(set: StatefulSet, pods: readonly Pod[]): Map<number, Pod> {
  const out = new Map<number, Pod>();
  for (const pod of pods) {
    const ordinal = ordinalOf(set, pod);
    if (ordinal >= 0) out.set(ordinal, pod);
  }
  return out;
}

function minReadySeconds(set: StatefulSet): number {
  return set.spec.updateStrategy?.rollingUpdate?.minReadySeconds ?? 0;
}

/** An int-or-percent of replicas, rounded up, at least 1. */
function atLeastOne(value: number | string | undefined, replicas: number): number {
  return Math.max(1, scaledValue(value ?? 1, replicas, true) ?? 1);
}

interface Scaling {
  create: PodCreation[];
  delete: Pod[];
}

/** The pods at the wanted positions, undefined where none exists yet. */
function atPositions(wanted: number[], pods: Map<number, Pod>): (Pod | undefined)[] {
  return wanted.map((o) => pods.get(o));
}

function revisionsOfNewPods(input: PlanInput, wanted: number[], pods: Map<number, Pod>): Map<number, string> {
  return newPodRevisions(input.set, atPositions(wanted, pods), input.currentRevision, input.updateRevision);
}

/**
 * OrderedReady: one step at a time, each waiting for every lower pod to be running and ready for
 * minReadySeconds; the highest condemned pod goes once it is available too, unless it is the
 * lowest unhealthy one (processCondemned).
 */
function planOrdered(input: PlanInput, wanted: number[], pods: Map<number, Pod>, condemned: Pod[]): Scaling {
  const minReady = minReadySeconds(input.set);
  const revisions = revisionsOfNewPods(input, wanted, pods);
  for (const [index, ordinal] of wanted.entries()) {
    const pod = pods.get(ordinal);
    if (!pod) return { create: [{ ordinal, revision: revisions.get(index)! }], delete: [] };
    if (failed(pod)) return { create: [], delete: [pod] };
    if (!isRunningAndAvailable(pod, minReady, input.now) || terminating(pod)) return { create: [], delete: [] };
  }
  const victim = condemned[0];
  if (!victim || condemned.some(terminating)) return { create: [], delete: [] };
  const healthy = (p: Pod): boolean => p.status?.phase === 'Running' && isPodReady(p);
  const firstUnhealthy = condemned.findLast((p) => !healthy(p));
  if (!isRunningAndAvailable(victim, minReady, input.now) && victim !== firstUnhealthy) {
    return { create: [], delete: [] };
  }
  return { create: [], delete: [victim] };
}

/** Parallel: every missing pod at once (within scaleStrategy.maxUnavailable), every condemned one. */
function planParallel(input: PlanInput, wanted: number[], pods: Map<number, Pod>, condemned: Pod[]): Scaling {
  const replicas = wanted.length;
  const limitValue = input.set.spec.scaleStrategy?.maxUnavailable;
  const limit = limitValue === undefined ? Infinity : atLeastOne(limitValue, replicas);
  let unavailable = wanted.filter((o) => {
    const pod = pods.get(o);
    return pod !== undefined && !isAvailable(pod, minReadySeconds(input.set), input.now);
  }).length;
  const create: PodCreation[] = [];
  const del: Pod[] = [];
  const revisions = revisionsOfNewPods(input, wanted, pods);
  for (const [index, ordinal] of wanted.entries()) {
    const pod = pods.get(ordinal);
    if (pod && failed(pod) && !terminating(pod)) del.push(pod);
    if (pod || unavailable >= limit) continue;
    create.push({ ordinal, revision: revisions.get(index)! });
    unavailable++;
  }
  return { create, delete: [...del, ...condemned.filter((p) => !terminating(p))] };
}

type UpdateStep = { kind: 'delete'; pod: Pod } | { kind: 'inPlace'; pod: Pod; spec: UpdateSpec };

/** How one outdated pod moves to the update revision; undefined when it cannot (InPlaceOnly). */
function updateStep(input: PlanInput, pod: Pod): UpdateStep | undefined {
  const rolling = input.set.spec.updateStrategy?.rollingUpdate;
  const policy = rolling?.podUpdatePolicy ?? 'ReCreate';
  if (policy === 'ReCreate') return { kind: 'delete', pod };
  const own = pod.metadata.labels?.['controller-revision-hash'] ?? '';
  const spec = calculateInPlaceSpec(
    input.revisionData(own),
    input.revisionData(input.updateRevision),
    input.updateRevision,
    rolling?.inPlaceUpdateStrategy?.gracePeriodSeconds ?? 0,
  );
  if (spec) return { kind: 'inPlace', pod, spec };
  return policy === 'InPlaceIfPossible' ? { kind: 'delete', pod } : undefined;
}

/** maxUnavailable of the rolling update: 1 for OrderedReady, at least 1 for Parallel. */
function updateMaxUnavailable(set: StatefulSet, replicas: number): number {
  if (set.spec.podManagementPolicy !== 'Parallel') return 1;
  return atLeastOne(set.spec.updateStrategy?.rollingUpdate?.maxUnavailable, replicas);
}

/**
 * Pods labelled specified-delete, highest ordinal first, whatever the partition: an available one
 * waits while the budget is used up (handleSpecifiedDeletedPods). Resolves them and the budget left.
 */
function specifiedDeletes(
  wanted: number[],
  pods: Map<number, Pod>,
  available: (ordinal: number) => boolean,
  budget: number,
): { specified: Set<Pod>; budget: number } {
  const specified = new Set<Pod>();
  for (const ordinal of [...wanted].reverse()) {
    const pod = pods.get(ordinal);
    if (!pod || !isSpecifiedDelete(pod, undefined)) continue;
    const free = !available(ordinal);
    if (!free && budget <= 0) continue;
    specified.add(pod);
    if (!free) budget--;
  }
  return { specified, budget };
}

/** The rolling update: outdated pods in update order (update-order.ts) within maxUnavailable. */
function planUpdate(input: PlanInput, wanted: number[], pods: Map<number, Pod>): UpdateStep[] {
  const strategy = input.set.spec.updateStrategy;
  if (strategy?.type !== 'RollingUpdate' || strategy.rollingUpdate?.paused) return [];
  const available = (o: number): boolean => {
    const pod = pods.get(o);
    return pod !== undefined && isAvailable(pod, minReadySeconds(input.set), input.now);
  };
  const initial = updateMaxUnavailable(input.set, wanted.length) - wanted.filter((o) => !available(o)).length;
  const { specified, budget: left } = specifiedDeletes(wanted, pods, available, initial);
  let budget = left;
  const steps: UpdateStep[] = [...specified].filter((p) => !terminating(p)).map((pod) => ({ kind: 'delete', pod }));
  for (const index of updateOrder(input.set, atPositions(wanted, pods), input.updateRevision)) {
    const ordinal = wanted[index]!;
    const pod = pods.get(ordinal)!;
    if (specified.has(pod) || terminating(pod) || hasRevision(pod, input.updateRevision)) continue;
    const free = !available(ordinal);
    if (!free && budget <= 0) break;
    const step = updateStep(input, pod);
    if (!step) continue;
    steps.push(step);
    if (!free) budget--;
  }
  return steps;
}

/**
 * The soonest a pod that is running and ready, but not yet for minReadySeconds, becomes
 * available; undefined when none waits.
 */
export function availableAfterMs(pods: readonly Pod[], minReadySeconds: number, now: number): number | undefined {
  if (minReadySeconds <= 0) return undefined;
  let soonest: number | undefined;
  for (const pod of pods) {
    const since = podReadySince(pod);
    if (terminating(pod) || pod.status?.phase !== 'Running' || !isPodReady(pod) || since === undefined) continue;
    const left = since + minReadySeconds * 1000 - now;
    if (left > 0) soonest = Math.min(soonest ?? Infinity, left);
  }
  return soonest;
}

/** Everything the set needs done now. */
export function planStatefulSet(input: PlanInput): Plan {
  const wanted = wantedOrdinals(input.set);
  const wantedSet = new Set(wanted);
  const pods = byOrdinal(input.set, input.pods);
  const condemned = [...pods.entries()]
    .filter(([o]) => !wantedSet.has(o))
    .sort(([a], [b]) => b - a)
    .map(([, p]) => p);
  const parallel = input.set.spec.podManagementPolicy === 'Parallel';
  const scaling = parallel ? planParallel(input, wanted, pods, condemned) : planOrdered(input, wanted, pods, condemned);
  const busy = scaling.create.length > 0 || scaling.delete.length > 0;
  // OrderedReady updates only once scaling is done; Parallel does both in one pass.
  const updates = busy && !parallel ? [] : planUpdate(input, wanted, pods);
  const deleting = new Set(scaling.delete.map((p) => p.metadata.name));
  const toDelete = [
    ...scaling.delete,
    ...updates.filter((u) => u.kind === 'delete' && !deleting.has(u.pod.metadata.name)).map((u) => u.pod),
  ];
  const inPlace = updates.flatMap((u) => (u.kind === 'inPlace' ? [{ pod: u.pod, spec: u.spec }] : []));
  const held = holdByHooks(input.set.spec.lifecycle, toDelete, inPlace, input.now);
  const existing = new Set(input.claims.map((c) => c.metadata.name));
  const createClaims = scaling.create.flatMap(({ ordinal }) =>
    claimsFor(input.set, ordinal).filter((c) => !existing.has(c.metadata.name)),
  );
  return {
    createClaims,
    create: scaling.create,
    delete: held.delete,
    inPlace: held.inPlace,
    prepare: held.prepare,
    deleteClaims: claimsToDelete(input.set, input.claims, wantedSet, pods),
    claimOwners: claimOwnerUpdates(input.set, input.claims, wantedSet, pods),
    availableAfterMs: availableAfterMs(input.pods, minReadySeconds(input.set), input.now),
  };
}
