/**
 * Rules for the OpenKruise strategy types shared by CloneSet and SidecarSet: int-or-percent
 * values, update priority and scatter strategies, and pod lifecycle hooks.
 */
import {
  childPath,
  duplicate,
  type FieldError,
  forbidden,
  indexPath,
  invalid,
  required,
} from '../../validation/field-error.js';
import { type IntOrString, parseIntOrPercent } from '../../validation/intstr.js';
import { isEmptySelector, validateLabels, validateLabelSelector } from '../../validation/labels.js';
import { finalizerNameErrors, qualifiedNameErrors } from '../../validation/names.js';
import type { Lifecycle, UpdatePriorityStrategy, UpdateScatterStrategy } from './strategy.js';

/** An int-or-percent must be a non-negative integer or a string like "25%". */
export function validateIntOrPercent(value: IntOrString | undefined, path: string): FieldError[] {
  if (value === undefined) return [];
  const parsed = parseIntOrPercent(value);
  if (parsed.kind === 'invalid') return [invalid(path, value, parsed.reason)];
  if (parsed.value < 0) return [invalid(path, value, 'must be greater than or equal to 0')];
  return [];
}

/** Only one of orderPriority and weightPriority; weights in 0..100 with non-empty selectors. */
export function validatePriorityStrategy(strategy: UpdatePriorityStrategy | undefined, path: string): FieldError[] {
  if (!strategy) return [];
  const errors: FieldError[] = [];
  const weights = strategy.weightPriority ?? [];
  const orders = strategy.orderPriority ?? [];
  if (weights.length > 0 && orders.length > 0) {
    errors.push(forbidden(path, 'only one of weightPriority and orderPriority can be used'));
  }
  weights.forEach((term, i) => {
    const at = childPath(indexPath(childPath(path, 'weightPriority'), i), 'matchSelector');
    if (isEmptySelector(term.matchSelector)) errors.push(invalid(at, term.matchSelector, 'selector can not be empty'));
    errors.push(...validateLabelSelector(term.matchSelector, at));
  });
  orders.forEach((term, i) => {
    const at = childPath(indexPath(childPath(path, 'orderPriority'), i), 'orderedKey');
    if (term.orderedKey === '') errors.push(required(at, 'order key can not be empty'));
    else for (const m of qualifiedNameErrors(term.orderedKey)) errors.push(invalid(at, term.orderedKey, m));
  });
  return errors;
}

/** Keys must be set; a key:value pair may appear only once. */
export function validateScatterStrategy(strategy: UpdateScatterStrategy | undefined, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  (strategy ?? []).forEach((term, i) => {
    const at = indexPath(path, i);
    if (term.key === '') errors.push(required(childPath(at, 'key'), 'key should not be empty'));
    const id = `${term.key}:${term.value}`;
    if (seen.has(id)) errors.push(duplicate(at, id));
    seen.add(id);
  });
  return errors;
}

/**
 * Each hook's labels must be valid pod labels and its finalizers valid finalizer names, since the
 * controller waits for exactly these on the pods.
 */
export function validateLifecycle(lifecycle: Lifecycle | undefined, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const hookName of ['preDelete', 'inPlaceUpdate', 'preNormal'] as const) {
    const hook = lifecycle?.[hookName];
    if (!hook) continue;
    const at = childPath(path, hookName);
    errors.push(...validateLabels(hook.labelsHandler ?? {}, childPath(at, 'labelsHandler')));
    const seen = new Set<string>();
    (hook.finalizersHandler ?? []).forEach((finalizer, i) => {
      const item = indexPath(childPath(at, 'finalizersHandler'), i);
      for (const m of finalizerNameErrors(finalizer)) errors.push(invalid(item, finalizer, m));
      if (seen.has(finalizer)) errors.push(duplicate(item, finalizer));
      seen.add(finalizer);
    });
  }
  return errors;
}
