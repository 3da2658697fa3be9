/**
 * Labels, annotations and label selectors as Kubernetes validates and evaluates them
 * (apimachinery's ValidateLabels, ValidateAnnotations, ValidateLabelSelector, labels.Selector).
 */
import { childPath, type FieldError, indexPath, invalid, notSupported, required, tooLong } from './field-error.js';
import { labelValueErrors, qualifiedNameErrors } from './names.js';

/** The shape of metav1.LabelSelector that validation and matching read. */
export interface LabelSelectorLike {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: ReadonlyArray<{
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }>;
}

export const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

/** kube-apiserver's limit on the summed size of all annotation keys and values. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/** Label keys must be qualified names and values valid label values. */
export function validateLabels(labels: Readonly<Record<string, string>>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(labels)) {
    for (const m of qualifiedNameErrors(key)) errors.push(invalid(path, key, m));
    for (const m of labelValueErrors(value)) errors.push(invalid(indexPath(path, key), value, m));
  }
  return errors;
}

/** Annotation keys must be qualified names (case-insensitively); the total size is capped. */
export function validateAnnotations(annotations: Readonly<Record<string, string>>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  let size = 0;
  for (const [key, value] of Object.entries(annotations)) {
    for (const m of qualifiedNameErrors(key.toLowerCase())) errors.push(invalid(path, key, m));
    size += key.length + value.length;
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errors.push(tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errors;
}

/** True when the selector has neither matchLabels nor matchExpressions (it selects everything). */
export function isEmptySelector(selector: LabelSelectorLike): boolean {
  return Object.keys(selector.matchLabels ?? {}).length + (selector.matchExpressions ?? []).length === 0;
}

/** Keys, operators and value lists of a selector, checked the way kube-apiserver checks them. */
export function validateLabelSelector(selector: LabelSelectorLike, path: string): FieldError[] {
  const errors = validateLabels(selector.matchLabels ?? {}, childPath(path, 'matchLabels'));
  (selector.matchExpressions ?? []).forEach((expression, i) => {
    const at = indexPath(childPath(path, 'matchExpressions'), i);
    const values = expression.values ?? [];
    switch (expression.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) {
          errors.push(required(childPath(at, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
        }
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length > 0) {
          errors.push(
            invalid(
              childPath(at, 'values'),
              values[0],
              "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
          );
        }
        break;
      default:
        errors.push(notSupported(childPath(at, 'operator'), expression.operator, SELECTOR_OPERATORS));
    }
    for (const m of qualifiedNameErrors(expression.key)) errors.push(invalid(childPath(at, 'key'), expression.key, m));
    values.forEach((value, j) => {
      for (const m of labelValueErrors(value)) errors.push(invalid(indexPath(childPath(at, 'values'), j), value, m));
    });
  });
  return errors;
}

/**
 * Whether a set of labels is selected. An empty selector selects everything, as
 * metav1.LabelSelectorAsSelector does; an unknown operator selects nothing.
 */
export function selectorMatches(selector: LabelSelectorLike, labels: Readonly<Record<string, string>>): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!Object.hasOwn(labels, key) || labels[key] !== value) return false;
  }
  return (selector.matchExpressions ?? []).every((expression) => expressionMatches(expression, labels));
}

type SelectorExpression = NonNullable<LabelSelectorLike['matchExpressions']>[number];

function expressionMatches(
  { key, operator, values = [] }: SelectorExpression,
  labels: Readonly<Record<string, string>>,
): boolean {
  const has = Object.hasOwn(labels, key);
  const value = labels[key] ?? '';
  switch (operator) {
    case 'In':
      return has && values.includes(value);
    case 'NotIn':
      return !has || !values.includes(value);
    case 'Exists':
      return has;
    case 'DoesNotExist':
      return !has;
    default:
      return false;
  }
}
