/**
 * NodeImage defaults as OpenKruise's mutating webhook applies them (SetDefaultsNodeImage in
 * apis/apps/defaults/v1alpha1.go): every tag gets a creation time and pull limits.
 */
import { cloneJson } from '../../validation/json.js';
import { DEFAULT_PULL_BACKOFF_LIMIT, DEFAULT_PULL_TIMEOUT_SECONDS } from '../imagepulljob/defaults.js';
import type { NodeImage } from './schema.js';

/** metav1.Time's JSON form: RFC 3339 in UTC, whole seconds. */
export function kubernetesTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * A copy of the NodeImage with OpenKruise's defaults applied; `now` stamps tags that have no
 * createdAt yet (inject it to stay deterministic). Idempotent.
 */
export function defaultNodeImage(nodeImage: NodeImage, now: Date = new Date()): NodeImage {
  const out = cloneJson(nodeImage);
  for (const image of Object.values(out.spec.images ?? {})) {
    for (const tag of image.tags) {
      tag.createdAt ??= kubernetesTime(now);
      const pull = (tag.pullPolicy ??= {});
      pull.timeoutSeconds ??= DEFAULT_PULL_TIMEOUT_SECONDS;
      pull.backoffLimit ??= DEFAULT_PULL_BACKOFF_LIMIT;
    }
  }
  return out;
}
