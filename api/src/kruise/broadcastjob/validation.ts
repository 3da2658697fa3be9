/**
 * BroadcastJob validation: the schema, then OpenKruise v1.9's validating-webhook rules
 * (pkg/webhook/broadcastjob/validating) on the defaulted object. Flotilla also refuses what
 * OpenKruise lets through only to misbehave later: unknown policy types (which OpenKruise reads
 * as Always and as Continue), a zero deadline and malformed parallelism (negative counts are
 * the schema's).
 */
import { childPath, type FieldError, invalid, notSupported } from '../../validation/field-error.js';
import {
  BROADCASTJOB_FAILURE_POLICY_TYPES,
  COMPLETION_POLICY_TYPES,
  KruiseKind,
  LABEL_BROADCASTJOB_CONTROLLER_UID,
  LABEL_BROADCASTJOB_NAME,
} from '../constants.js';
import { validateMetadata } from '../common/metadata-validation.js';
import { validatePodTemplate } from '../common/pod-validation.js';
import { validateIntOrPercent } from '../common/strategy-validation.js';
import { type KindRules, validateObject } from '../common/validate-object.js';
import { defaultBroadcastJob } from './defaults.js';
import { type BroadcastJob, BroadcastJobSchema, type BroadcastJobSpec } from './schema.js';

const NAME_MAX_LENGTH = 63;
const NAME_PATTERN = /^[a-zA-Z0-9-]+$/;

/** OpenKruise's extra name rule: letters, digits and '-', at most 63 characters. */
function nameRules(name: string): string[] {
  const messages: string[] = [];
  if (!NAME_PATTERN.test(name)) {
    messages.push(
      "BroadcastJob name must consist of alphanumeric characters or '-' (e.g. 'example-com', regex used for validation is '^[a-zA-Z0-9\\-]+$')",
    );
  }
  if (name.length > NAME_MAX_LENGTH) messages.push(`must be no more than ${NAME_MAX_LENGTH} characters`);
  return messages;
}

/** Deadline and TTL only with Always; the deadline positive (the schema keeps the TTL non-negative). */
function validateCompletion(spec: BroadcastJobSpec): FieldError[] {
  const path = 'spec.completionPolicy';
  const { type = '', activeDeadlineSeconds, ttlSecondsAfterFinished } = spec.completionPolicy ?? {};
  if (!(COMPLETION_POLICY_TYPES as readonly string[]).includes(type)) {
    return [notSupported(childPath(path, 'type'), type, COMPLETION_POLICY_TYPES)];
  }
  const errors: FieldError[] = [];
  const ttlPath = childPath(path, 'ttlSecondsAfterFinished');
  const deadlinePath = childPath(path, 'activeDeadlineSeconds');
  if (type === 'Never') {
    if (ttlSecondsAfterFinished !== undefined) {
      errors.push(
        invalid(
          ttlPath,
          ttlSecondsAfterFinished,
          'ttlSecondsAfterFinished can just work with Always CompletionPolicyType',
        ),
      );
    }
    if (activeDeadlineSeconds !== undefined) {
      errors.push(
        invalid(
          deadlinePath,
          activeDeadlineSeconds,
          'activeDeadlineSeconds can just work with Always CompletionPolicyType',
        ),
      );
    }
    return errors;
  }
  if (activeDeadlineSeconds !== undefined && activeDeadlineSeconds <= 0) {
    errors.push(invalid(deadlinePath, activeDeadlineSeconds, 'must be greater than 0'));
  }
  return errors;
}

/** A known type; the schema keeps restartLimit non-negative. */
function validateFailurePolicy(spec: BroadcastJobSpec): FieldError[] {
  const path = 'spec.failurePolicy';
  const type = spec.failurePolicy?.type ?? '';
  if ((BROADCASTJOB_FAILURE_POLICY_TYPES as readonly string[]).includes(type)) return [];
  return [notSupported(childPath(path, 'type'), type, BROADCASTJOB_FAILURE_POLICY_TYPES)];
}

/** restartPolicy Never or OnFailure, the job's own labels not preset, then the pod template rules. */
function validateTemplate(spec: BroadcastJobSpec): FieldError[] {
  const errors: FieldError[] = [];
  const restartPolicy = spec.template.spec?.restartPolicy;
  if (restartPolicy !== 'Never' && restartPolicy !== 'OnFailure') {
    errors.push(
      invalid('spec.template.spec.restartPolicy', restartPolicy, 'pod restartPolicy can only be Never or OnFailure'),
    );
  }
  const labels = spec.template.metadata?.labels ?? {};
  if (labels[LABEL_BROADCASTJOB_NAME] || labels[LABEL_BROADCASTJOB_CONTROLLER_UID]) {
    errors.push(
      invalid(
        'spec.template.metadata.labels',
        labels,
        `"${LABEL_BROADCASTJOB_NAME}" and "${LABEL_BROADCASTJOB_CONTROLLER_UID}" are not allowed to preset in pod labels`,
      ),
    );
  }
  return [...errors, ...validatePodTemplate(spec.template, 'spec.template', [])];
}

/** The semantic rules, on a BroadcastJob that passed the schema and was defaulted. */
export function validateDefaultedBroadcastJob(job: BroadcastJob): FieldError[] {
  return [
    ...validateMetadata(job.metadata, { nameRules }),
    ...validateIntOrPercent(job.spec.parallelism, 'spec.parallelism'),
    ...validateCompletion(job.spec),
    ...validateFailurePolicy(job.spec),
    ...validateTemplate(job.spec),
  ];
}

/** How BroadcastJobs are checked, for the shared validation pipeline. */
export const BROADCASTJOB_RULES: KindRules<BroadcastJob> = {
  kind: KruiseKind.BroadcastJob,
  schema: BroadcastJobSchema,
  defaults: defaultBroadcastJob,
  semantic: validateDefaultedBroadcastJob,
};

/**
 * Every problem with a BroadcastJob document, as field errors; empty when Flotilla accepts it.
 * Never throws, whatever the input.
 */
export function validateBroadcastJob(document: unknown): FieldError[] {
  return validateObject(document, BROADCASTJOB_RULES);
}
