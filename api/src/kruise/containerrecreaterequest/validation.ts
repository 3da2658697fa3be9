/**
 * ContainerRecreateRequest validation: the schema, then OpenKruise v1.9's webhook rules on the
 * defaulted object (podName, a non-empty list of distinct containers, a deadline of at least 3 s,
 * non-negative graces, a known failurePolicy), and on UPDATE the immutability of the spec and of
 * the labels and annotation the webhook and controller set. Rules that need the pod are the
 * webhook's (fromPod.ts).
 */
import {
  childPath,
  duplicate,
  type FieldError,
  forbidden,
  indexPath,
  invalid,
  notSupported,
  required,
} from '../../validation/field-error.js';
import { isRecord } from '../../validation/json.js';
import {
  ANNOTATION_CRR_UNREADY_ACQUIRED,
  CRR_FAILURE_POLICIES,
  KruiseKind,
  LABEL_CRR_NODE_NAME,
  LABEL_CRR_POD_NAME,
  LABEL_CRR_POD_UID,
} from '../constants.js';
import { validateMetadata } from '../common/metadata-validation.js';
import { type KindRules, validateObject } from '../common/validate-object.js';
import { defaultContainerRecreateRequest } from './defaults.js';
import { type ContainerRecreateRequest, ContainerRecreateRequestSchema, type CrrSpec } from './schema.js';

/** OpenKruise refuses shorter deadlines: the daemon could not even start in time. */
export const CRR_MIN_DEADLINE_SECONDS = 3;

function validateContainers(spec: CrrSpec): FieldError[] {
  if (spec.containers.length === 0) return [required('spec.containers', 'containers list can not be null')];
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  spec.containers.forEach((c, i) => {
    const path = indexPath('spec.containers', i);
    if (!c.name) errors.push(required(childPath(path, 'name')));
    else if (seen.has(c.name)) errors.push(duplicate(childPath(path, 'name'), c.name));
    seen.add(c.name);
  });
  return errors;
}

const nonNegative = (path: string, value: number | undefined): FieldError[] =>
  value !== undefined && value < 0 ? [invalid(path, value, 'must be non-negative integer')] : [];

function validateStrategy(spec: CrrSpec): FieldError[] {
  const path = 'spec.strategy';
  const strategy = spec.strategy ?? {};
  const policy = strategy.failurePolicy ?? '';
  return [
    ...((CRR_FAILURE_POLICIES as readonly string[]).includes(policy)
      ? []
      : [notSupported(childPath(path, 'failurePolicy'), policy, CRR_FAILURE_POLICIES)]),
    ...nonNegative(childPath(path, 'terminationGracePeriodSeconds'), strategy.terminationGracePeriodSeconds),
    ...nonNegative(childPath(path, 'unreadyGracePeriodSeconds'), strategy.unreadyGracePeriodSeconds),
    ...nonNegative(childPath(path, 'minStartedSeconds'), strategy.minStartedSeconds),
  ];
}

/** The semantic rules, on a CRR that passed the schema and was defaulted. */
export function validateDefaultedContainerRecreateRequest(crr: ContainerRecreateRequest): FieldError[] {
  const { spec } = crr;
  const errors = [...validateMetadata(crr.metadata), ...validateContainers(spec), ...validateStrategy(spec)];
  if (!spec.podName) errors.push(required('spec.podName', 'podName can not be empty'));
  const deadline = spec.activeDeadlineSeconds;
  if (deadline !== undefined && deadline < CRR_MIN_DEADLINE_SECONDS) {
    errors.push(
      invalid(
        'spec.activeDeadlineSeconds',
        deadline,
        `activeDeadlineSeconds can not be less than ${CRR_MIN_DEADLINE_SECONDS}s`,
      ),
    );
  }
  errors.push(...nonNegative('spec.ttlSecondsAfterFinished', spec.ttlSecondsAfterFinished));
  return errors;
}

export const CRR_RULES: KindRules<ContainerRecreateRequest> = {
  kind: KruiseKind.ContainerRecreateRequest,
  schema: ContainerRecreateRequestSchema,
  defaults: defaultContainerRecreateRequest,
  semantic: validateDefaultedContainerRecreateRequest,
};

/** Every problem with a CRR document, as field errors; empty when it is acceptable. Never throws. */
export function validateContainerRecreateRequest(document: unknown): FieldError[] {
  return validateObject(document, CRR_RULES);
}

const IMMUTABLE_LABELS = [LABEL_CRR_POD_NAME, LABEL_CRR_POD_UID, LABEL_CRR_NODE_NAME] as const;

const metaMap = (o: unknown, field: 'labels' | 'annotations'): Record<string, unknown> => {
  const meta = isRecord(o) && isRecord(o.metadata) ? o.metadata : {};
  const map = meta[field];
  return isRecord(map) ? map : {};
};

/**
 * An UPDATE: the new object's own problems, then what may not change: the spec, the pod labels,
 * and the unready-acquired annotation once set (the controller releases the pod by it).
 */
export function validateContainerRecreateRequestUpdate(next: unknown, previous: unknown): FieldError[] {
  const errors = validateContainerRecreateRequest(next);
  if (errors.length > 0 || !isRecord(previous) || !isRecord(next)) return errors;
  if (JSON.stringify(next.spec) !== JSON.stringify(previous.spec)) {
    errors.push(forbidden('spec', 'spec of ContainerRecreateRequest is immutable'));
  }
  const [nextLabels, oldLabels] = [metaMap(next, 'labels'), metaMap(previous, 'labels')];
  for (const key of IMMUTABLE_LABELS) {
    if (nextLabels[key] !== oldLabels[key]) {
      errors.push(forbidden(`metadata.labels[${key}]`, `not allowed to update immutable label ${key}`));
    }
  }
  const oldAcquired = metaMap(previous, 'annotations')[ANNOTATION_CRR_UNREADY_ACQUIRED];
  if (oldAcquired && metaMap(next, 'annotations')[ANNOTATION_CRR_UNREADY_ACQUIRED] !== oldAcquired) {
    errors.push(
      forbidden(
        `metadata.annotations[${ANNOTATION_CRR_UNREADY_ACQUIRED}]`,
        `not allowed to update immutable annotation ${ANNOTATION_CRR_UNREADY_ACQUIRED}`,
      ),
    );
  }
  return errors;
}
