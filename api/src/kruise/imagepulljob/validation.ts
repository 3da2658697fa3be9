/**
 * ImagePullJob validation: the schema, then OpenKruise's validating-webhook rules
 * (pkg/webhook/imagepulljob/validating) on the defaulted object.
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
import { parseImageReference } from '../../validation/image-ref.js';
import { validateAnnotations, validateLabels, validateLabelSelector } from '../../validation/labels.js';
import { dns1123SubdomainErrors } from '../../validation/names.js';
import { COMPLETION_POLICY_TYPES, IMAGE_PULL_POLICIES, KruiseKind } from '../constants.js';
import { validateMetadata } from '../common/metadata-validation.js';
import { type KindRules, validateObject } from '../common/validate-object.js';
import { DEFAULT_PULL_TIMEOUT_SECONDS, defaultImagePullJob } from './defaults.js';
import { type ImagePullJob, ImagePullJobSchema, type ImagePullJobSpec } from './schema.js';

function validateImage(spec: ImagePullJobSpec): FieldError[] {
  if (spec.image === '') return [required('spec.image', 'image can not be empty')];
  const parsed = parseImageReference(spec.image);
  return parsed.ok ? [] : [invalid('spec.image', spec.image, `invalid image reference: ${parsed.reason}`)];
}

/** Nodes by names or by labels, never both; pods instead of nodes excludes both. */
function validateTargets(spec: ImagePullJobSpec): FieldError[] {
  const errors: FieldError[] = [];
  const { selector, podSelector } = spec;
  if (selector) {
    const hasLabels = selector.matchLabels !== undefined || selector.matchExpressions !== undefined;
    if (hasLabels && selector.names !== undefined) {
      errors.push(forbidden('spec.selector.names', 'can not set both names and labelSelector in this spec.selector'));
    }
    errors.push(...validateLabelSelector(selector, 'spec.selector'));
    const seen = new Set<string>();
    (selector.names ?? []).forEach((name, i) => {
      const at = indexPath('spec.selector.names', i);
      if (name === '') errors.push(required(at));
      if (seen.has(name)) errors.push(duplicate(at, name));
      seen.add(name);
    });
  }
  if (podSelector) {
    if (selector) errors.push(forbidden('spec.podSelector', 'can not set both selector and podSelector'));
    errors.push(...validateLabelSelector(podSelector, 'spec.podSelector'));
  }
  return errors;
}

/** Deadline and TTL only for Always jobs; the deadline must leave room for one pull attempt. */
function validateCompletion(spec: ImagePullJobSpec): FieldError[] {
  const path = 'spec.completionPolicy';
  const completion = spec.completionPolicy ?? {};
  const type = completion.type ?? '';
  if (!(COMPLETION_POLICY_TYPES as readonly string[]).includes(type)) {
    return [notSupported(childPath(path, 'type'), type, COMPLETION_POLICY_TYPES)];
  }
  const errors: FieldError[] = [];
  const { activeDeadlineSeconds, ttlSecondsAfterFinished } = completion;
  if (type === 'Never') {
    const message = 'activeDeadlineSeconds and ttlSecondsAfterFinished can only work with Always CompletionPolicyType';
    if (activeDeadlineSeconds !== undefined) errors.push(forbidden(childPath(path, 'activeDeadlineSeconds'), message));
    if (ttlSecondsAfterFinished !== undefined)
      errors.push(forbidden(childPath(path, 'ttlSecondsAfterFinished'), message));
    return errors;
  }
  const timeout = spec.pullPolicy?.timeoutSeconds ?? DEFAULT_PULL_TIMEOUT_SECONDS;
  if (activeDeadlineSeconds !== undefined && activeDeadlineSeconds < timeout) {
    errors.push(
      invalid(
        childPath(path, 'activeDeadlineSeconds'),
        activeDeadlineSeconds,
        `completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds (${timeout})`,
      ),
    );
  }
  return errors;
}

const INT32_MAX = 2147483647;

/**
 * OpenKruise v1.9: a count of nodes, as a number or a numeric string (0 holds the job back);
 * a percentage is refused with v1.9's message.
 */
function validateParallelism(value: ImagePullJobSpec['parallelism']): FieldError[] {
  const path = 'spec.parallelism';
  if (value === undefined) return [];
  if (typeof value === 'string' && value.endsWith('%')) {
    return [invalid(path, value, 'parallelism does not support percentage value')];
  }
  const count = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof count !== 'number' || !Number.isInteger(count) || count > INT32_MAX) {
    return [invalid(path, value, 'must be a whole number of nodes, such as 2 or "2"')];
  }
  return count < 0 ? [invalid(path, value, 'must be greater than or equal to 0')] : [];
}

function validateOthers(spec: ImagePullJobSpec): FieldError[] {
  const errors = validateParallelism(spec.parallelism);
  if (
    spec.imagePullPolicy !== undefined &&
    !(IMAGE_PULL_POLICIES as readonly string[]).includes(spec.imagePullPolicy)
  ) {
    errors.push(notSupported('spec.imagePullPolicy', spec.imagePullPolicy, IMAGE_PULL_POLICIES));
  }
  (spec.pullSecrets ?? []).forEach((name, i) => {
    const at = indexPath('spec.pullSecrets', i);
    for (const m of dns1123SubdomainErrors(name)) errors.push(invalid(at, name, m));
  });
  errors.push(...validateLabels(spec.sandboxConfig?.labels ?? {}, 'spec.sandboxConfig.labels'));
  errors.push(...validateAnnotations(spec.sandboxConfig?.annotations ?? {}, 'spec.sandboxConfig.annotations'));
  return errors;
}

/** The semantic rules, on an ImagePullJob that passed the schema and was defaulted. */
export function validateDefaultedImagePullJob(job: ImagePullJob): FieldError[] {
  return [
    ...validateMetadata(job.metadata),
    ...validateImage(job.spec),
    ...validateTargets(job.spec),
    ...validateCompletion(job.spec),
    ...validateOthers(job.spec),
  ];
}

/** How ImagePullJobs are checked, for the shared validation pipeline. */
export const IMAGEPULLJOB_RULES: KindRules<ImagePullJob> = {
  kind: KruiseKind.ImagePullJob,
  schema: ImagePullJobSchema,
  defaults: (job) => defaultImagePullJob(job),
  semantic: validateDefaultedImagePullJob,
};

/**
 * Every problem with an ImagePullJob document, as field errors; empty when OpenKruise would
 * accept it. Never throws, whatever the input.
 */
export function validateImagePullJob(document: unknown): FieldError[] {
  return validateObject(document, IMAGEPULLJOB_RULES);
}
