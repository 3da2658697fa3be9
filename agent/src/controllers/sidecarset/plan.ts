/**
 * Which pods the SidecarSet upgrades next (OpenKruise's spreading strategy), purely:
 *
 * 1. candidates: pods not at the SidecarSet's hash and selected by updateStrategy.selector;
 *    those whose sidecars changed in more than images are not upgradable (condition False);
 *    pods still settling from an earlier update wait;
 * 2. order: k8s ActivePods order (unready first), then priorityStrategy (weights, or ordered
 *    keys; it dominates), then scatterStrategy spreads pods of each key=value over the order;
 * 3. the last `partition` candidates stay at the old version;
 * 4. at most maxUnavailable pods may be upgraded-and-not-ready at once; candidates already unready
 *    do not count against it.
 */
import { scaledValue, type SidecarSet } from '@flotilla/api';
import { labelSelectorMatcher } from '../../runtime/label-selector.js';
import { compareActivePods, sortByPriority, sortByScatter } from '../../kube/pod-order.js';
import { isPodSidecarUpdated } from './control/annotations.js';
import { isPodReadyForSidecarSet, isSidecarReady, upgradability } from './pod-state.js';
import type { Pod } from '../../kube/types.js';

export interface UpgradePlan {
  /** Pods to upgrade now, in order. */
  upgrade: Pod[];
  /** Pods whose sidecars changed beyond images: they get SidecarSetUpgradable=False. */
  notUpgradable: Pod[];
}

/** CalculatePartitionReplicas: a percentage rounds up, but never to all of several pods. */
export function partitionCount(partition: number | string | undefined, total: number): number {
  if (partition === undefined) return 0;
  let n = scaledValue(partition, total, true) ?? 0;
  if (typeof partition === 'string' && partition !== '100%' && n === total && total > 1) n = total - 1;
  return Math.max(0, Math.min(n, total));
}

/** `key: "*"` terms expanded to one term per value the pods carry (parseUpdateScatterTerms). */
function scatterTerms(ss: SidecarSet, pods: readonly Pod[]): { key: string; value: string }[] {
  const out: { key: string; value: string }[] = [];
  const add = (t: { key: string; value: string }): void => {
    if (!out.some((o) => o.key === t.key && o.value === t.value)) out.push(t);
  };
  for (const term of ss.spec.updateStrategy?.scatterStrategy ?? []) {
    if (term.value !== '*') {
      add(term);
      continue;
    }
    for (const pod of pods) {
      const value = pod.metadata.labels?.[term.key];
      if (value !== undefined) add({ key: term.key, value });
    }
  }
  return out;
}

/**
 * SortUpdateIndexes: k8s ActivePods order, then priorityStrategy, then scatterStrategy; the same
 * sorters the CloneSet update uses (kube/pod-order.ts).
 */
export function sortForUpgrade(ss: SidecarSet, pods: readonly Pod[], candidates: readonly Pod[] = pods): Pod[] {
  const position = new Map(pods.map((p, i) => [p, i]));
  let idx = candidates.map((p) => position.get(p)!).sort((i, j) => compareActivePods(pods[i]!, pods[j]!));
  idx = sortByPriority(ss.spec.updateStrategy?.priorityStrategy, pods, idx);
  idx = sortByScatter(scatterTerms(ss, pods), pods, idx);
  return idx.map((i) => pods[i]!);
}

export function planUpgrade(ss: SidecarSet, pods: readonly Pod[]): UpgradePlan {
  const strategy = ss.spec.updateStrategy ?? {};
  const selected = strategy.selector ? labelSelectorMatcher(strategy.selector) : () => true;
  const waiting: Pod[] = [];
  const notUpgradable: Pod[] = [];
  for (const pod of pods) {
    if (isPodSidecarUpdated(ss, pod) || !selected(pod.metadata.labels)) continue;
    const { canUpgrade, consistent } = upgradability(pod, ss);
    if (!canUpgrade) notUpgradable.push(pod);
    else if (consistent) waiting.push(pod);
  }
  const ordered = sortForUpgrade(ss, pods, waiting);
  const partition = partitionCount(strategy.partition, pods.length);
  if (ordered.length - partition <= 0) return { upgrade: [], notUpgradable };
  const candidates = ordered.slice(0, ordered.length - partition);
  const maxUnavailable = scaledValue(strategy.maxUnavailable ?? 1, pods.length, true) ?? 1;
  let unavailable = pods.filter((p) => isPodSidecarUpdated(ss, p) && !isSidecarReady(p, ss)).length;
  const upgrade: Pod[] = [];
  for (const pod of candidates) {
    // A pod that is not ready does not count against maxUnavailable.
    if (!isPodReadyForSidecarSet(pod, ss)) {
      upgrade.push(pod);
      continue;
    }
    if (unavailable >= maxUnavailable) break;
    unavailable++;
    upgrade.push(pod);
  }
  return { upgrade, notUpgradable };
}
