/**
 * What an update of an Advanced StatefulSet may change (OpenKruise v1.9 ValidateStatefulSetUpdate):
 * replicas, ordinals, template, reserveOrdinals, lifecycle, revisionHistoryLimit,
 * persistentVolumeClaimRetentionPolicy, scaleStrategy, volumeClaimTemplates,
 * volumeClaimUpdateStrategy and updateStrategy. Everything else in the spec (selector,
 * serviceName, podManagementPolicy) is fixed at creation.
 */
import { type FieldError, forbidden } from '../../validation/field-error.js';
import { isRecord, jsonEqual } from '../../validation/json.js';
import { statefulSetToV1beta1 } from '../conversion/statefulset.js';
import { KRUISE_API_VERSION, KRUISE_V1BETA1_API_VERSION } from '../constants.js';
import { defaultStatefulSet } from './defaults.js';
import type { StatefulSet, StatefulSetSpec } from './schema.js';
import { parseStatefulSet, validateStatefulSet } from './validation.js';

const MUTABLE: ReadonlySet<string> = new Set([
  'replicas',
  'ordinals',
  'template',
  'reserveOrdinals',
  'lifecycle',
  'revisionHistoryLimit',
  'persistentVolumeClaimRetentionPolicy',
  'scaleStrategy',
  'volumeClaimTemplates',
  'volumeClaimUpdateStrategy',
  'updateStrategy',
]);

const MESSAGE =
  "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'reserveOrdinals', 'lifecycle', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy', `volumeClaimTemplates`, `VolumeClaimUpdateStrategy` and 'updateStrategy' are forbidden";

function fixedPart(spec: StatefulSetSpec): Record<string, unknown> {
  return Object.fromEntries(Object.entries(spec).filter(([key]) => !MUTABLE.has(key)));
}

/** The stored object as a defaulted v1beta1 StatefulSet, trusted as it is; undefined if unreadable. */
function previousSet(previous: unknown): StatefulSet | undefined {
  if (!isRecord(previous) || !isRecord(previous.spec)) return undefined;
  const beta =
    previous.apiVersion === KRUISE_API_VERSION ? statefulSetToV1beta1(previous, KRUISE_V1BETA1_API_VERSION) : previous;
  return defaultStatefulSet(beta as unknown as StatefulSet, false);
}

/** Everything validateStatefulSet reports for `next`, plus changes to fixed spec fields. Never throws. */
export function validateStatefulSetUpdate(next: unknown, previous: unknown): FieldError[] {
  const errors = validateStatefulSet(next);
  if (errors.length > 0) return errors;
  try {
    const parsed = parseStatefulSet(next);
    const old = previousSet(previous);
    if (parsed.ok && old && !jsonEqual(fixedPart(parsed.set.spec), fixedPart(old.spec))) {
      errors.push(forbidden('spec', MESSAGE));
    }
  } catch (cause) {
    errors.push({
      path: '',
      code: 'Internal',
      message: `Internal error: validation failed unexpectedly: ${String(cause)}`,
    });
  }
  return errors;
}
