/**
 * CloneSet validation: the schema, then OpenKruise's validating-webhook rules
 * (pkg/webhook/cloneset/validating/validation.go) on the defaulted object.
 */
import {
  childPath,
  duplicate,
  type FieldError,
  forbidden,
  indexPath,
  invalid,
  notSupported,
} from '../../validation/field-error.js';
import { scaledValue } from '../../validation/intstr.js';
import { CLONESET_UPDATE_ON_DELETE, CLONESET_UPDATE_STRATEGY_TYPES, KruiseKind } from '../constants.js';
import { validateMetadata } from '../common/metadata-validation.js';
import { validatePodTemplate } from '../common/pod-validation.js';
import { validateClaimTemplates, validateWorkloadSelector } from '../common/workload-validation.js';
import {
  validateIntOrPercent,
  validateLifecycle,
  validatePriorityStrategy,
  validateScatterStrategy,
} from '../common/strategy-validation.js';
import { type KindRules, validateObject } from '../common/validate-object.js';
import { defaultCloneSet } from './defaults.js';
import { type CloneSet, CloneSetSchema, type CloneSetSpec } from './schema.js';

function validateTemplate(spec: CloneSetSpec, claimNames: string[]): FieldError[] {
  const errors = validatePodTemplate(spec.template, 'spec.template', claimNames);
  const podSpec = spec.template.spec ?? {};
  if (podSpec.restartPolicy !== undefined && podSpec.restartPolicy !== 'Always') {
    errors.push(notSupported('spec.template.spec.restartPolicy', podSpec.restartPolicy, ['Always']));
  }
  if (podSpec.activeDeadlineSeconds !== undefined) {
    errors.push(
      forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in cloneset is not Supported'),
    );
  }
  return errors;
}

function validateScaleStrategy(spec: CloneSetSpec): FieldError[] {
  const strategy = spec.scaleStrategy ?? {};
  const errors = validateIntOrPercent(strategy.maxUnavailable, 'spec.scaleStrategy.maxUnavailable');
  const seen = new Set<string>();
  (strategy.podsToDelete ?? []).forEach((name, i) => {
    if (seen.has(name)) errors.push(duplicate(indexPath('spec.scaleStrategy.podsToDelete', i), name));
    seen.add(name);
  });
  return errors;
}

/**
 * Type, partition, maxUnavailable and maxSurge. Percentages are resolved against replicas and
 * rounded up, as OpenKruise does, before "not both below 1" is checked.
 */
function validateUpdateStrategy(spec: CloneSetSpec, allowOnDelete: boolean): FieldError[] {
  const path = 'spec.updateStrategy';
  const strategy = spec.updateStrategy ?? {};
  const errors: FieldError[] = [];
  const type = strategy.type ?? '';
  const onDelete = allowOnDelete && type === CLONESET_UPDATE_ON_DELETE;
  if (!onDelete && !(CLONESET_UPDATE_STRATEGY_TYPES as readonly string[]).includes(type)) {
    errors.push(notSupported(childPath(path, 'type'), type, CLONESET_UPDATE_STRATEGY_TYPES));
  }
  const numbers: Array<[string, number | string | undefined]> = [
    ['partition', strategy.partition],
    ['maxUnavailable', strategy.maxUnavailable],
    ['maxSurge', strategy.maxSurge],
  ];
  const malformed = new Set<string>();
  for (const [name, value] of numbers) {
    const problems = validateIntOrPercent(value, childPath(path, name));
    if (problems.length > 0) malformed.add(name);
    errors.push(...problems);
  }
  errors.push(...validateSurge(strategy, spec.replicas ?? 0, malformed));
  errors.push(...validatePriorityStrategy(strategy.priorityStrategy, childPath(path, 'priorityStrategy')));
  errors.push(...validateScatterStrategy(strategy.scatterStrategy, childPath(path, 'scatterStrategy')));
  return errors;
}

/** maxSurge and maxUnavailable together, skipping those already reported `malformed`. */
function validateSurge(
  strategy: NonNullable<CloneSetSpec['updateStrategy']>,
  replicas: number,
  malformed: ReadonlySet<string>,
): FieldError[] {
  const path = 'spec.updateStrategy';
  const errors: FieldError[] = [];
  const maxUnavailable = scaledValue(strategy.maxUnavailable ?? 0, replicas, true) ?? 0;
  const maxSurge = scaledValue(strategy.maxSurge ?? 0, replicas, true) ?? 0;
  if (!malformed.has('maxSurge') && strategy.type === 'InPlaceOnly' && maxSurge > 0) {
    errors.push(
      invalid(childPath(path, 'maxSurge'), strategy.maxSurge, 'can not use maxSurge with strategy type InPlaceOnly'),
    );
  }
  if (
    !malformed.has('maxUnavailable') &&
    !malformed.has('maxSurge') &&
    replicas > 0 &&
    maxUnavailable < 1 &&
    maxSurge < 1
  ) {
    errors.push(
      invalid(
        childPath(path, 'maxUnavailable'),
        strategy.maxUnavailable,
        `maxUnavailable and maxSurge should not both be less than 1 (they resolve to ${maxUnavailable} and ${maxSurge} of ${replicas} replicas)`,
      ),
    );
  }
  return errors;
}

const INT32_MAX = 2147483647;

/** OpenKruise v1.9: the deadline, unless "none" (MaxInt32), must exceed minReadySeconds. */
function validateProgressDeadline(spec: CloneSetSpec): FieldError[] {
  const deadline = spec.progressDeadlineSeconds;
  if (deadline === undefined || deadline === INT32_MAX) return [];
  const minReady = spec.minReadySeconds ?? 0;
  return deadline > minReady
    ? []
    : [invalid('spec.progressDeadlineSeconds', deadline, 'must be greater than minReadySeconds')];
}

/**
 * The semantic rules, on a CloneSet that passed the schema and was defaulted. `allowOnDelete`
 * is the controller's view: OpenKruise v1.9.0's webhook refuses `updateStrategy.type: OnDelete`,
 * but its controller acts on a CloneSet that has it (one written past the webhook).
 */
export function validateDefaultedCloneSet(cloneSet: CloneSet, allowOnDelete = false): FieldError[] {
  const { spec } = cloneSet;
  const claims = validateClaimTemplates(spec.volumeClaimTemplates);
  return [
    ...validateMetadata(cloneSet.metadata),
    ...validateWorkloadSelector(spec, 'cloneset'),
    ...claims.errors,
    ...validateTemplate(spec, claims.names),
    ...validateScaleStrategy(spec),
    ...validateUpdateStrategy(spec, allowOnDelete),
    ...validateLifecycle(spec.lifecycle, 'spec.lifecycle'),
    ...validateProgressDeadline(spec),
  ];
}

/**
 * Every problem with a CloneSet document, as field errors; empty when OpenKruise would accept it.
 * Never throws, whatever the input.
 */
export function validateCloneSet(document: unknown): FieldError[] {
  return validateObject(document, CLONESET_RULES);
}

/** How CloneSets are checked, for the shared validation pipeline. */
export const CLONESET_RULES: KindRules<CloneSet> = {
  kind: KruiseKind.CloneSet,
  schema: CloneSetSchema,
  defaults: defaultCloneSet,
  semantic: (cloneSet) => validateDefaultedCloneSet(cloneSet),
};

const CLONESET_CONTROLLER_RULES: KindRules<CloneSet> = {
  ...CLONESET_RULES,
  semantic: (cloneSet) => validateDefaultedCloneSet(cloneSet, true),
};

/**
 * What the CloneSet controller refuses to act on: every admission rule except the OnDelete
 * update type, which OpenKruise v1.9.0's controller implements although its webhook refuses it.
 */
export function validateCloneSetForController(document: unknown): FieldError[] {
  return validateObject(document, CLONESET_CONTROLLER_RULES);
}
