/**
 * What a PodUnavailableBudget counts, shared by its controller and the admission check: a pod is
 * available when it is active, Running and Ready and carries no `unavailable-pod.kruise.io/*`
 * label (OpenKruise v1.9's IsPodAvailable for budgets); the budget's numbers follow from the
 * expected replica count and maxUnavailable/minAvailable.
 */
import {
  ANNOTATION_PUB_PROTECT_OPERATIONS,
  ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS,
  LABEL_UNAVAILABLE_POD_PREFIX,
  PUB_DEFAULT_OPERATIONS,
  PUB_OPERATIONS,
  scaledValue,
  type PodUnavailableBudget,
  type PubOperation,
} from '@flotilla/api';
import { isPodActive, isPodReady } from '../../kube/pods.js';
import type { Pod } from '../../kube/types.js';

/** The pod carries a label marking it unavailable. */
export function hasUnavailableLabel(pod: Pick<Pod, 'metadata'>): boolean {
  return Object.keys(pod.metadata.labels ?? {}).some((k) => k.startsWith(LABEL_UNAVAILABLE_POD_PREFIX));
}

/** Active, Running, Ready and not labelled unavailable. */
export function isPodAvailable(pod: Pod): boolean {
  return isPodActive(pod) && pod.status?.phase === 'Running' && isPodReady(pod) && !hasUnavailableLabel(pod);
}

/** The replica count the budget is measured against: the annotation's when set, else `expected`. */
export function budgetedReplicas(pub: PodUnavailableBudget, expected: number): number {
  const override = pub.metadata?.annotations?.[ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS];
  if (override !== undefined && /^[0-9]+$/.test(override)) return Number(override);
  return expected;
}

/**
 * How many pods must stay available: replicas − maxUnavailable (percentages rounded up, never
 * below 0), or minAvailable (percentages rounded up).
 */
export function desiredAvailable(pub: PodUnavailableBudget, replicas: number): number {
  const { maxUnavailable, minAvailable } = pub.spec;
  if (maxUnavailable !== undefined) {
    return Math.max(replicas - (scaledValue(maxUnavailable, replicas, true) ?? 0), 0);
  }
  if (minAvailable !== undefined) return scaledValue(minAvailable, replicas, true) ?? 0;
  return 0;
}

/**
 * The operations the budget guards: its annotation's list, or DELETE, UPDATE and EVICT. Without
 * in-place pod resizing (InPlacePodVerticalScaling off) a guarded UPDATE also guards RESIZE.
 */
export function protectedOperations(pub: PodUnavailableBudget, inPlaceResize: boolean): Set<PubOperation> {
  const text = pub.metadata?.annotations?.[ANNOTATION_PUB_PROTECT_OPERATIONS];
  const listed =
    text === undefined
      ? [...PUB_DEFAULT_OPERATIONS]
      : text
          .split(',')
          .map((s) => s.trim())
          .filter((s): s is PubOperation => (PUB_OPERATIONS as readonly string[]).includes(s));
  const ops = new Set<PubOperation>(listed);
  if (!inPlaceResize && ops.has('UPDATE')) ops.add('RESIZE');
  return ops;
}
