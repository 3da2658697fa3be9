/**
 * PodUnavailableBudget validation: the schema, then OpenKruise v1.9's webhook rules
 * (pkg/webhook/podunavailablebudget/validating): exactly one of selector and targetRef, exactly
 * one of maxUnavailable and minAvailable (a non-negative count or a percentage up to 100%), a
 * complete targetRef or a non-empty valid selector, and well-formed annotations. On update the
 * selector and targetRef cannot change. Two budgets covering the same pods are a cluster-level
 * question the agent's webhook answers (it needs the other budgets).
 */
import {
  childPath,
  type FieldError,
  forbidden,
  invalid,
  notSupported,
  required,
} from '../../validation/field-error.js';
import { parseIntOrPercent, type IntOrString } from '../../validation/intstr.js';
import { isEmptySelector, validateLabelSelector } from '../../validation/labels.js';
import {
  ANNOTATION_PUB_PROTECT_OPERATIONS,
  ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS,
  KruiseKind,
  PUB_API_VERSION,
  PUB_OPERATIONS,
} from '../constants.js';
import { validateMetadata } from '../common/metadata-validation.js';
import { type KindRules, validateObject, validateObjectUpdate } from '../common/validate-object.js';
import { type PodUnavailableBudget, PodUnavailableBudgetSchema, type PodUnavailableBudgetSpec } from './schema.js';

/** A count ≥ 0 or a percentage ≤ 100%. */
function validateBudgetValue(value: IntOrString, path: string): FieldError[] {
  const parsed = parseIntOrPercent(value);
  if (parsed.kind === 'invalid') return [invalid(path, value, parsed.reason)];
  if (parsed.value < 0) return [invalid(path, value, 'must be greater than or equal to 0')];
  if (parsed.kind === 'percent' && parsed.value > 100) return [invalid(path, value, 'must not be greater than 100%')];
  return [];
}

function validatePods(spec: PodUnavailableBudgetSpec): FieldError[] {
  const { selector, targetRef } = spec;
  if (!selector && !targetRef) return [required('spec.selector', 'one of selector or targetRef is required')];
  if (selector && targetRef) {
    return [forbidden('spec.targetRef', 'selector and targetRef are mutually exclusive: set only one')];
  }
  if (targetRef) {
    return (['apiVersion', 'kind', 'name'] as const)
      .filter((field) => !targetRef[field])
      .map((field) => required(childPath('spec.targetRef', field)));
  }
  const errors = validateLabelSelector(selector!, 'spec.selector');
  if (isEmptySelector(selector!)) {
    errors.push(invalid('spec.selector', selector, 'an empty selector would cover every pod of the namespace'));
  }
  return errors;
}

function validateBudget(spec: PodUnavailableBudgetSpec): FieldError[] {
  const { maxUnavailable, minAvailable } = spec;
  if (maxUnavailable === undefined && minAvailable === undefined) {
    return [required('spec.maxUnavailable', 'one of maxUnavailable or minAvailable is required')];
  }
  if (maxUnavailable !== undefined && minAvailable !== undefined) {
    return [forbidden('spec.minAvailable', 'maxUnavailable and minAvailable are mutually exclusive: set only one')];
  }
  return maxUnavailable !== undefined
    ? validateBudgetValue(maxUnavailable, 'spec.maxUnavailable')
    : validateBudgetValue(minAvailable!, 'spec.minAvailable');
}

function validateAnnotations(pub: PodUnavailableBudget): FieldError[] {
  const annotations = pub.metadata?.annotations ?? {};
  const errors: FieldError[] = [];
  const operations = annotations[ANNOTATION_PUB_PROTECT_OPERATIONS];
  if (operations !== undefined) {
    const path = `metadata.annotations[${ANNOTATION_PUB_PROTECT_OPERATIONS}]`;
    for (const op of operations.split(',')) {
      if (!(PUB_OPERATIONS as readonly string[]).includes(op.trim()))
        errors.push(notSupported(path, op, PUB_OPERATIONS));
    }
  }
  const total = annotations[ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS];
  if (total !== undefined && !/^[0-9]+$/.test(total)) {
    errors.push(
      invalid(
        `metadata.annotations[${ANNOTATION_PUB_PROTECT_TOTAL_REPLICAS}]`,
        total,
        'must be a non-negative integer',
      ),
    );
  }
  return errors;
}

/** The semantic rules, on a PodUnavailableBudget that passed the schema. */
export function validateDefaultedPodUnavailableBudget(pub: PodUnavailableBudget): FieldError[] {
  return [
    ...validateMetadata(pub.metadata),
    ...validateAnnotations(pub),
    ...validatePods(pub.spec),
    ...validateBudget(pub.spec),
  ];
}

/** PodUnavailableBudget has no defaults in OpenKruise; a copy keeps the pipeline's contract. */
export function defaultPodUnavailableBudget(pub: PodUnavailableBudget): PodUnavailableBudget {
  return structuredClone(pub);
}

export const PODUNAVAILABLEBUDGET_RULES: KindRules<PodUnavailableBudget> = {
  kind: KruiseKind.PodUnavailableBudget,
  apiVersion: PUB_API_VERSION,
  schema: PodUnavailableBudgetSchema,
  defaults: defaultPodUnavailableBudget,
  semantic: validateDefaultedPodUnavailableBudget,
};

/** Every problem with a PodUnavailableBudget document; empty when accepted. Never throws. */
export function validatePodUnavailableBudget(document: unknown): FieldError[] {
  return validateObject(document, PODUNAVAILABLEBUDGET_RULES);
}

/** The update rules: selector and targetRef are fixed once created. */
function compareUpdate(previous: PodUnavailableBudget, next: PodUnavailableBudget): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of ['selector', 'targetRef'] as const) {
    if (JSON.stringify(previous.spec[field] ?? null) !== JSON.stringify(next.spec[field] ?? null)) {
      errors.push(forbidden(`spec.${field}`, `${field} cannot be modified`));
    }
  }
  return errors;
}

/** Problems with replacing `previous` by `next`. Never throws. */
export function validatePodUnavailableBudgetUpdate(next: unknown, previous: unknown): FieldError[] {
  return validateObjectUpdate(next, previous, PODUNAVAILABLEBUDGET_RULES, compareUpdate);
}
