/**
 * Schema builders for Kubernetes-flavoured JSON Schema. Every Kruise type is written once with
 * these; the same object then validates at runtime, gives the TypeScript type through `Static<>`,
 * and is turned into the CRD's structural OpenAPI schema by `crd/generate.ts`.
 */
import Type, {
  type Static,
  type TArray,
  type TArrayOptions,
  type TInteger,
  type TNumberOptions,
  type TObject,
  type TObjectOptions,
  type TProperties,
  type TSchema,
  type TSchemaOptions,
  type TString,
  type TStringOptions,
  type TUnion,
  type TUnsafe,
} from 'typebox';

/**
 * Hint for the CRD generator, ignored by the validator.
 * - `opaque`: the CRD keeps this object schemaless (`x-kubernetes-preserve-unknown-fields`), the
 *   way OpenKruise keeps pod templates, PVC templates and sidecar containers. Its properties still
 *   type-check at runtime and in TypeScript.
 * - `keep`: inside an opaque object, this property is still written to the CRD.
 */
export const CRD_HINT = 'x-flotilla-crd';
export type CrdHint = 'opaque' | 'keep';

const INT32_MAX = 2147483647;

/** An object that rejects undeclared fields (reported as unknown fields). */
export function strictObject<P extends TProperties>(properties: P, options: TObjectOptions = {}): TObject<P> {
  return Type.Object(properties, { ...options, additionalProperties: false });
}

/**
 * An object the CRD stores without a schema. Its declared properties are type-checked; any other
 * field is accepted and kept, as the apiserver keeps it under x-kubernetes-preserve-unknown-fields.
 */
export function opaqueObject<P extends TProperties>(properties: P, options: TObjectOptions = {}): TObject<P> {
  return Type.Object(properties, { ...options, 'x-kubernetes-preserve-unknown-fields': true, [CRD_HINT]: 'opaque' });
}

/**
 * The TypeScript type of data under an opaque schema: the declared fields with their types, and
 * any other field as `unknown`, at every level (Kubernetes types the schema does not list still
 * fit, e.g. a probe's tcpSocket).
 */
export type Opaque<T> = T extends readonly (infer Item)[]
  ? Opaque<Item>[]
  : T extends object
    ? { [K in keyof T]: Opaque<T[K]> } & { [field: string]: unknown }
    : T;

/** Marks a property of an opaque object that the CRD still declares (OpenKruise's own fields). */
export function crdKeep(): { [CRD_HINT]: CrdHint } {
  return { [CRD_HINT]: 'keep' };
}

/**
 * A Go int32. Every integer in these APIs is a count, a duration, a port or a percentage, so the
 * range starts at 0 unless the options say otherwise; the upper bound is int32's.
 */
export function int32(options: TNumberOptions = {}): TInteger {
  return Type.Integer({ format: 'int32', minimum: 0, maximum: INT32_MAX, ...options });
}

/** A Go int64, non-negative unless the options say otherwise (see int32). */
export function int64(options: TNumberOptions = {}): TInteger {
  return Type.Integer({ format: 'int64', minimum: 0, ...options });
}

/** A metav1.Time: an RFC 3339 timestamp string. */
export function time(options: TStringOptions = {}): TString {
  return Type.String({ format: 'date-time', ...options });
}

/** intstr.IntOrString: an integer or a string such as "25%". */
export function intOrString(options: TSchemaOptions = {}): TUnion<[TInteger, TString]> {
  return Type.Union([Type.Integer(), Type.String()], { ...options, 'x-kubernetes-int-or-string': true });
}

/** map[string]string, e.g. labels and annotations. */
export function stringMap(options: TSchemaOptions = {}): TUnsafe<Record<string, string>> {
  return Type.Unsafe<Record<string, string>>({ ...options, type: 'object', additionalProperties: { type: 'string' } });
}

/** map[string]T with a schema for the values. */
export function mapOf<T extends TSchema>(values: T, options: TSchemaOptions = {}): TUnsafe<Record<string, Static<T>>> {
  return Type.Unsafe<Record<string, Static<T>>>({ ...options, type: 'object', additionalProperties: values });
}

/** []string. */
export function stringList(options: TArrayOptions = {}): TArray<TString> {
  return Type.Array(Type.String(), options);
}
