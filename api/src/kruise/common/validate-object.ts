/**
 * The validation pipeline every kind shares, in kube-apiserver's order: the document's JSON
 * shape against the schema (types, required and unknown fields), then defaulting, then the
 * semantic rules of OpenKruise's validating webhook on the defaulted object.
 */
import type { TSchema } from 'typebox';
import { Compile, type Validator } from 'typebox/compile';
import { type FieldError, notSupported, typeInvalid } from '../../validation/field-error.js';
import { isRecord } from '../../validation/json.js';
import { toFieldErrors } from '../../validation/schema-errors.js';
import { KRUISE_API_VERSION } from '../constants.js';

/** How one kind is checked. */
export interface KindRules<T> {
  readonly kind: string;
  /** The apiVersion documents must have (default apps.kruise.io/v1alpha1). */
  readonly apiVersion?: string;
  readonly schema: TSchema;
  /** Applies the kind's defaults to a copy; only called on documents that pass isReadable. */
  readonly defaults: (object: T) => T;
  /** Semantic rules on the defaulted object. */
  readonly semantic: (object: T) => FieldError[];
}

/** Compiled validators by schema: compiling is the expensive part, so it happens once per schema. */
const validators = new WeakMap<TSchema, Validator>();
const shapeValidators = new WeakMap<TSchema, Validator>();

function compiled(cache: WeakMap<TSchema, Validator>, schema: TSchema, build: () => TSchema): Validator {
  let validator = cache.get(schema);
  if (!validator) {
    validator = Compile(build());
    cache.set(schema, validator);
  }
  return validator;
}

/**
 * The schema errors of a document (types, required fields, unknown fields) as field errors.
 * TypeBox reports at most 8 errors per check (its guard against huge error lists), so a document
 * with many problems shows the first ones; the rest appear once those are fixed.
 */
export function checkSchema(schema: TSchema, document: unknown): FieldError[] {
  const validator = compiled(validators, schema, () => schema);
  if (validator.Check(document)) return [];
  return toFieldErrors(schema, document, validator.Errors(document));
}

/** Keywords that constrain values without changing the shape code relies on. */
const VALUE_KEYWORDS = new Set([
  'minimum',
  'maximum',
  'enum',
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
]);

/** The schema with only its shape left: types and required fields, unknown fields allowed. */
function shapeOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(shapeOf);
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (VALUE_KEYWORDS.has(key) || (key === 'additionalProperties' && value === false)) continue;
    // Under `properties` the keys are field names, not keywords: keep them all.
    out[key] =
      key === 'properties' && isRecord(value)
        ? Object.fromEntries(Object.entries(value).map(([name, field]) => [name, shapeOf(field)]))
        : shapeOf(value);
  }
  return out;
}

/**
 * Whether the document has the shape its type promises (right types, required fields present),
 * so that defaulting and semantic rules can read it. Unknown fields, out-of-range numbers and bad
 * enum values leave it readable; the user fixes type errors first, as kube-apiserver also stops
 * at decoding errors.
 */
export function isReadable(schema: TSchema, document: unknown): boolean {
  return compiled(shapeValidators, schema, () => shapeOf(schema) as TSchema).Check(document);
}

/** apiVersion and kind must name this kind; their presence and type are the schema's to check. */
export function validateTypeMeta(
  document: Record<string, unknown>,
  kind: string,
  expectedApiVersion: string = KRUISE_API_VERSION,
): FieldError[] {
  const errors: FieldError[] = [];
  const { apiVersion, kind: actualKind } = document;
  if (typeof apiVersion === 'string' && apiVersion !== expectedApiVersion) {
    errors.push(notSupported('apiVersion', apiVersion, [expectedApiVersion]));
  }
  if (typeof actualKind === 'string' && actualKind !== kind) errors.push(notSupported('kind', actualKind, [kind]));
  return errors;
}

/**
 * Validates any JSON value as an object of one kind. Never throws: an unexpected failure inside a
 * rule is reported as an Internal error on the root so the caller still gets an answer.
 */
export function validateObject<T>(document: unknown, rules: KindRules<T>): FieldError[] {
  try {
    if (!isRecord(document)) return [typeInvalid('', document, 'object')];
    const schemaErrors = checkSchema(rules.schema, document);
    const errors = [...validateTypeMeta(document, rules.kind, rules.apiVersion), ...schemaErrors];
    if (isReadable(rules.schema, document)) errors.push(...rules.semantic(rules.defaults(document as T)));
    return errors;
  } catch (cause) {
    return [internalError(cause)];
  }
}

function internalError(cause: unknown): FieldError {
  return { path: '', code: 'Internal', message: `Internal error: validation failed unexpectedly: ${String(cause)}` };
}

/**
 * Validates replacing `oldDocument` by `newDocument`: everything validateObject reports for the
 * new document, plus what `compare` finds between the two defaulted objects. The comparison only
 * runs when both documents are of the kind and pass the schema; the stored object is trusted
 * otherwise. Never throws.
 */
export function validateObjectUpdate<T>(
  newDocument: unknown,
  oldDocument: unknown,
  rules: KindRules<T>,
  compare: (oldObject: T, newObject: T) => FieldError[],
): FieldError[] {
  const errors = validateObject(newDocument, rules);
  try {
    const comparable = (d: unknown): d is T => isRecord(d) && d.kind === rules.kind && isReadable(rules.schema, d);
    if (comparable(newDocument) && comparable(oldDocument)) {
      errors.push(...compare(rules.defaults(oldDocument), rules.defaults(newDocument)));
    }
  } catch (cause) {
    errors.push(internalError(cause));
  }
  return errors;
}
