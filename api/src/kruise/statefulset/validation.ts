/**
 * Advanced StatefulSet validation at either served version: the version's schema, then OpenKruise
 * v1.9's validating-webhook rules (pkg/webhook/statefulset/validating/statefulset_validation.go)
 * on the defaulted v1beta1 object. A v1alpha1 document is converted to v1beta1 first, as
 * OpenKruise's handlers do, so both versions are judged by the same rules.
 */
import {
  childPath,
  type FieldError,
  forbidden,
  invalid,
  notSupported,
  required,
  typeInvalid,
} from '../../validation/field-error.js';
import { parseIntOrPercent, scaledValue, type IntOrString } from '../../validation/intstr.js';
import { isRecord } from '../../validation/json.js';
import { dns1123LabelErrors } from '../../validation/names.js';
import {
  CONDITION_INPLACE_UPDATE_READY,
  KRUISE_API_VERSION,
  KRUISE_V1BETA1_API_VERSION,
  KruiseKind,
} from '../constants.js';
import { validateMetadata } from '../common/metadata-validation.js';
import { validatePodTemplate } from '../common/pod-validation.js';
import { validateClaimTemplates, validateWorkloadSelector } from '../common/workload-validation.js';
import { validateLifecycle, validatePriorityStrategy } from '../common/strategy-validation.js';
import { checkSchema, isReadable } from '../common/validate-object.js';
import { statefulSetToV1beta1 } from '../conversion/statefulset.js';
import {
  POD_MANAGEMENT_POLICIES,
  POD_UPDATE_POLICIES,
  PVC_RETENTION_POLICY_TYPES,
  STATEFULSET_MAX_MIN_READY_SECONDS,
  STATEFULSET_UPDATE_STRATEGY_TYPES,
} from './constants.js';
import { defaultStatefulSet } from './defaults.js';
import {
  STATEFULSET_V1BETA1_ONLY_SPEC,
  type StatefulSet,
  StatefulSetSchema,
  type StatefulSetSpec,
  StatefulSetV1alpha1Schema,
} from './schema.js';
import { parseReserveOrdinal } from './ordinals.js';

const ROLLING = 'spec.updateStrategy.rollingUpdate';

function validatePodManagementPolicy(spec: StatefulSetSpec): FieldError[] {
  const policy = spec.podManagementPolicy ?? '';
  if ((POD_MANAGEMENT_POLICIES as readonly string[]).includes(policy)) return [];
  return [notSupported('spec.podManagementPolicy', policy, POD_MANAGEMENT_POLICIES)];
}

/** Each entry a non-negative number or a range "a-b" with a ≤ b. */
function validateReserveOrdinals(spec: StatefulSetSpec): FieldError[] {
  const errors: FieldError[] = [];
  (spec.reserveOrdinals ?? []).forEach((entry, i) => {
    const parsed = parseReserveOrdinal(entry);
    if (!parsed.ok) errors.push(invalid(`spec.reserveOrdinals[${i}]`, entry, parsed.reason));
  });
  return errors;
}

/**
 * A positive count or percentage (resolving to at least 1 of 1); anything but the integer 1 only
 * with Parallel pod management.
 */
function validateMaxUnavailable(value: IntOrString, spec: StatefulSetSpec, path: string): FieldError[] {
  const parsed = parseIntOrPercent(value);
  if (parsed.kind === 'invalid') return [invalid(path, value, parsed.reason)];
  if (parsed.value < 0) return [invalid(path, value, 'must be greater than or equal to 0')];
  const errors: FieldError[] = [];
  if ((scaledValue(value, 1, true) ?? 0) < 1) errors.push(invalid(path, value, 'should not be less than 1'));
  if (spec.podManagementPolicy !== 'Parallel' && value !== 1) {
    errors.push(invalid(path, value, 'can only work with Parallel PodManagementPolicyType'));
  }
  return errors;
}

function validatePodUpdatePolicy(spec: StatefulSetSpec): FieldError[] {
  const policy = spec.updateStrategy?.rollingUpdate?.podUpdatePolicy ?? '';
  if (policy === '') return [required(childPath(ROLLING, 'podUpdatePolicy'))];
  if (!(POD_UPDATE_POLICIES as readonly string[]).includes(policy)) {
    return [notSupported(childPath(ROLLING, 'podUpdatePolicy'), policy, POD_UPDATE_POLICIES)];
  }
  if (policy === 'ReCreate') return [];
  const listed: unknown = spec.template.spec?.readinessGates ?? [];
  if (!Array.isArray(listed)) return [typeInvalid('spec.template.spec.readinessGates', listed, 'array')];
  const gates = listed as ReadonlyArray<{ conditionType?: string } | null>;
  if (gates.some((g) => g?.conditionType === CONDITION_INPLACE_UPDATE_READY)) return [];
  return [
    invalid(
      'spec.template.spec.readinessGates',
      gates,
      `must contains ${CONDITION_INPLACE_UPDATE_READY} when podUpdatePolicy is ${policy}`,
    ),
  ];
}

function validateRollingUpdate(spec: StatefulSetSpec): FieldError[] {
  const rolling = spec.updateStrategy?.rollingUpdate;
  if (!rolling) return [];
  // The schema keeps partition and minReadySeconds non-negative.
  const errors: FieldError[] = [];
  const minReady = rolling.minReadySeconds ?? 0;
  if (minReady > STATEFULSET_MAX_MIN_READY_SECONDS) {
    errors.push(
      invalid(
        childPath(ROLLING, 'minReadySeconds'),
        minReady,
        `must be no more than ${STATEFULSET_MAX_MIN_READY_SECONDS} seconds`,
      ),
    );
  }
  if (rolling.maxUnavailable === undefined) errors.push(required(childPath(ROLLING, 'maxUnavailable')));
  else errors.push(...validateMaxUnavailable(rolling.maxUnavailable, spec, childPath(ROLLING, 'maxUnavailable')));
  errors.push(...validatePodUpdatePolicy(spec));
  if (rolling.unorderedUpdate) {
    const at = childPath(ROLLING, 'unorderedUpdate');
    if (spec.podManagementPolicy !== 'Parallel') {
      errors.push(required(at, 'unorderedUpdate can only work with Parallel PodManagementPolicyType'));
    }
    errors.push(
      ...validatePriorityStrategy(rolling.unorderedUpdate.priorityStrategy, childPath(at, 'priorityStrategy')),
    );
  }
  return errors;
}

function validateUpdateStrategy(spec: StatefulSetSpec): FieldError[] {
  const type = spec.updateStrategy?.type ?? '';
  if (type === 'RollingUpdate') return validateRollingUpdate(spec);
  if (type === 'OnDelete') {
    return spec.updateStrategy?.rollingUpdate
      ? [invalid(ROLLING, spec.updateStrategy.rollingUpdate, "only allowed for updateStrategy 'RollingUpdate'")]
      : [];
  }
  return [notSupported('spec.updateStrategy.type', type, STATEFULSET_UPDATE_STRATEGY_TYPES)];
}

function validateRetention(spec: StatefulSetSpec): FieldError[] {
  const policy = spec.persistentVolumeClaimRetentionPolicy;
  if (!policy) return [];
  const errors: FieldError[] = [];
  for (const field of ['whenDeleted', 'whenScaled'] as const) {
    const value = policy[field] ?? '';
    if (!(PVC_RETENTION_POLICY_TYPES as readonly string[]).includes(value)) {
      errors.push(
        notSupported(`spec.persistentVolumeClaimRetentionPolicy.${field}`, value, PVC_RETENTION_POLICY_TYPES),
      );
    }
  }
  return errors;
}

function validateTemplate(spec: StatefulSetSpec, claimNames: string[]): FieldError[] {
  const errors = validatePodTemplate(spec.template, 'spec.template', claimNames);
  const podSpec = spec.template.spec ?? {};
  if (podSpec.restartPolicy !== undefined && podSpec.restartPolicy !== 'Always') {
    errors.push(notSupported('spec.template.spec.restartPolicy', podSpec.restartPolicy, ['Always']));
  }
  if (podSpec.activeDeadlineSeconds !== undefined) {
    errors.push(
      forbidden('spec.template.spec.activeDeadlineSeconds', 'activeDeadlineSeconds in StatefulSet is not Supported'),
    );
  }
  return errors;
}

/** The semantic rules, on a v1beta1 StatefulSet that passed the schema and was defaulted. */
export function validateDefaultedStatefulSet(set: StatefulSet): FieldError[] {
  const { spec } = set;
  const claims = validateClaimTemplates(spec.volumeClaimTemplates);
  const scaleMax = spec.scaleStrategy?.maxUnavailable;
  return [
    ...validateMetadata(set.metadata, { nameRules: dns1123LabelErrors }),
    ...validatePodManagementPolicy(spec),
    ...validateReserveOrdinals(spec),
    ...(scaleMax === undefined ? [] : validateMaxUnavailable(scaleMax, spec, 'spec.scaleStrategy.maxUnavailable')),
    ...validateUpdateStrategy(spec),
    ...validateRetention(spec),
    ...validateWorkloadSelector(spec, 'statefulset'),
    ...claims.errors,
    ...validateTemplate(spec, claims.names),
    ...validateLifecycle(spec.lifecycle, 'spec.lifecycle'),
  ];
}

export type StatefulSetOutcome = { ok: true; set: StatefulSet } | { ok: false; errors: FieldError[] };

/**
 * The document as a v1beta1 StatefulSet that semantic rules can read, or the schema errors that
 * stop it (with `errors` also holding problems found that leave it readable).
 */
function readStatefulSet(document: Record<string, unknown>): { set?: StatefulSet; errors: FieldError[] } {
  const { apiVersion, kind } = document;
  const errors: FieldError[] = [];
  if (typeof kind === 'string' && kind !== KruiseKind.StatefulSet) {
    errors.push(notSupported('kind', kind, [KruiseKind.StatefulSet]));
  }
  const versions = [KRUISE_API_VERSION, KRUISE_V1BETA1_API_VERSION];
  if (apiVersion !== KRUISE_API_VERSION && apiVersion !== KRUISE_V1BETA1_API_VERSION) {
    if (typeof apiVersion === 'string') errors.push(notSupported('apiVersion', apiVersion, versions));
  }
  const alpha = apiVersion === KRUISE_API_VERSION;
  const schema = alpha ? StatefulSetV1alpha1Schema : StatefulSetSchema;
  errors.push(...checkSchema(schema, document));
  if (!isReadable(schema, document)) return { errors };
  if (!alpha) return { set: document as unknown as StatefulSet, errors };
  // The v1beta1-only fields a v1alpha1 object carries in its conversion annotation are checked
  // against the v1beta1 schema once restored.
  const beta = statefulSetToV1beta1(document, KRUISE_V1BETA1_API_VERSION);
  const restored = checkSchema(StatefulSetSchema, beta).filter((e) =>
    STATEFULSET_V1BETA1_ONLY_SPEC.some(
      (f) =>
        e.path === `spec.${f}` || (/^[.[]/.test(e.path.slice(`spec.${f}`.length)) && e.path.startsWith(`spec.${f}`)),
    ),
  );
  errors.push(...restored);
  if (!isReadable(StatefulSetSchema, beta)) return { errors };
  return { set: beta as unknown as StatefulSet, errors };
}

/**
 * Every problem with a StatefulSet document of either version, as field errors; empty when
 * OpenKruise would accept it. Never throws, whatever the input.
 */
export function validateStatefulSet(document: unknown): FieldError[] {
  try {
    if (!isRecord(document)) return [typeInvalid('', document, 'object')];
    const { set, errors } = readStatefulSet(document);
    if (set) errors.push(...validateDefaultedStatefulSet(defaultStatefulSet(set)));
    return errors;
  } catch (cause) {
    return [
      { path: '', code: 'Internal', message: `Internal error: validation failed unexpectedly: ${String(cause)}` },
    ];
  }
}

/**
 * The document as a defaulted v1beta1 StatefulSet, or its field errors: what the controller and
 * the hub act on.
 */
export function parseStatefulSet(document: unknown): StatefulSetOutcome {
  const errors = validateStatefulSet(document);
  if (errors.length > 0 || !isRecord(document)) return { ok: false, errors };
  const { set } = readStatefulSet(document);
  return set ? { ok: true, set: defaultStatefulSet(set) } : { ok: false, errors };
}
