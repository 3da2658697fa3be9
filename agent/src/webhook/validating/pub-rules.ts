/**
 * PodUnavailableBudget checks that need the namespace's other budgets (OpenKruise v1.9's
 * pub_create_update_handler.go, facts only): a pod answers to one budget, so a budget is refused
 * when another one of its namespace names the same workload (group, kind and name; the version
 * does not matter) or has a selector that loosely overlaps its own. The first conflict found is
 * reported. A selector budget and a targetRef budget are not compared: pods both cover are
 * reported by the controller (condition PodsOverlap) and bound to the first budget by name.
 */
import { invalid, type FieldError, type PodUnavailableBudget } from '@flotilla/api';
import { sameWorkload } from '../../controllers/podunavailablebudget/binding.js';
import type { LabelSelector, LabelSelectorRequirement } from '../../runtime/label-selector.js';

type Requirement = Pick<LabelSelectorRequirement, 'operator' | 'values'>;

/** Each key of the selector with its one requirement; a matchLabels entry is `In [value]` and wins over an expression. */
function requirementsByKey(selector: LabelSelector): Map<string, Requirement> {
  const byKey = new Map<string, Requirement>();
  for (const e of selector.matchExpressions ?? []) byKey.set(e.key, { operator: e.operator, values: e.values ?? [] });
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) byKey.set(k, { operator: 'In', values: [v] });
  return byKey;
}

const anyShared = (a: readonly string[], b: readonly string[]): boolean => a.some((v) => b.includes(v));
const includesAll = (all: readonly string[], some: readonly string[]): boolean => some.every((v) => all.includes(v));

/**
 * Whether a label value could satisfy both requirements of one key (OpenKruise's table, from
 * `a`'s side): per operator of `a`, the operators of `b` that always overlap it, and those that
 * overlap depending on the values.
 */
const OVERLAPS: Record<
  string,
  { always: readonly string[]; byValues?: Record<string, (a: string[], b: string[]) => boolean> }
> = {
  In: {
    always: ['Exists'],
    byValues: { In: anyShared, NotIn: (a, b) => !includesAll(b, a) },
  },
  Exists: { always: ['In', 'NotIn', 'Exists'] },
  NotIn: { always: ['Exists', 'DoesNotExist', 'NotIn'], byValues: { In: (a, b) => !includesAll(a, b) } },
  DoesNotExist: { always: ['DoesNotExist', 'NotIn'] },
};

function requirementsOverlap(a: Requirement, b: Requirement): boolean {
  const row = OVERLAPS[a.operator];
  if (!row) return false;
  if (row.always.includes(b.operator)) return true;
  const byValues = row.byValues?.[b.operator];
  return !!byValues && byValues(a.values ?? [], b.values ?? []);
}

/**
 * OpenKruise's loose overlap of two selectors: they constrain the same keys, and for every key
 * the two requirements can both hold. Selectors on different keys do not overlap, even though a
 * pod could carry both labels.
 */
export function selectorsLooselyOverlap(a: LabelSelector, b: LabelSelector): boolean {
  const ra = requirementsByKey(a);
  const rb = requirementsByKey(b);
  if (ra.size !== rb.size) return false;
  for (const [key, req] of ra) {
    const other = rb.get(key);
    if (!other || !requirementsOverlap(req, other) || !requirementsOverlap(other, req)) return false;
  }
  return true;
}

/** The message when `pub` covers the pods of `other` (undefined when it does not), with the field it names. */
function conflictWith(pub: PodUnavailableBudget, other: PodUnavailableBudget): FieldError | undefined {
  const { targetRef, selector } = pub.spec;
  const theirs = other.spec;
  const why = (field: string): string =>
    `pub.spec.${field} is in conflict with other PodUnavailableBudget ${other.metadata?.name}`;
  if (targetRef && theirs.targetRef) {
    const ref = { apiVersion: targetRef.apiVersion ?? '', kind: targetRef.kind ?? '', name: targetRef.name ?? '' };
    return sameWorkload(ref, theirs.targetRef) ? invalid('spec.targetRef', targetRef, why('targetRef')) : undefined;
  }
  if (selector && theirs.selector && !targetRef && !theirs.targetRef) {
    return selectorsLooselyOverlap(selector, theirs.selector)
      ? invalid('spec.selector', selector, why('selector'))
      : undefined;
  }
  return undefined;
}

/** The conflict of `pub` with the first other budget of its namespace covering the same pods; empty when none. */
export function pubConflicts(pub: PodUnavailableBudget, others: readonly PodUnavailableBudget[]): FieldError[] {
  for (const other of others) {
    if (other.metadata?.name === pub.metadata?.name) continue;
    const conflict = conflictWith(pub, other);
    if (conflict) return [conflict];
  }
  return [];
}
