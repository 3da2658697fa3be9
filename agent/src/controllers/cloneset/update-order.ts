/**
 * Which pods an update takes first, and how many (OpenKruise sync/cloneset_update.go
 * SortUpdateIndexes and limitUpdateIndexes, pkg/util/updatesort). Candidates are positions in the
 * CloneSet's pod list:
 *
 * 1. k8s ActivePods order: unassigned, then Pending < Unknown < Running, then not ready, then
 *    ready for the shortest time, then most restarts, then newest;
 * 2. priorityStrategy: weightPriority (higher sum of matching weights first) or orderPriority
 *    (the first orderedKey a pod has decides its level, lower level first; within a level the
 *    integer suffix of the label value, higher first; pods with none of the keys get level -1
 *    and therefore come first). Ties keep OpenKruise's order: the later pod in the list first;
 * 3. scatterStrategy: pods matching each key=value term are spread evenly over the order;
 * 4. PreparingUpdate pods first.
 *
 * Then at most |updateNum| are taken, and no more than updateMaxUnavailable may be unavailable.
 */
import type { UpdatePriorityStrategy, UpdateScatterStrategy } from '@flotilla/api';
import { LifecycleState } from '@flotilla/api';
import { labelSelectorMatcher } from '../../runtime/label-selector.js';
import {
  creationTime,
  hasRevision,
  isPodAvailable,
  isPodReady,
  lifecycleState,
  maxContainerRestarts,
  podReadySince,
} from './pods.js';
import type { Pod } from './types.js';

const PHASE_ORDER: Readonly<Record<string, number>> = { Pending: 0, Unknown: 1, Running: 2 };

function afterOrZero(t1: number | undefined, t2: number | undefined): boolean {
  if (t1 === undefined || t2 === undefined) return t1 === undefined;
  return t1 > t2;
}

/** k8s controller.ActivePods Less as a comparator: negative when `a` goes first. */
export function compareActivePods(a: Pod, b: Pod): number {
  const na = a.spec.nodeName ?? '';
  const nb = b.spec.nodeName ?? '';
  if (na !== nb && (na === '' || nb === '')) return na === '' ? -1 : 1;
  const phase = (PHASE_ORDER[a.status?.phase ?? ''] ?? 0) - (PHASE_ORDER[b.status?.phase ?? ''] ?? 0);
  if (phase !== 0) return phase;
  const ra = isPodReady(a);
  if (ra !== isPodReady(b)) return ra ? 1 : -1;
  if (ra) {
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

/** Full update order of candidate positions. */
export function sortUpdateCandidates(
  strategy: { priorityStrategy?: UpdatePriorityStrategy; scatterStrategy?: UpdateScatterStrategy },
  pods: readonly Pod[],
  candidates: readonly number[],
): number[] {
  let idx = [...candidates].sort((i, j) => compareActivePods(pods[i]!, pods[j]!));
  idx = sortByPriority(strategy.priorityStrategy, pods, idx);
  idx = sortByScatter(strategy.scatterStrategy, pods, idx);
  const preparing = (i: number): boolean => lifecycleState(pods[i]!) === LifecycleState.PreparingUpdate;
  return [...idx.filter(preparing), ...idx.filter((i) => !preparing(i))];
}

export interface LimitInput {
  pods: readonly Pod[];
  /** Sorted candidate positions. */
  candidates: readonly number[];
  updateNum: number;
  updateMaxUnavailable: number;
  targetRevision: string;
  minReadySeconds: number;
  now: number;
}

/**
 * Takes at most |updateNum| candidates, stopping before the unavailable pods of the target
 * revision plus those about to update reach updateMaxUnavailable, or before updating an
 * available pod would push all unavailable pods to that limit.
 */
export function limitUpdates(input: LimitInput): number[] {
  const chosen = input.candidates.slice(0, Math.abs(input.updateNum));
  const available = (p: Pod): boolean => isPodAvailable(p, input.minReadySeconds, input.now);
  let unavailable = 0;
  let targetUnavailable = 0;
  for (const pod of input.pods) {
    if (available(pod)) continue;
    unavailable++;
    if (hasRevision(pod, input.targetRevision)) targetUnavailable++;
  }
  let taken = 0;
  for (const i of chosen) {
    if (targetUnavailable + taken >= input.updateMaxUnavailable) break;
    if (available(input.pods[i]!)) {
      if (unavailable >= input.updateMaxUnavailable) break;
      unavailable++;
    }
    taken++;
  }
  return chosen.slice(0, taken);
}
