/**
 * The order in which scale-in deletes pods (OpenKruise utils/pod_sorter.go, after k8s
 * ActivePodsWithRanks). Pods that are cheaper to lose come first:
 *
 * 1. unassigned before assigned;
 * 2. Pending < Unknown < Running;
 * 3. unavailable before available, then not-ready before ready;
 * 4. lower `controller.kubernetes.io/pod-deletion-cost` first (invalid counts as 0);
 * 5. higher rank first: siblings crowded on one node, or on one topology domain when the
 *    template has topologySpreadConstraints;
 * 6. ready for the shortest time first;
 * 7. more container restarts first;
 * 8. newer first (no creation time counts as newest).
 */
import { byAge, byAssignmentAndPhase, byReadiness } from '../../kube/pod-order.js';
import { deletionCost } from './pods.js';
import type { Pod } from '../../kube/types.js';

const HOSTNAME_KEY = 'kubernetes.io/hostname';

/** Ranks pods: higher ranks are deleted first among otherwise equal pods. */
export type Ranker = (pod: Pod) => number;

export interface SortOptions {
  ranker?: Ranker;
  /** The CloneSet's availability test (minReadySeconds and lifecycle state). */
  isAvailable?: (pod: Pod) => boolean;
}

/** Negative when `a` should be deleted before `b`. */
export function compareForDeletion(a: Pod, b: Pod, options: SortOptions = {}): number {
  const placement = byAssignmentAndPhase(a, b);
  if (placement !== 0) return placement;
  const readiness = byReadiness(a, b, options.isAvailable);
  if (readiness !== 0) return readiness;
  const cost = deletionCost(a) - deletionCost(b);
  if (cost !== 0) return cost;
  if (options.ranker) {
    const rank = options.ranker(b) - options.ranker(a);
    if (rank !== 0) return rank;
  }
  return byAge(a, b);
}

/** A sorted copy of `pods`, the first to delete first. */
export function sortForDeletion(pods: readonly Pod[], options: SortOptions = {}): Pod[] {
  return [...pods].sort((a, b) => compareForDeletion(a, b, options));
}

function podsByNode(pods: readonly Pod[]): Map<string, Pod[]> {
  const byNode = new Map<string, Pod[]>();
  for (const pod of pods) {
    const node = pod.spec.nodeName;
    if (!node) continue;
    byNode.set(node, [...(byNode.get(node) ?? []), pod]);
  }
  return byNode;
}

/**
 * Ranks pods by how crowded their node is: on each node with several of the pods, all but the
 * best one get a rank, the worst the highest. Deleting them first spreads the rest out.
 */
export function sameNodeRanker(pods: readonly Pod[]): Ranker {
  const ranks = new Map<Pod, number>();
  for (const onNode of podsByNode(pods).values()) {
    if (onNode.length <= 1) continue;
    const sorted = sortForDeletion(onNode).slice(0, -1);
    sorted.forEach((pod, i) => ranks.set(pod, sorted.length - i));
  }
  return (pod) => ranks.get(pod) ?? 0;
}

/**
 * Ranks pods by crowding in each topologySpreadConstraints domain, weighted by the domain count
 * (ln(domains + 2)), so scale-in keeps the spread. `nodeLabels` looks a node up; pods on nodes
 * it doesn't know are left out, as OpenKruise does when a Node can't be read.
 */
export function spreadConstraintsRanker(
  pods: readonly Pod[],
  topologyKeys: readonly string[],
  nodeLabels: (nodeName: string) => Readonly<Record<string, string>> | undefined,
): Ranker {
  const ranks = new Map<Pod, number>();
  const byNode = podsByNode(pods);
  const sameNode = sameNodeRanker(pods);
  for (const key of topologyKeys) {
    const domains = new Map<string, Pod[]>();
    for (const [node, onNode] of byNode) {
      const value = nodeLabels(node)?.[key];
      if (value === undefined) continue;
      domains.set(value, [...(domains.get(value) ?? []), ...onNode]);
    }
    const weight = Math.log(domains.size + 2);
    const ranker = key === HOSTNAME_KEY ? undefined : sameNode;
    for (const inDomain of domains.values()) {
      sortForDeletion(inDomain, { ranker }).forEach((pod, i) => {
        ranks.set(pod, (ranks.get(pod) ?? 0) + (inDomain.length - i) * weight);
      });
    }
  }
  return (pod) => ranks.get(pod) ?? 0;
}
