/**
 * Node selector terms, preferred terms and tolerations, checked as kube-apiserver checks them in a
 * pod spec (ValidateNodeSelectorTerm, ValidatePreferredSchedulingTerms, ValidateTolerations),
 * which is what OpenKruise v1.9 applies to a WorkloadSpread subset.
 */
import {
  childPath,
  type FieldError,
  forbidden,
  indexPath,
  invalid,
  notSupported,
  required,
} from '../../validation/field-error.js';
import { labelValueErrors, qualifiedNameErrors } from '../../validation/names.js';
import type { NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm, Toleration } from './schema.js';

const NODE_FIELD_KEYS = ['metadata.name'] as const;
const TOLERATION_OPERATORS = ['Equal', 'Exists'] as const;
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;

function validateExpression(expression: NodeSelectorRequirement, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const values = expression.values ?? [];
  const valuesPath = childPath(path, 'values');
  switch (expression.operator) {
    case 'In':
    case 'NotIn':
      if (values.length === 0) {
        errors.push(required(valuesPath, "must be specified when `operator` is 'In' or 'NotIn'"));
      }
      break;
    case 'Exists':
    case 'DoesNotExist':
      if (values.length > 0) {
        errors.push(forbidden(valuesPath, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      }
      break;
    case 'Gt':
    case 'Lt':
      if (values.length !== 1) {
        errors.push(required(valuesPath, "must be specified single value when `operator` is 'Lt' or 'Gt'"));
      } else if (!/^[+-]?[0-9]+$/.test(values[0] ?? '')) {
        errors.push(invalid(indexPath(valuesPath, 0), values[0], 'must be an integer'));
      }
      break;
    default:
      errors.push(invalid(childPath(path, 'operator'), expression.operator, 'not a valid selector operator'));
  }
  for (const m of qualifiedNameErrors(expression.key)) errors.push(invalid(childPath(path, 'key'), expression.key, m));
  return errors;
}

function validateFieldExpression(expression: NodeSelectorRequirement, path: string): FieldError[] {
  const errors: FieldError[] = [];
  if (expression.operator === 'In' || expression.operator === 'NotIn') {
    if ((expression.values ?? []).length !== 1) {
      errors.push(
        required(
          childPath(path, 'values'),
          "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
        ),
      );
    }
  } else {
    errors.push(invalid(childPath(path, 'operator'), expression.operator, 'not a valid selector operator'));
  }
  if (!(NODE_FIELD_KEYS as readonly string[]).includes(expression.key)) {
    errors.push(notSupported(childPath(path, 'key'), expression.key, NODE_FIELD_KEYS));
  }
  return errors;
}

/** One NodeSelectorTerm: each expression's operator, values and key. */
export function validateNodeSelectorTerm(term: NodeSelectorTerm, path: string): FieldError[] {
  return [
    ...(term.matchExpressions ?? []).flatMap((e, i) =>
      validateExpression(e, indexPath(childPath(path, 'matchExpressions'), i)),
    ),
    ...(term.matchFields ?? []).flatMap((e, i) =>
      validateFieldExpression(e, indexPath(childPath(path, 'matchFields'), i)),
    ),
  ];
}

/** Weights 1-100 and well-formed preferences. */
export function validatePreferredSchedulingTerms(
  terms: readonly PreferredSchedulingTerm[],
  path: string,
): FieldError[] {
  return terms.flatMap((term, i) => {
    const at = indexPath(path, i);
    const errors: FieldError[] = [];
    if (term.weight <= 0 || term.weight > 100) {
      errors.push(invalid(childPath(at, 'weight'), term.weight, 'must be in the range 1-100'));
    }
    return [...errors, ...validateNodeSelectorTerm(term.preference, childPath(at, 'preference'))];
  });
}

/** The key, or with no key the operator Exists; tolerationSeconds only with NoExecute. */
function tolerationKeyErrors(toleration: Toleration, at: string): FieldError[] {
  const errors: FieldError[] = [];
  const { key = '', operator = '', effect = '' } = toleration;
  if (key !== '') {
    for (const m of qualifiedNameErrors(key)) errors.push(invalid(childPath(at, 'key'), key, m));
  } else if (operator !== 'Exists') {
    errors.push(
      invalid(
        childPath(at, 'operator'),
        operator,
        'operator must be Exists when `key` is empty, which means "match all values and all keys"',
      ),
    );
  }
  if (toleration.tolerationSeconds !== undefined && effect !== 'NoExecute') {
    errors.push(invalid(childPath(at, 'effect'), effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"));
  }
  return errors;
}

/** Equal (or empty) takes a label value, Exists none; the effect one of the three. */
function tolerationValueErrors(toleration: Toleration, at: string): FieldError[] {
  const errors: FieldError[] = [];
  const { operator = '', value = '', effect = '' } = toleration;
  if (operator === '' || operator === 'Equal') {
    for (const m of labelValueErrors(value)) errors.push(invalid(childPath(at, 'operator'), value, m));
  } else if (operator === 'Exists') {
    if (value !== '') {
      errors.push(invalid(childPath(at, 'operator'), toleration, "value must be empty when `operator` is 'Exists'"));
    }
  } else {
    errors.push(notSupported(childPath(at, 'operator'), operator, TOLERATION_OPERATORS));
  }
  if (effect !== '' && !(TAINT_EFFECTS as readonly string[]).includes(effect)) {
    errors.push(notSupported(childPath(at, 'effect'), effect, TAINT_EFFECTS));
  }
  return errors;
}

/** Keys, operators, values and effects of tolerations, as kube-apiserver's pod validation. */
export function validateTolerations(tolerations: readonly Toleration[], path: string): FieldError[] {
  return tolerations.flatMap((toleration, i) => {
    const at = indexPath(path, i);
    return [...tolerationKeyErrors(toleration, at), ...tolerationValueErrors(toleration, at)];
  });
}
