/**
 * Rules for changing an existing SidecarSet (validateSidecarContainerConflict in OpenKruise's
 * webhook): containers keep their upgrade type, and no container may appear that the stored
 * SidecarSet does not have.
 */
import { childPath, type FieldError, indexPath, invalid } from '../../validation/field-error.js';
import { validateObjectUpdate } from '../common/validate-object.js';
import type { SidecarSet } from './schema.js';
import { SIDECARSET_RULES } from './validation.js';

function validateContainerChanges(oldSet: SidecarSet, newSet: SidecarSet): FieldError[] {
  const errors: FieldError[] = [];
  const oldTypes = new Map((oldSet.spec.containers ?? []).map((c) => [c.name, c.upgradeStrategy?.upgradeType ?? '']));
  (newSet.spec.containers ?? []).forEach((container, i) => {
    const path = indexPath('spec.containers', i);
    const oldType = oldTypes.get(container.name);
    if (oldType === undefined) {
      errors.push(
        invalid(
          childPath(path, 'name'),
          container.name,
          `container ${container.name} is not found in the stored SidecarSet`,
        ),
      );
    } else if (oldType !== '' && container.upgradeStrategy?.upgradeType !== oldType) {
      errors.push(
        invalid(
          childPath(path, 'upgradeStrategy.upgradeType'),
          container.upgradeStrategy?.upgradeType,
          `container ${container.name} upgradeType is immutable`,
        ),
      );
    }
  });
  return errors;
}

/**
 * Problems with replacing `oldDocument` by `newDocument`: everything validateSidecarSet reports
 * for the new object, plus changes an update may not make. Never throws.
 */
export function validateSidecarSetUpdate(newDocument: unknown, oldDocument: unknown): FieldError[] {
  return validateObjectUpdate(newDocument, oldDocument, SIDECARSET_RULES, validateContainerChanges);
}
