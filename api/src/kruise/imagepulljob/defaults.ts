/**
 * ImagePullJob defaults as OpenKruise's mutating webhook applies them (SetDefaultsImagePullJob in
 * apis/apps/defaults/v1alpha1.go).
 */
import { cloneJson } from '../../validation/json.js';
import { FINALIZER_DELETION_PROTECTION } from '../constants.js';
import type { ImagePullJob } from './schema.js';

export const DEFAULT_PULL_TIMEOUT_SECONDS = 600;
export const DEFAULT_PULL_BACKOFF_LIMIT = 3;
/**
 * Nodes pulling at once when spec.parallelism is unset. OpenKruise's webhook leaves the field
 * unset and its controller reads it as 1; stored objects stay as OpenKruise stores them.
 */
export const DEFAULT_IMAGE_PULL_JOB_PARALLELISM = 1;

export interface ImagePullJobDefaultOptions {
  /**
   * Add the deletion-protection finalizer, which lets the controller clean up copied pull
   * secrets. OpenKruise adds it when the job is created, not on later updates. Default true.
   */
  readonly addProtectionFinalizer?: boolean;
}

/** A copy of the ImagePullJob with OpenKruise's defaults applied. Idempotent. */
export function defaultImagePullJob(job: ImagePullJob, options: ImagePullJobDefaultOptions = {}): ImagePullJob {
  const out = cloneJson(job);
  const spec = out.spec;
  const completion = (spec.completionPolicy ??= {});
  if (!completion.type) completion.type = 'Always';
  const pull = (spec.pullPolicy ??= {});
  pull.timeoutSeconds ??= DEFAULT_PULL_TIMEOUT_SECONDS;
  pull.backoffLimit ??= DEFAULT_PULL_BACKOFF_LIMIT;
  if (!spec.imagePullPolicy) spec.imagePullPolicy = 'IfNotPresent';
  if (options.addProtectionFinalizer ?? true) {
    const metadata = (out.metadata ??= {});
    const finalizers = (metadata.finalizers ??= []);
    if (!finalizers.includes(FINALIZER_DELETION_PROTECTION)) finalizers.push(FINALIZER_DELETION_PROTECTION);
  }
  return out;
}
