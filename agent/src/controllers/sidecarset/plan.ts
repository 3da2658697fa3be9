/**
 * Which pods the SidecarSet upgrades next (OpenKruise's spreading strategy), purely:
 *
 * 1. candidates: pods not at the SidecarSet's hash and selected by updateStrategy.selector;
 *    those whose sidecars changed in more than images are not upgradable (condition False);
 *    pods still settling from an earlier update wait;
 * 2. order: unready pods first, then priorityStrategy (weights, or ordered keys), then
 *    scatterStrategy spreads pods of each key=value over the order;
 * 3. the last `partition` candidates stay at the old version;
 * 4. at most maxUnavailable pods may be upgraded-and-not-ready at once; candidates already unready
 *    do not count against it.
 */
import { scaledValue, type SidecarSet } from '@flotilla/api';
import { labelSelectorMatcher } from '../../runtime/label-selector.js';
import { isPodSidecarUpdated } from './control/annotations.js';
import { isPodStateConsistent, isRunningAndReady, isSidecarReady, upgradability } from './pod-state.js';
import type { Pod } from './types.js';

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

function priorityScore(ss: SidecarSet, pod: Pod): number {
  const p = ss.spec.updateStrategy?.priorityStrategy;
  const labels = pod.metadata.labels ?? {};
  if (p?.weightPriority?.length) {
    return p.weightPriority.reduce((sum, t) => sum + (labelSelectorMatcher(t.matchSelector)(labels) ? t.weight : 0), 0);
  }
  for (const term of p?.orderPriority ?? []) {
    const value = labels[term.orderedKey];
    if (value === undefined) continue;
    const m = /(\d+)$/.exec(value);
    return m ? Number(m[1]) : -1;
  }
  return p?.orderPriority?.length ? -1 : 0;
}

/** Spreads pods matching each scatter term evenly over the order (`value: "*"` = every value). */
function scatter(ss: SidecarSet, pods: Pod[]): Pod[] {
  const terms = ss.spec.updateStrategy?.scatterStrategy ?? [];
  let out = pods;
  for (const term of terms) {
    const values =
      term.value === '*'
        ? [...new Set(out.map((p) => p.metadata.labels?.[term.key]).filter((v) => v !== undefined))]
        : [term.value];
    for (const value of values) {
      const hit = out.filter((p) => p.metadata.labels?.[term.key] === value);
      const rest = out.filter((p) => p.metadata.labels?.[term.key] !== value);
      if (hit.length < 2) continue;
      const step = (rest.length + hit.length) / hit.length;
      const merged: Pod[] = [];
      let h = 0;
      for (let i = 0; i < rest.length + hit.length; i++) {
        if (h < hit.length && i >= Math.round(h * step)) merged.push(hit[h++]!);
        else merged.push(rest.shift()!);
      }
      out = merged;
    }
  }
  return out;
}

export function sortForUpgrade(ss: SidecarSet, pods: readonly Pod[]): Pod[] {
  const byName = (a: Pod, b: Pod): number =>
    a.metadata.name! < b.metadata.name! ? -1 : a.metadata.name! > b.metadata.name! ? 1 : 0;
  const sorted = [...pods].sort(
    (a, b) =>
      Number(isRunningAndReady(a)) - Number(isRunningAndReady(b)) ||
      priorityScore(ss, b) - priorityScore(ss, a) ||
      byName(a, b),
  );
  return scatter(ss, sorted);
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
  const ordered = sortForUpgrade(ss, waiting);
  const partition = partitionCount(strategy.partition, pods.length);
  if (ordered.length - partition <= 0) return { upgrade: [], notUpgradable };
  const candidates = ordered.slice(0, ordered.length - partition);
  const maxUnavailable = scaledValue(strategy.maxUnavailable ?? 1, pods.length, true) ?? 1;
  let unavailable = pods.filter(
    (p) => isPodSidecarUpdated(ss, p) && (!isPodStateConsistent(p, ss) || !isRunningAndReady(p)),
  ).length;
  const upgrade: Pod[] = [];
  for (const pod of candidates) {
    if (!isSidecarReady(pod, ss)) {
      upgrade.push(pod);
      continue;
    }
    if (unavailable >= maxUnavailable) break;
    unavailable++;
    upgrade.push(pod);
  }
  return { upgrade, notUpgradable };
}
