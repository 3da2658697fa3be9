/**
 * OpenKruise v1.9's PodUnavailableBudget admission, decided purely
 * (pkg/webhook/pod/validating/pod_unavailable_budget.go, pkg/control/pubcontrol; facts only):
 * which operation a pod request is, and whether the budget lets it through.
 *
 * - DELETE of a pod → DELETE; CREATE of `pods/eviction` → EVICT (both under the delete gate);
 *   UPDATE of an annotated pod whose spec changed or that gained an `unavailable-pod.kruise.io/*`
 *   label → RESIZE when only cpu/memory of existing containers change in place, else UPDATE
 *   (under the update gate).
 * - Let through untouched: `pub.kruise.io/no-protect`, a pod that is not available anyway, a
 *   budget keeping nothing available, an operation the budget does not guard, a pod already
 *   recorded.
 * - Otherwise the budget pays for it: unavailableAllowed − 1 and the pod recorded (UPDATE in
 *   unavailablePods, the rest in disruptedPods), or a refusal when nothing is left.
 */
import {
  ANNOTATION_PUB_NO_PROTECT,
  ANNOTATION_RELATED_PUB,
  LABEL_UNAVAILABLE_POD_PREFIX,
  type PodUnavailableBudget,
  type PodUnavailableBudgetStatus,
  type PubOperation,
} from '@flotilla/api';
import { isPodAvailable, protectedOperations } from './availability.js';
import type { Pod } from '../../kube/types.js';

/** OpenKruise's gates for it (PodUnavailableBudgetDeleteGate on, PodUnavailableBudgetUpdateGate off). */
export interface PubGates {
  deleteGate: boolean;
  updateGate: boolean;
  /** InPlacePodVerticalScaling: pods resize in place, so a guarded UPDATE does not imply RESIZE. */
  inPlaceResize: boolean;
}

/** Records beyond this many mean the controller is not keeping up: refuse rather than grow the object. */
export const MAX_RECORDS = 2000;

export const PUB_DENIAL_EVENT = { reason: 'PubPreventPodDeletion', message: 'openkruise pub prevents pod deletion' };

export type PubDecision =
  | { action: 'allow' }
  | { action: 'deny'; message: string }
  /** Allowed, once this status is written. */
  | { action: 'take'; status: PodUnavailableBudgetStatus };

const forbidden = (pub: string, why: string): string =>
  `podunavailablebudget.policy.kruise.io "${pub}" is forbidden: ${why}`;

/** The budget a pod is bound to (only through the annotation, as OpenKruise finds it). */
export function relatedPub(pod: Pick<Pod, 'metadata'> | undefined): string | undefined {
  return pod?.metadata.annotations?.[ANNOTATION_RELATED_PUB] || undefined;
}

/** Whether the budget's status already records the pod (an admission paid for it). */
export function isRecorded(status: PodUnavailableBudgetStatus | undefined, podName: string): boolean {
  return podName in (status?.disruptedPods ?? {}) || podName in (status?.unavailablePods ?? {});
}

/** Whether the request could concern a budget before anything is read: the pod must be bound and protected. */
export function mayConcernBudget(pod: Pick<Pod, 'metadata'> | undefined): boolean {
  return !!relatedPub(pod) && pod?.metadata.annotations?.[ANNOTATION_PUB_NO_PROTECT] !== 'true';
}

type Resources = Record<string, unknown> | undefined;
interface ContainerLike {
  name: string;
  resources?: { requests?: Resources; limits?: Resources };
  resizePolicy?: { resourceName: string; restartPolicy?: string }[];
  [field: string]: unknown;
}

const containersOf = (pod: Pod): ContainerLike[] => pod.spec?.containers ?? [];

function specWithoutResources(pod: Pod): string {
  const strip = (c: ContainerLike): ContainerLike => ({ ...c, resources: undefined });
  return JSON.stringify({
    ...pod.spec,
    containers: containersOf(pod).map(strip),
    initContainers: ((pod.spec?.initContainers ?? []) as ContainerLike[]).map(strip),
  });
}

function qosClass(pod: Pod): string {
  const cs = [...containersOf(pod), ...((pod.spec?.initContainers ?? []) as ContainerLike[])];
  const req = cs.map((c) => c.resources?.requests ?? {});
  const lim = cs.map((c) => c.resources?.limits ?? {});
  if (req.every((r) => Object.keys(r).length === 0) && lim.every((l) => Object.keys(l).length === 0)) {
    return 'BestEffort';
  }
  const guaranteed = cs.every((c) =>
    ['cpu', 'memory'].every((r) => {
      const l = c.resources?.limits?.[r];
      const q = c.resources?.requests?.[r] ?? l;
      return l !== undefined && JSON.stringify(l) === JSON.stringify(q);
    }),
  );
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** Every resource that changed is cpu or memory, resizable without a restart. */
function resizableChanges(oldC: ContainerLike, newC: ContainerLike): boolean {
  for (const part of ['requests', 'limits'] as const) {
    const before = oldC.resources?.[part] ?? {};
    const after = newC.resources?.[part] ?? {};
    for (const name of new Set([...Object.keys(before), ...Object.keys(after)])) {
      if (JSON.stringify(before[name]) === JSON.stringify(after[name])) continue;
      if (name !== 'cpu' && name !== 'memory') return false;
      const policy = newC.resizePolicy?.find((p) => p.resourceName === name)?.restartPolicy;
      if (policy && policy !== 'NotRequired') return false;
    }
  }
  return true;
}

/** OpenKruise's CanResizeInplace: only cpu/memory of the same containers, same QoS, nothing else changed. */
export function canResizeInPlace(oldPod: Pod, newPod: Pod): boolean {
  if (addsUnavailableLabel(oldPod, newPod)) return false;
  if (oldPod.metadata.annotations?.['kubernetes.io/config.mirror']) return false;
  if (specWithoutResources(oldPod) !== specWithoutResources(newPod)) return false;
  if (qosClass(oldPod) !== qosClass(newPod)) return false;
  const before = containersOf(oldPod);
  const after = containersOf(newPod);
  if (before.length !== after.length) return false;
  return before.every((c, i) => after[i]!.name === c.name && resizableChanges(c, after[i]!));
}

function addsUnavailableLabel(oldPod: Pod, newPod: Pod): boolean {
  const had = oldPod.metadata.labels ?? {};
  return Object.keys(newPod.metadata.labels ?? {}).some(
    (k) => k.startsWith(LABEL_UNAVAILABLE_POD_PREFIX) && !(k in had),
  );
}

/** The operation an UPDATE of a pod is, or undefined when it takes nothing away (metadata, status). */
export function updateOperation(oldPod: Pod, newPod: Pod): PubOperation | undefined {
  if (!relatedPub(newPod)) return undefined;
  const specChanged = JSON.stringify(oldPod.spec) !== JSON.stringify(newPod.spec);
  if (!specChanged && !addsUnavailableLabel(oldPod, newPod)) return undefined;
  return canResizeInPlace(oldPod, newPod) ? 'RESIZE' : 'UPDATE';
}

/** The operation leaves the budget alone: unprotected or unavailable pod, nothing kept, not guarded, recorded. */
function costsNothing(
  pod: Pod,
  pub: PodUnavailableBudget,
  status: PodUnavailableBudgetStatus,
  operation: PubOperation,
  inPlaceResize: boolean,
): boolean {
  const name = pod.metadata.name;
  return (
    pod.metadata.annotations?.[ANNOTATION_PUB_NO_PROTECT] === 'true' ||
    !isPodAvailable(pod) ||
    status.desiredAvailable === 0 ||
    !protectedOperations(pub, inPlaceResize).has(operation) ||
    isRecorded(status, name)
  );
}

/** Whether the budget lets `operation` on `pod` through, and what it costs. */
export function decidePub(
  pod: Pod,
  pub: PodUnavailableBudget,
  operation: PubOperation,
  inPlaceResize: boolean,
  nowIso: string,
): PubDecision {
  const status = pub.status;
  const name = pod.metadata.name;
  if (!status || costsNothing(pod, pub, status, operation, inPlaceResize)) return { action: 'allow' };
  const pubName = pub.metadata?.name ?? '';
  if (status.unavailableAllowed <= 0) {
    return { action: 'deny', message: forbidden(pubName, 'pub unavailable allowed is negative') };
  }
  const records = Object.keys(status.disruptedPods ?? {}).length + Object.keys(status.unavailablePods ?? {}).length;
  if (records > MAX_RECORDS) {
    return {
      action: 'deny',
      message: forbidden(
        pubName,
        'DisruptedPods and UnavailablePods map too big - too many unavailable not confirmed by PUB controller',
      ),
    };
  }
  const field = operation === 'UPDATE' ? 'unavailablePods' : 'disruptedPods';
  return {
    action: 'take',
    status: {
      ...status,
      unavailableAllowed: status.unavailableAllowed - 1,
      [field]: { ...status[field], [name]: nowIso },
    },
  };
}

/** What a batch of operations on one budget comes to, in order: each decision, and the status after the takes. */
export interface BatchDecision {
  decisions: PubDecision[];
  status: PodUnavailableBudgetStatus | undefined;
}

/**
 * Decides operations one after another, each against the status the takes before it left (a dry
 * run decides but takes nothing), as if they had been admitted one at a time. A repeat of an
 * operation on a pod the batch already took for is a take that costs nothing more: it stands or
 * falls with the write that stores the pod's record.
 */
export function decideBatch(
  pub: PodUnavailableBudget,
  operations: readonly { pod: Pod; query: { operation: PubOperation; dryRun: boolean } }[],
  inPlaceResize: boolean,
  nowIso: string,
): BatchDecision {
  let current = pub;
  const taken = new Set<string>();
  const decisions = operations.map(({ pod, query }): PubDecision => {
    if (taken.has(pod.metadata.name) && current.status) return { action: 'take', status: current.status };
    const decision = decidePub(pod, current, query.operation, inPlaceResize, nowIso);
    if (decision.action === 'take' && !query.dryRun) {
      current = { ...current, status: decision.status };
      taken.add(pod.metadata.name);
    }
    return decision;
  });
  return { decisions, status: current.status };
}
