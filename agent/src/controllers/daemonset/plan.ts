/**
 * The Advanced DaemonSet planner, pure: from the set (defaulted, v1beta1), the nodes, its pods and
 * the update revision's hash, what to do now and the status to report. It follows OpenKruise
 * v1.9's syncDaemonSet (pkg/controller/daemonset):
 *
 * 1. manage: every node that should run the pod and has none gets one (with a partition and
 *    partitionedScaling, only `desired − updated − partition` name-sorted nodes); failed and
 *    PreparingDelete pods are deleted; without surge a node keeps only its oldest pod, with surge
 *    its oldest new and oldest old pod until the new one is available; pods on nodes that may
 *    not keep them, and unscheduled pods of vanished nodes, are deleted.
 * 2. rolling update (RollingUpdate, not paused), only when manage has nothing to do this round:
 *    nodes in reverse name order — updated, then updating, then selector-matched (with a
 *    selector) or all others — cut to `nodes − partition`; then, without surge, old pods are
 *    replaced while at most maxUnavailable nodes are unavailable (unavailable old pods always);
 *    with surge, a new pod starts next to an old one on at most maxSurge nodes and the old pod
 *    goes once the new one is available.
 * 3. status: desired/current/misscheduled/ready/available/unavailable/updated counted per node
 *    on its oldest pod, observedGeneration, updateRevision.
 *
 * Deleting means "to delete": the controller holds back pods a preDelete hook still holds, and
 * tries an in-place update first for replacements under InPlaceIfPossible.
 */
import {
  CONDITION_INPLACE_UPDATE_READY,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
  LABEL_POD_TEMPLATE_GENERATION,
  LifecycleState,
  scaledValue,
  type DaemonSetV1beta1,
  type DaemonSetV1beta1Status,
} from '@flotilla/api';
import type { NodeLike } from '../../kube/node-fit.js';
import { creationTime, isPodReady, podCondition, podReadySince } from '../../kube/pods.js';
import type { Pod } from '../../kube/types.js';
import { labelSelectorMatcher } from '../../runtime/label-selector.js';
import { assignedNode } from '../../kube/node-pods.js';
import { nodePlacement, templateGeneration } from './daemon-pod.js';

export interface DaemonSetPlanInput {
  /** The set, defaulted. */
  ds: DaemonSetV1beta1;
  nodes: readonly NodeLike[];
  /** The set's pods, deleting ones included. */
  pods: readonly Pod[];
  /** The update revision's hash (its controller-revision-hash label). */
  hash: string;
  nowMs: number;
}

export interface DaemonSetPlan {
  /** Nodes to start a new pod on, in order. */
  create: string[];
  /** Pods to delete (subject to the preDelete hook). */
  delete: Pod[];
  /** Old pods to replace by the rolling update: in place when possible, else deleted. */
  replace: Pod[];
  status: DaemonSetV1beta1Status;
  /** When to look again (a pod becoming available after minReadySeconds). */
  requeueAfterMs?: number;
}

const nameOf = (n: NodeLike): string => n.metadata?.name ?? '';
const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** podutil.IsPodAvailable: Ready for at least minReadySeconds. */
export function isAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const since = podReadySince(pod);
  return since !== undefined && since + minReadySeconds * 1000 <= nowMs;
}

/** isDaemonPodAvailable: available, and InPlaceUpdateReady not False where the gate is. */
function isDaemonPodAvailable(pod: Pod, minReadySeconds: number, nowMs: number): boolean {
  if (!isAvailable(pod, minReadySeconds, nowMs)) return false;
  const gated = (pod.spec.readinessGates ?? []).some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY);
  const condition = podCondition(pod, CONDITION_INPLACE_UPDATE_READY);
  return !gated || condition === undefined || condition.status === 'True';
}

/** Scheduled pods first, then the oldest, then by name (podByCreationTimestampAndPhase). */
export function oldestFirst(a: Pod, b: Pod): number {
  const sa = Boolean(a.spec.nodeName);
  if (sa !== Boolean(b.spec.nodeName)) return sa ? -1 : 1;
  const ta = creationTime(a) ?? 0;
  const tb = creationTime(b) ?? 0;
  if (ta !== tb) return ta - tb;
  return compareNames(a.metadata.name, b.metadata.name);
}

const isPreDeleting = (pod: Pod | undefined): boolean =>
  pod?.metadata.labels?.[LABEL_LIFECYCLE_STATE] === LifecycleState.PreparingDelete;
const isNilOrPreDeleting = (pod: Pod | undefined): boolean => pod === undefined || isPreDeleting(pod);

/** util.IsPodUpdated: the pod carries the hash, or the set's template generation. */
export function isPodUpdated(pod: Pod, hash: string, generation: string | undefined): boolean {
  const labels = pod.metadata.labels ?? {};
  if (hash !== '' && labels[LABEL_CONTROLLER_REVISION_HASH] === hash) return true;
  return generation !== undefined && labels[LABEL_POD_TEMPLATE_GENERATION] === generation;
}

interface NodePods {
  newPod?: Pod;
  oldPod?: Pod;
  /** False when the node has more than one new or old pod: manage prunes them first. */
  ok: boolean;
}

/** findUpdatedPodsOnNode over the node's pods that are not being deleted. */
function splitNodePods(pods: readonly Pod[], hash: string, generation: string | undefined): NodePods {
  const out: NodePods = { ok: true };
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const key = isPodUpdated(pod, hash, generation) ? 'newPod' : 'oldPod';
    if (out[key]) return { ok: false };
    out[key] = pod;
  }
  return out;
}

function rollingUpdateOf(ds: DaemonSetV1beta1) {
  return ds.spec.updateStrategy?.type === 'RollingUpdate' ? ds.spec.updateStrategy.rollingUpdate : undefined;
}

/** maxSurge and maxUnavailable against the desired nodes; both 0 means maxUnavailable 1. */
export function updateLimits(ds: DaemonSetV1beta1, desired: number): { maxSurge: number; maxUnavailable: number } {
  const rolling = rollingUpdateOf(ds);
  const maxSurge = rolling?.maxSurge === undefined ? 0 : (scaledValue(rolling.maxSurge, desired, true) ?? 0);
  let maxUnavailable =
    rolling?.maxUnavailable === undefined ? 0 : (scaledValue(rolling.maxUnavailable, desired, true) ?? 0);
  if (desired > 0 && maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  return { maxSurge, maxUnavailable };
}

/** The partition against `desired` (status.desiredNumberScheduled), rounded down. */
export function partitionOf(ds: DaemonSetV1beta1, desired: number): number {
  const partition = rollingUpdateOf(ds)?.partition;
  return partition === undefined ? 0 : Math.max(0, scaledValue(partition, desired, false) ?? 0);
}

interface Context {
  ds: DaemonSetV1beta1;
  hash: string;
  generation: string | undefined;
  nowMs: number;
  minReady: number;
  surge: boolean;
  byNode: Map<string, Pod[]>;
  nodes: readonly NodeLike[];
  /** Waits (ms) until a surged new pod becomes available and its old pod may go; filled by surgePrune. */
  surgeWaitsMs: number[];
}

/** Nothing else wakes the set when a ready new pod's minReadySeconds are over: look again then. */
function waitForAvailable(c: Context, pod: Pod): void {
  if (!isPodReady(pod) || c.minReady <= 0) return;
  const since = podReadySince(pod) ?? c.nowMs;
  c.surgeWaitsMs.push(Math.max(since + c.minReady * 1000 - c.nowMs, 1000));
}

/** With surge: keep the oldest new and oldest old pod until the new one is available; delete the rest. */
function surgePrune(c: Context, running: readonly Pod[]): Pod[] {
  const remove: Pod[] = [];
  let oldestNew: Pod | undefined;
  let oldestOld: Pod | undefined;
  for (const pod of running) {
    const isNew = pod.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH] === c.hash;
    if (isNew && !oldestNew) oldestNew = pod;
    else if (!isNew && !oldestOld) oldestOld = pod;
    else remove.push(pod);
  }
  if (oldestNew && oldestOld && (!isPodReady(oldestOld) || isAvailable(oldestNew, c.minReady, c.nowMs))) {
    remove.push(oldestOld);
  } else if (oldestNew && oldestOld) {
    waitForAvailable(c, oldestNew);
  }
  return remove;
}

/** podsShouldBeOnNode for one node: whether it needs a pod, and the pods to delete. */
function planNode(c: Context, node: NodeLike): { create: boolean; delete: Pod[] } {
  const { shouldRun, shouldContinueRunning } = nodePlacement(c.ds, node);
  const pods = c.byNode.get(nameOf(node));
  if (shouldRun && pods === undefined) return { create: true, delete: [] };
  const live = (pods ?? []).filter((p) => !p.metadata.deletionTimestamp);
  if (!shouldContinueRunning) return { create: false, delete: live };
  const remove = live.filter((p) => p.status?.phase === 'Failed' || isPreDeleting(p));
  const running = live.filter((p) => !remove.includes(p)).sort(oldestFirst);
  if (!c.surge) return { create: false, delete: [...remove, ...running.slice(1)] };
  if (running.length <= 1) return { create: running.length === 0 && shouldRun, delete: remove };
  return { create: false, delete: [...remove, ...surgePrune(c, running)] };
}

/** manage: the creations and deletions that bring each node to its one pod. */
function planManage(c: Context, statusDesired: number): { create: string[]; delete: Pod[] } {
  let create: string[] = [];
  const remove: Pod[] = [];
  let desired = 0;
  let newPods = 0;
  for (const node of c.nodes) {
    const step = planNode(c, node);
    if (step.create) create.push(nameOf(node));
    remove.push(...step.delete);
    if (nodePlacement(c.ds, node).shouldRun) desired++;
    const split = splitNodePods(c.byNode.get(nameOf(node)) ?? [], c.hash, c.generation);
    if (split.ok && split.newPod) newPods++;
  }
  const known = new Set(c.nodes.map(nameOf));
  for (const [node, pods] of c.byNode) {
    if (!known.has(node)) remove.push(...pods.filter((p) => !p.spec.nodeName && !p.metadata.deletionTimestamp));
  }
  const partition = partitionOf(c.ds, statusDesired);
  create.sort(compareNames);
  if (rollingUpdateOf(c.ds) && partition !== 0 && c.ds.spec.scaleStrategy?.partitionedScaling) {
    const kept = Math.min(Math.max(partition, 0), desired);
    create = create.slice(0, Math.max(desired - newPods - kept, 0));
  }
  return { create, delete: remove };
}

/** filterDaemonPodsNodeToUpdate: the nodes the rolling update may touch, in its order. */
export function nodesToUpdate(c: Context, desiredForPartition: number): string[] {
  const rolling = rollingUpdateOf(c.ds);
  const selector = rolling?.selector ? labelSelectorMatcher(rolling.selector) : undefined;
  const labelsOf = new Map(c.nodes.map((n) => [nameOf(n), n.metadata?.labels ?? {}]));
  const names = [...c.byNode.keys()]
    .filter((n) => labelsOf.has(n))
    .sort(compareNames)
    .reverse();
  const updated: string[] = [];
  const updating: string[] = [];
  const selected: string[] = [];
  const rest: string[] = [];
  for (const name of names) {
    const split = splitNodePods(c.byNode.get(name) ?? [], c.hash, c.generation);
    if (!split.ok || split.newPod) updated.push(name);
    else if (isNilOrPreDeleting(split.oldPod)) updating.push(name);
    else if (selector?.(labelsOf.get(name))) selected.push(name);
    else rest.push(name);
  }
  const sorted = [...updated, ...updating, ...(selector ? selected : rest)];
  const maxUpdate = names.length - partitionOf(c.ds, desiredForPartition);
  return maxUpdate <= 0 ? [] : sorted.slice(0, maxUpdate);
}

/** The context with every node that should run the pod listed, pods or not (updatedDesiredNodeCounts). */
function withDesiredNodes(c: Context): Context {
  const byNode = new Map(c.byNode);
  for (const node of c.nodes) {
    if (!byNode.has(nameOf(node)) && nodePlacement(c.ds, node).shouldRun) byNode.set(nameOf(node), []);
  }
  return { ...c, byNode };
}

interface Replacements {
  create: string[];
  delete: Pod[];
  replace: Pod[];
}

/** Without surge: old pods replaced while at most maxUnavailable nodes are unavailable. */
function planUnavailable(c: Context, nodes: readonly string[], maxUnavailable: number): Replacements {
  let unavailable = 0;
  const allowed: Pod[] = [];
  const candidates: Pod[] = [];
  for (const node of nodes) {
    const { newPod, oldPod, ok } = splitNodePods(c.byNode.get(node) ?? [], c.hash, c.generation);
    if (!ok || isNilOrPreDeleting(oldPod) === isNilOrPreDeleting(newPod)) {
      unavailable++;
    } else if (newPod) {
      if (!isAvailable(newPod, c.minReady, c.nowMs)) unavailable++;
      if (isPreDeleting(newPod)) unavailable++;
    } else if (!isAvailable(oldPod!, c.minReady, c.nowMs)) {
      allowed.push(oldPod!);
    } else if (unavailable < maxUnavailable) {
      candidates.push(oldPod!);
    }
  }
  const room = Math.min(Math.max(maxUnavailable - unavailable, 0), candidates.length);
  return { create: [], delete: [], replace: [...allowed, ...candidates.slice(0, room)] };
}

/** With surge: a new pod next to an old one on at most maxSurge nodes; the old one goes when the new is available. */
function planSurge(c: Context, nodes: readonly string[], maxSurge: number): Replacements {
  let surging = 0;
  const remove: Pod[] = [];
  const allowedNodes: string[] = [];
  const candidateNodes: string[] = [];
  for (const node of nodes) {
    const { newPod, oldPod, ok } = splitNodePods(c.byNode.get(node) ?? [], c.hash, c.generation);
    if (!ok) surging++;
    else if (isNilOrPreDeleting(oldPod)) continue;
    else if (!newPod) {
      if (!isAvailable(oldPod!, c.minReady, c.nowMs)) allowedNodes.push(node);
      else if (surging < maxSurge) candidateNodes.push(node);
    } else if (!isAvailable(newPod, c.minReady, c.nowMs) || isPreDeleting(newPod)) surging++;
    else remove.push(oldPod!);
  }
  const room = Math.min(Math.max(maxSurge - surging, 0), candidateNodes.length);
  return { create: [...allowedNodes, ...candidateNodes.slice(0, room)], delete: remove, replace: [] };
}

/** The rolling update over the nodes it may touch. */
function planRollingUpdate(c: Context, desired: number, statusDesired: number): Replacements {
  const { maxSurge, maxUnavailable } = updateLimits(c.ds, desired);
  const nodes = nodesToUpdate(withDesiredNodes(c), statusDesired);
  return maxSurge === 0 ? planUnavailable(c, nodes, maxUnavailable) : planSurge(c, nodes, maxSurge);
}

interface Counts {
  desired: number;
  current: number;
  misscheduled: number;
  ready: number;
  available: number;
  updated: number;
  requeueAfterMs?: number;
}

/** Adds one node that should run the pod, judged on its oldest pod. */
function countNode(c: Context, counts: Counts, pods: readonly Pod[]): void {
  counts.desired++;
  const pod = pods[0];
  if (!pod) return;
  counts.current++;
  if (isPodUpdated(pod, c.hash, c.generation)) counts.updated++;
  if (!isPodReady(pod)) return;
  counts.ready++;
  if (isDaemonPodAvailable(pod, c.minReady, c.nowMs)) {
    counts.available++;
  } else if (c.minReady > 0) {
    const wait = (podReadySince(pod) ?? c.nowMs) + c.minReady * 1000 - c.nowMs;
    counts.requeueAfterMs = Math.min(counts.requeueAfterMs ?? Infinity, Math.max(wait, 1000));
  }
}

/** updateDaemonSetStatus's counts, on each node's oldest pod. */
function planStatus(c: Context): { status: DaemonSetV1beta1Status; requeueAfterMs?: number } {
  const counts: Counts = { desired: 0, current: 0, misscheduled: 0, ready: 0, available: 0, updated: 0 };
  for (const node of c.nodes) {
    const pods = [...(c.byNode.get(nameOf(node)) ?? [])].sort(oldestFirst);
    if (nodePlacement(c.ds, node).shouldRun) countNode(c, counts, pods);
    else if (pods.length > 0) counts.misscheduled++;
  }
  const previous = c.ds.status;
  const status: DaemonSetV1beta1Status = {
    ...previous,
    currentNumberScheduled: counts.current,
    numberMisscheduled: counts.misscheduled,
    desiredNumberScheduled: counts.desired,
    numberReady: counts.ready,
    observedGeneration: c.ds.metadata?.generation ?? previous?.observedGeneration,
    updatedNumberScheduled: counts.updated,
    numberAvailable: counts.available,
    numberUnavailable: counts.desired - counts.available,
    updateRevision: c.hash,
  };
  return counts.requeueAfterMs === undefined ? { status } : { status, requeueAfterMs: counts.requeueAfterMs };
}

/** The whole plan for one reconcile. */
export function planDaemonSet(input: DaemonSetPlanInput): DaemonSetPlan {
  const byNode = new Map<string, Pod[]>();
  for (const pod of input.pods) {
    const node = assignedNode(pod);
    if (node === '') continue;
    byNode.set(node, [...(byNode.get(node) ?? []), pod]);
  }
  const c: Context = {
    ds: input.ds,
    hash: input.hash,
    generation: templateGeneration(input.ds),
    nowMs: input.nowMs,
    minReady: input.ds.spec.minReadySeconds ?? 0,
    surge: false,
    byNode,
    nodes: input.nodes,
    surgeWaitsMs: [],
  };
  const desired = input.nodes.filter((n) => nodePlacement(input.ds, n).shouldRun).length;
  c.surge = updateLimits(input.ds, 1).maxSurge > 0 && rollingUpdateOf(input.ds) !== undefined;
  const { status, requeueAfterMs } = planStatus(c);
  const statusDesired = input.ds.status?.desiredNumberScheduled ?? 0;
  const manage = planManage(c, statusDesired);
  const waits = [requeueAfterMs, ...c.surgeWaitsMs].filter((w): w is number => w !== undefined);
  const requeue = waits.length > 0 ? { requeueAfterMs: Math.min(...waits) } : {};
  const plan: DaemonSetPlan = { ...manage, replace: [], status, ...requeue };
  if (manage.create.length > 0 || manage.delete.length > 0) return plan;
  if (!rollingUpdateOf(input.ds) || rollingUpdateOf(input.ds)?.paused) return plan;
  const rolling = planRollingUpdate(c, desired, statusDesired);
  return { ...plan, ...rolling };
}
