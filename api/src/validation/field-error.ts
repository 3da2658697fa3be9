/**
 * Field errors in the shape Kubernetes reports them: a field path in the API's own notation
 * (`spec.template.spec.containers[0].image`), a message a user can act on, and a code named after
 * apimachinery's `field.ErrorType` so callers can map errors to HTTP statuses or webhook results.
 */

/** What kind of problem a field has; mirrors Kubernetes' field.ErrorType names. */
export type FieldErrorCode =
  | 'Required'
  | 'Invalid'
  | 'NotSupported'
  | 'Forbidden'
  | 'Duplicate'
  | 'NotFound'
  | 'TypeInvalid'
  | 'TooLong'
  | 'TooMany'
  | 'UnknownField'
  | 'Internal';

/** One problem with one field of an object. `path` is '' for the object itself. */
export interface FieldError {
  readonly path: string;
  readonly message: string;
  readonly code: FieldErrorCode;
}

/** `spec` + `replicas` → `spec.replicas`; the root path is ''. */
export function childPath(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

/** `spec.containers` + 0 → `spec.containers[0]`; map keys use the same brackets: `labels[app]`. */
export function indexPath(path: string, index: number | string): string {
  return `${path}[${index}]`;
}

const MAX_RENDERED_VALUE = 80;

const isScalar = (v: unknown): boolean => v === null || ['string', 'number', 'boolean'].includes(typeof v);

/**
 * Renders a value for a message. Scalars and flat maps of scalars (labels, selectors'
 * matchLabels) are shown as JSON, cut to a readable length; anything nested is only named, so
 * rendering stays cheap and can never fail on odd input.
 */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') {
    const shown = value.length > MAX_RENDERED_VALUE ? `${value.slice(0, MAX_RENDERED_VALUE)}...` : value;
    return JSON.stringify(shown);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'array';
  if (typeof value !== 'object') return typeof value;
  const entries = Object.entries(value);
  if (entries.length > 10 || !entries.every(([, v]) => isScalar(v))) return 'object';
  const json = JSON.stringify(Object.fromEntries(entries));
  return json.length > MAX_RENDERED_VALUE ? `${json.slice(0, MAX_RENDERED_VALUE)}...` : json;
}

/** The field must be set. */
export function required(path: string, detail?: string): FieldError {
  return { path, code: 'Required', message: detail ? `Required value: ${detail}` : 'Required value' };
}

/** The value is of the right type but not acceptable. */
export function invalid(path: string, value: unknown, detail: string): FieldError {
  return { path, code: 'Invalid', message: `Invalid value: ${describeValue(value)}: ${detail}` };
}

/** The value is not one of an enumerated set. */
export function notSupported(path: string, value: unknown, supported: readonly string[]): FieldError {
  const list = supported.map((s) => JSON.stringify(s)).join(', ');
  return {
    path,
    code: 'NotSupported',
    message: `Unsupported value: ${describeValue(value)}: supported values: ${list}`,
  };
}

/** The field may not be set (here, or in this combination). */
export function forbidden(path: string, detail: string): FieldError {
  return { path, code: 'Forbidden', message: `Forbidden: ${detail}` };
}

/** The value repeats an earlier one in a list that must be unique. */
export function duplicate(path: string, value: unknown): FieldError {
  return { path, code: 'Duplicate', message: `Duplicate value: ${describeValue(value)}` };
}

/** The value refers to something (a volume, a container) that does not exist. */
export function notFound(path: string, value: unknown, detail?: string): FieldError {
  return { path, code: 'NotFound', message: `Not found: ${describeValue(value)}${detail ? `: ${detail}` : ''}` };
}

/** The value is longer than allowed. */
export function tooLong(path: string, max: number): FieldError {
  return { path, code: 'TooLong', message: `Too long: may not be more than ${max} characters` };
}

/** The list or map holds more entries than allowed. */
export function tooMany(path: string, actual: number, max: number): FieldError {
  return { path, code: 'TooMany', message: `Too many: ${actual}: must have at most ${max} items` };
}

/** The value has the wrong JSON type. */
export function typeInvalid(path: string, value: unknown, expected: string): FieldError {
  return { path, code: 'TypeInvalid', message: `Invalid value: ${describeValue(value)}: must be of type ${expected}` };
}

/** The field is not declared by the schema (strict field validation, like kube-apiserver's). */
export function unknownField(path: string): FieldError {
  return { path, code: 'UnknownField', message: `unknown field ${JSON.stringify(path)}` };
}

/** One line per error, `path: message`, the way kubectl prints admission errors. */
export function formatFieldError(error: FieldError): string {
  return error.path === '' ? error.message : `${error.path}: ${error.message}`;
}
