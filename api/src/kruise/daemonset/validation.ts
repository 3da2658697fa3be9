/**
 * Advanced DaemonSet validation: the schema, then OpenKruise v1.9's validating-webhook rules
 * (pkg/webhook/daemonset/validating/daemonset_validation.go) on the defaulted v1alpha1 form. The
 * partition's errors are reported at spec.updateStrategy.rollingUpdate.partition, where the field
 * is (OpenKruise's path repeats `rollingUpdate`).
 */
import {
  childPath,
  type FieldError,
  forbidden,
  invalid,
  notSupported,
  required,
} from '../../validation/field-error.js';
import { type IntOrString, parseIntOrPercent } from '../../validation/intstr.js';
import { isEmptySelector, selectorMatches, validateLabelSelector } from '../../validation/labels.js';
import { DAEMONSET_ROLLING_UPDATE_SURGING, DAEMONSET_UPDATE_STRATEGY_TYPES, KruiseKind } from '../constants.js';
import { validateMetadata } from '../common/metadata-validation.js';
import { validatePodTemplate } from '../common/pod-validation.js';
import { validateIntOrPercent, validateLifecycle } from '../common/strategy-validation.js';
import { type KindRules, validateObject } from '../common/validate-object.js';
import { defaultDaemonSet } from './defaults.js';
import { type DaemonSet, type DaemonSetRollingUpdate, DaemonSetSchema, type DaemonSetSpec } from './schema.js';

/** The rollingUpdateType values v1alpha1 admits, in OpenKruise's order. */
const V1ALPHA1_ROLLING_TYPES = ['Standard', DAEMONSET_ROLLING_UPDATE_SURGING, 'InPlaceIfPossible'] as const;

/** A non-empty selector that selects the template's labels. */
function validateSelector(spec: DaemonSetSpec): FieldError[] {
  const errors = validateLabelSelector(spec.selector, 'spec.selector');
  if (isEmptySelector(spec.selector)) {
    errors.push(invalid('spec.selector', spec.selector, 'empty selector is invalid for daemonset'));
  } else if (errors.length === 0 && !selectorMatches(spec.selector, spec.template.metadata?.labels ?? {})) {
    errors.push(
      invalid(
        'spec.template.metadata.labels',
        spec.template.metadata?.labels ?? {},
        '`selector` does not match template `labels`',
      ),
    );
  }
  return errors;
}

/** The value an int-or-percent states (a percentage's number); 0 when it cannot be read. */
function statedValue(value: IntOrString | undefined): number {
  if (value === undefined) return 0;
  const parsed = parseIntOrPercent(value);
  return parsed.kind === 'invalid' ? 0 : parsed.value;
}

/** A positive count or percentage that is at most 100%. */
function validatePositive(value: IntOrString, path: string): FieldError[] {
  const errors = validateIntOrPercent(value, path);
  if (errors.length > 0) return errors;
  const parsed = parseIntOrPercent(value);
  if (parsed.kind === 'percent' && parsed.value > 100) return [invalid(path, value, 'must not be greater than 100%')];
  return [];
}

/** Exactly one of maxUnavailable and maxSurge non-zero, each positive and at most 100%. */
function validateUnavailableAndSurge(rolling: DaemonSetRollingUpdate, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const unavailablePath = childPath(path, 'maxUnavailable');
  const surgePath = childPath(path, 'maxSurge');
  if (rolling.maxUnavailable !== undefined) errors.push(...validatePositive(rolling.maxUnavailable, unavailablePath));
  if (rolling.maxSurge !== undefined) errors.push(...validatePositive(rolling.maxSurge, surgePath));
  const hasUnavailable = statedValue(rolling.maxUnavailable) !== 0;
  const hasSurge = statedValue(rolling.maxSurge) !== 0;
  if (hasUnavailable && hasSurge) {
    errors.push(invalid(surgePath, rolling.maxSurge, 'may not be set when maxUnavailable is non-zero'));
  } else if (!hasUnavailable && !hasSurge) {
    errors.push(required(unavailablePath, 'cannot be 0 when maxSurge is 0'));
  }
  return errors;
}

/** The type's own rule on the two limits, or the type is unknown. */
function validateRollingType(rolling: DaemonSetRollingUpdate, path: string): FieldError[] {
  const type = rolling.rollingUpdateType ?? '';
  if (type === 'InPlaceIfPossible' && statedValue(rolling.maxSurge) !== 0) {
    return [required(childPath(path, 'maxSurge'), 'must be 0 for InPlaceIfPossible type')];
  }
  if (type === DAEMONSET_ROLLING_UPDATE_SURGING && statedValue(rolling.maxUnavailable) !== 0) {
    return [required(childPath(path, 'maxUnavailable'), 'must be 0 for Surging type')];
  }
  if (type !== '' && !(V1ALPHA1_ROLLING_TYPES as readonly string[]).includes(type)) {
    return [notSupported(childPath(path, 'rollingUpdateType'), type, V1ALPHA1_ROLLING_TYPES)];
  }
  return [];
}

function validateRollingUpdate(rolling: DaemonSetRollingUpdate, path: string): FieldError[] {
  const errors = [...validateUnavailableAndSurge(rolling, path), ...validateRollingType(rolling, path)];
  if (rolling.partition !== undefined) {
    errors.push(...validatePositive(rolling.partition, childPath(path, 'partition')));
  }
  if (rolling.selector) errors.push(...validateLabelSelector(rolling.selector, childPath(path, 'selector')));
  return errors;
}

function validateUpdateStrategy(spec: DaemonSetSpec): FieldError[] {
  const path = 'spec.updateStrategy';
  const strategy = spec.updateStrategy ?? {};
  switch (strategy.type) {
    case 'OnDelete':
      return [];
    case 'RollingUpdate':
      if (!strategy.rollingUpdate) return [required(childPath(path, 'rollingUpdate'))];
      return validateRollingUpdate(strategy.rollingUpdate, childPath(path, 'rollingUpdate'));
    default:
      return [notSupported(childPath(path, 'type'), strategy.type, DAEMONSET_UPDATE_STRATEGY_TYPES)];
  }
}

/** restartPolicy Always, no activeDeadlineSeconds, then the pod template rules. */
function validateTemplate(spec: DaemonSetSpec): FieldError[] {
  const errors: FieldError[] = [];
  const podSpec = spec.template.spec ?? {};
  if (podSpec.restartPolicy !== 'Always') {
    errors.push(notSupported('spec.template.spec.restartPolicy', podSpec.restartPolicy, ['Always']));
  }
  if (podSpec.activeDeadlineSeconds !== undefined) {
    errors.push(
      forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in DaemonSet is not Supported'),
    );
  }
  return [...errors, ...validatePodTemplate(spec.template, 'spec.template', [])];
}

function validateCounts(spec: DaemonSetSpec): FieldError[] {
  const errors: FieldError[] = [];
  if ((spec.minReadySeconds ?? 0) < 0) {
    errors.push(invalid('spec.minReadySeconds', spec.minReadySeconds, 'must be greater than or equal to 0'));
  }
  if ((spec.revisionHistoryLimit ?? 0) < 0) {
    errors.push(invalid('spec.revisionHistoryLimit', spec.revisionHistoryLimit, 'must be greater than or equal to 0'));
  }
  errors.push(...validateIntOrPercent(spec.burstReplicas, 'spec.burstReplicas'));
  return errors;
}

/** preDelete only: OpenKruise v1.9 refuses the inPlaceUpdate hook for DaemonSets. */
function validateDaemonSetLifecycle(spec: DaemonSetSpec): FieldError[] {
  const errors = validateLifecycle(spec.lifecycle, 'spec.lifecycle');
  if (spec.lifecycle?.inPlaceUpdate) {
    errors.push(forbidden('spec.lifecycle.inPlaceUpdate', 'inPlaceUpdate hook has not supported yet'));
  }
  return errors;
}

/** The semantic rules, on a DaemonSet that passed the schema and was defaulted. */
export function validateDefaultedDaemonSet(ds: DaemonSet): FieldError[] {
  return [
    ...validateMetadata(ds.metadata),
    ...validateSelector(ds.spec),
    ...validateTemplate(ds.spec),
    ...validateCounts(ds.spec),
    ...validateUpdateStrategy(ds.spec),
    ...validateDaemonSetLifecycle(ds.spec),
  ];
}

/** How DaemonSets are checked, for the shared validation pipeline. */
export const DAEMONSET_RULES: KindRules<DaemonSet> = {
  kind: KruiseKind.DaemonSet,
  schema: DaemonSetSchema,
  defaults: defaultDaemonSet,
  semantic: validateDefaultedDaemonSet,
};

/** Every problem with a (v1alpha1) DaemonSet document; empty when Flotilla accepts it. Never throws. */
export function validateDaemonSet(document: unknown): FieldError[] {
  return validateObject(document, DAEMONSET_RULES);
}
