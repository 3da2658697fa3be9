/**
 * Rules for changing an existing Advanced DaemonSet (validateDaemonSetUpdate in OpenKruise v1.9's
 * webhook): only burstReplicas, template, lifecycle, updateStrategy, minReadySeconds,
 * revisionHistoryLimit and (v1beta1's) scaleStrategy may change. The comparison runs on the
 * v1alpha1 form, where scaleStrategy is an annotation, so it never counts as a spec change.
 */
import { type FieldError, forbidden } from '../../validation/field-error.js';
import { jsonEqual } from '../../validation/json.js';
import { validateObjectUpdate } from '../common/validate-object.js';
import type { DaemonSet } from './schema.js';
import { DAEMONSET_RULES } from './validation.js';

export const DAEMONSET_MUTABLE_SPEC_FIELDS: readonly string[] = [
  'burstReplicas',
  'template',
  'lifecycle',
  'updateStrategy',
  'minReadySeconds',
  'revisionHistoryLimit',
  'scaleStrategy',
];

const IMMUTABLE_MESSAGE =
  "updates to daemonset spec for fields other than 'BurstReplicas', 'template', 'lifecycle', 'scaleStrategy', 'updateStrategy', 'minReadySeconds', and 'revisionHistoryLimit' are forbidden";

function compare(oldSet: DaemonSet, newSet: DaemonSet): FieldError[] {
  const oldSpec: Record<string, unknown> = oldSet.spec;
  const newSpec: Record<string, unknown> = newSet.spec;
  const keys = new Set([...Object.keys(oldSpec), ...Object.keys(newSpec)]);
  for (const key of keys) {
    if (DAEMONSET_MUTABLE_SPEC_FIELDS.includes(key)) continue;
    if (!jsonEqual(oldSpec[key], newSpec[key])) return [forbidden('spec', IMMUTABLE_MESSAGE)];
  }
  return [];
}

/** Problems with replacing `previous` by `next`: next's own, then the immutable fields. Never throws. */
export function validateDaemonSetUpdate(next: unknown, previous: unknown): FieldError[] {
  return validateObjectUpdate(next, previous, DAEMONSET_RULES, compare);
}
