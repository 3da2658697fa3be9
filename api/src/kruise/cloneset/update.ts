/**
 * Rules for changing an existing CloneSet (validateCloneSetUpdate in OpenKruise's webhook and
 * ValidateCloneSetUpdate in its controller core).
 */
import { childPath, type FieldError, forbidden } from '../../validation/field-error.js';
import { cloneJson, firstDifference, jsonEqual, type JsonPathSegment } from '../../validation/json.js';
import { validateObjectUpdate } from '../common/validate-object.js';
import type { CloneSet } from './schema.js';
import { CLONESET_RULES } from './validation.js';

/** The spec fields an update may change; every other spec field is immutable. */
export const CLONESET_MUTABLE_SPEC_FIELDS: readonly string[] = [
  'replicas',
  'template',
  'lifecycle',
  'scaleStrategy',
  'updateStrategy',
  'minReadySeconds',
  'progressDeadlineSeconds',
  'volumeClaimTemplates',
  'revisionHistoryLimit',
];

const IMMUTABLE_MESSAGE =
  "updates to cloneset spec for fields other than 'replicas', 'template', 'lifecycle', 'scaleStrategy', 'updateStrategy', 'minReadySeconds', 'progressDeadlineSeconds', 'volumeClaimTemplates' and 'revisionHistoryLimit' are forbidden";

function renderPath(base: string, segments: readonly JsonPathSegment[]): string {
  return segments.reduce<string>((path, s) => (typeof s === 'number' ? `${path}[${s}]` : childPath(path, s)), base);
}

/**
 * Under InPlaceOnly the template spec may only change container images: the old and new specs
 * must be equal once the new images are put back to the old ones.
 */
function validateInPlaceOnlyChange(oldSet: CloneSet, newSet: CloneSet): FieldError[] {
  const oldSpec = oldSet.spec.template.spec ?? {};
  const newSpec = cloneJson(newSet.spec.template.spec ?? {});
  const oldContainers = oldSpec.containers ?? [];
  (newSpec.containers ?? []).forEach((container, i) => {
    const previous = oldContainers[i];
    if (previous && typeof previous.image === 'string' && typeof container.image === 'string') {
      container.image = previous.image;
    }
  });
  const difference = firstDifference(oldSpec, newSpec);
  if (!difference) return [];
  const pointer = `/${difference.path.join('/')}`;
  return [
    forbidden(
      renderPath('spec.template.spec', difference.path),
      `only allowed to update images in spec for InPlaceOnly, but found ${difference.op} ${pointer}`,
    ),
  ];
}

function validateImmutableFields(oldSet: CloneSet, newSet: CloneSet): FieldError[] {
  const errors: FieldError[] = [];
  const oldSpec: Record<string, unknown> = oldSet.spec;
  const newSpec: Record<string, unknown> = newSet.spec;
  const fields = new Set([...Object.keys(oldSpec), ...Object.keys(newSpec)]);
  for (const field of fields) {
    if (CLONESET_MUTABLE_SPEC_FIELDS.includes(field)) continue;
    if (!jsonEqual(oldSpec[field], newSpec[field])) errors.push(forbidden(childPath('spec', field), IMMUTABLE_MESSAGE));
  }
  for (const field of ['name', 'namespace'] as const) {
    const before = oldSet.metadata?.[field];
    if (before !== undefined && before !== newSet.metadata?.[field]) {
      errors.push(forbidden(childPath('metadata', field), 'field is immutable'));
    }
  }
  return errors;
}

function validateChanges(oldSet: CloneSet, newSet: CloneSet): FieldError[] {
  const errors = validateImmutableFields(oldSet, newSet);
  if (newSet.spec.updateStrategy?.type === 'InPlaceOnly') errors.push(...validateInPlaceOnlyChange(oldSet, newSet));
  return errors;
}

/**
 * Problems with replacing `oldDocument` by `newDocument`: everything validateCloneSet reports for
 * the new object, plus changes an update may not make (immutable spec fields, non-image template
 * changes under InPlaceOnly). Never throws.
 */
export function validateCloneSetUpdate(newDocument: unknown, oldDocument: unknown): FieldError[] {
  return validateObjectUpdate(newDocument, oldDocument, CLONESET_RULES, validateChanges);
}
