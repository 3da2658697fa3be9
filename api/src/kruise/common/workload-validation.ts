/**
 * Rules every pod-owning workload of OpenKruise's shares (CloneSet, Advanced StatefulSet): a
 * non-empty selector that selects the template's own labels, and claim templates whose names
 * can be pod volume names.
 */
import { duplicate, type FieldError, invalid, required } from '../../validation/field-error.js';
import {
  isEmptySelector,
  type LabelSelectorLike,
  selectorMatches,
  validateLabelSelector,
} from '../../validation/labels.js';
import { dns1123LabelErrors } from '../../validation/names.js';
import type { PersistentVolumeClaimTemplate, PodTemplateSpec } from './pod.js';

/** A valid, non-empty spec.selector matching spec.template's labels; `kind` ends the empty-selector message. */
export function validateWorkloadSelector(
  spec: { selector: LabelSelectorLike; template: PodTemplateSpec },
  kind: string,
): FieldError[] {
  const errors = validateLabelSelector(spec.selector, 'spec.selector');
  if (isEmptySelector(spec.selector)) {
    errors.push(invalid('spec.selector', spec.selector, `empty selector is invalid for ${kind}`));
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

/** Claim templates become pod volumes: each named, a DNS label, unique. Returns the names too. */
export function validateClaimTemplates(templates: readonly PersistentVolumeClaimTemplate[] | undefined): {
  errors: FieldError[];
  names: string[];
} {
  const errors: FieldError[] = [];
  const names: string[] = [];
  (templates ?? []).forEach((claim, i) => {
    const at = `spec.volumeClaimTemplates[${i}].metadata.name`;
    const name = claim.metadata?.name ?? '';
    if (name === '') errors.push(required(at, 'every claim template needs a name'));
    else for (const m of dns1123LabelErrors(name)) errors.push(invalid(at, name, m));
    if (names.includes(name)) errors.push(duplicate(at, name));
    names.push(name);
  });
  return { errors, names };
}
