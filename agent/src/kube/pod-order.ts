/**
 * How pods are ordered for an update, shared by the CloneSet's update order and the SidecarSet's
 * upgrade order (k8s controller.ActivePods, OpenKruise pkg/util/updatesort), and the first rules
 * of the CloneSet's scale-in order. Orders are of positions in a pod list, stable where
 * OpenKruise's are:
 *
 * 1. ActivePods: unassigned, then Pending < Unknown < Running, then not ready, then ready for
 *    the shortest time, then most restarts, then newest;
 * 2. priorityStrategy: weightPriority (higher sum of matching weights first) or orderPriority
 *    (the first orderedKey a pod has decides its level, lower level first; within a level the
 *    integer suffix of the label value, higher first; pods with none of the keys get level -1
 *    and therefore come first). Ties keep OpenKruise's order: the later pod in the list first;
 * 3. scatterStrategy: pods matching each key=value term are spread evenly over the order.
 */
import type { UpdatePriorityStrategy, UpdateScatterStrategy } from '@flotilla/api';
import { labelSelectorMatcher } from '../runtime/label-selector.js';
import { creationTime, isPodReady, maxContainerRestarts, podReadySince } from './pods.js';
import type { Pod } from './types.js';

const PHASE_ORDER: Readonly<Record<string, number>> = { Pending: 0, Unknown: 1, Running: 2 };

/** t1 after t2, where a missing time counts as after any present one. */
function afterOrZero(t1: number | undefined, t2: number | undefined): boolean {
  if (t1 === undefined || t2 === undefined) return t1 === undefined;
  return t1 > t2;
}

/** Unassigned before assigned, then Pending < Unknown < Running (Go's map lookup of another phase yields 0). */
export function byAssignmentAndPhase(a: Pod, b: Pod): number {
  const na = a.spec.nodeName ?? '';
  const nb = b.spec.nodeName ?? '';
  if (na !== nb && (na === '' || nb === '')) return na === '' ? -1 : 1;
  return (PHASE_ORDER[a.status?.phase ?? ''] ?? 0) - (PHASE_ORDER[b.status?.phase ?? ''] ?? 0);
}

/** Unavailable before available (when the caller judges availability), then not ready before ready. */
export function byReadiness(a: Pod, b: Pod, isAvailable?: (pod: Pod) => boolean): number {
  if (isAvailable) {
    const aa = isAvailable(a);
    if (aa !== isAvailable(b)) return aa ? 1 : -1;
  }
  const ra = isPodReady(a);
  if (ra !== isPodReady(b)) return ra ? 1 : -1;
  return 0;
}

/** Ready for the shorter time first (both ready), then more restarts, then newer. */
export function byAge(a: Pod, b: Pod): number {
  if (isPodReady(a) && isPodReady(b)) {
    const ta = podReadySince(a);
    const tb = podReadySince(b);
    if (ta !== tb) return afterOrZero(ta, tb) ? -1 : 1;
  }
  const restarts = maxContainerRestarts(b) - maxContainerRestarts(a);
  if (restarts !== 0) return restarts;
  const ca = creationTime(a);
  const cb = creationTime(b);
  if (ca !== cb) return afterOrZero(ca, cb) ? -1 : 1;
  return 0;
}

/** k8s controller.ActivePods Less as a comparator: negative when `a` goes first. */
export function compareActivePods(a: Pod, b: Pod): number {
  return byAssignmentAndPhase(a, b) || byReadiness(a, b) || byAge(a, b);
}

/** The integer at the end of a label value ("canary-12" → 12); 0 without one. */
export function integerSuffix(value: string): number {
  const digits = /[0-9]+$/.exec(value)?.[0];
  if (digits === undefined) return 0;
  const n = Number(digits);
  return Number.isSafeInteger(n) ? n : 0;
}

/** Sort key of a pod under a priority strategy: compare `level` ascending, then `order` descending. */
function priorityKey(
  strategy: UpdatePriorityStrategy,
  labels: Record<string, string>,
): { level: number; order: number } {
  if (strategy.weightPriority?.length) {
    let weight = 0;
    for (const term of strategy.weightPriority) {
      if (labelSelectorMatcher(term.matchSelector)(labels)) weight += term.weight;
    }
    return { level: 0, order: weight };
  }
  const terms = strategy.orderPriority ?? [];
  for (let i = 0; i < terms.length; i++) {
    const value = labels[terms[i]!.orderedKey];
    if (value !== undefined) return { level: i, order: integerSuffix(value) };
  }
  return { level: -1, order: 0 };
}

/** Orders candidate positions by the priority strategy (stable). */
export function sortByPriority(
  strategy: UpdatePriorityStrategy | undefined,
  pods: readonly Pod[],
  idx: number[],
): number[] {
  if (!strategy || (!strategy.weightPriority?.length && !strategy.orderPriority?.length)) return idx;
  const keys = new Map(idx.map((i) => [i, priorityKey(strategy, pods[i]!.metadata.labels ?? {})]));
  return [...idx].sort((i, j) => {
    const a = keys.get(i)!;
    const b = keys.get(j)!;
    if (a.level !== b.level) return a.level - b.level;
    if (a.order !== b.order) return b.order - a.order;
    return j - i;
  });
}

interface ScatterGroup {
  groupNum: number;
  matchedGroupSize: number;
  unmatchedGroupSize: number;
  unmatchedRemainder: number;
}

function scatterGroup(matched: number, unmatched: number): ScatterGroup {
  const groupNum = Math.min(matched, unmatched);
  return {
    groupNum,
    matchedGroupSize: Math.round(matched / groupNum),
    unmatchedGroupSize: Math.round(unmatched / groupNum),
    unmatchedRemainder: 0,
  };
}

/** updatesort.calculateGroupByDensity, with Go's float32 ratios and integer division. */
function groupByDensity(
  totalMatched: number,
  totalUnmatched: number,
  updMatched: number,
  updUnmatched: number,
): ScatterGroup {
  const total = scatterGroup(totalMatched, totalUnmatched);
  const update = scatterGroup(updMatched, updUnmatched);
  if (Math.fround(totalUnmatched / totalMatched) >= Math.fround(updUnmatched / updMatched)) return update;
  const m = total.matchedGroupSize;
  const u = total.unmatchedGroupSize;
  const groupNum = Math.min(Math.trunc(updMatched / m), Math.trunc(updUnmatched / u));
  return { groupNum, matchedGroupSize: m, unmatchedGroupSize: u, unmatchedRemainder: updUnmatched - groupNum * u };
}

function scatterByTerm(term: { key: string; value: string }, pods: readonly Pod[], idx: number[]): number[] {
  const matches = (p: Pod): boolean => p.metadata.labels?.[term.key] === term.value;
  const matched = idx.filter((i) => matches(pods[i]!));
  const unmatched = idx.filter((i) => !matches(pods[i]!));
  if (matched.length <= 1 || unmatched.length <= 1) return idx;
  const totalMatched = pods.filter(matches).length - 1;
  const totalUnmatched = pods.length - totalMatched - 1;
  // The last matched pod goes to the very end.
  const last = matched.pop()!;
  const group = groupByDensity(totalMatched, totalUnmatched, matched.length, unmatched.length);
  const out = unmatched.splice(0, Math.max(group.unmatchedRemainder, 0));
  for (let g = 0; g < group.groupNum; g++) {
    out.push(...matched.splice(0, group.matchedGroupSize));
    out.push(...unmatched.splice(0, group.unmatchedGroupSize));
  }
  return [...out, ...matched, ...unmatched, last];
}

/** Orders candidate positions by the scatter strategy. */
export function sortByScatter(
  strategy: UpdateScatterStrategy | undefined,
  pods: readonly Pod[],
  idx: number[],
): number[] {
  if (!strategy?.length || idx.length <= 1) return idx;
  let terms = strategy;
  if (strategy.length > 1) {
    // Terms matching more candidates scatter first; ties keep their declared order.
    const count = (t: { key: string; value: string }): number =>
      idx.filter((i) => pods[i]!.metadata.labels?.[t.key] === t.value).length;
    terms = strategy
      .filter((t, i) => count(t) > 0 && strategy.findIndex((u) => u.key === t.key && u.value === t.value) === i)
      .map((t) => ({ t, n: count(t) }))
      .sort((a, b) => b.n - a.n)
      .map(({ t }) => t);
  }
  let out = idx;
  for (const term of terms) out = scatterByTerm(term, pods, out);
  return out;
}
