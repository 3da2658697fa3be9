/**
 * fast-check arbitraries from JSON Schema (the hub's OpenAPI document, TypeBox schemas of the
 * protocol and of Kruise objects): `shaped` generates values of the schema's shape, with edge
 * values and the hostile dictionary mixed in where the schema allows them; `mutated` takes such
 * values and breaks them at random places (wrong types, huge or deep values, missing and extra
 * fields), which is what a validator must turn into a clear error.
 */
import fc from 'fast-check';
import { EDGE_NUMBERS, INTERESTING_STRINGS, hostileString, hostileValue } from './hostile.js';
import { clone, stringify } from './json.js';

/** The JSON Schema keywords the hub's schemas use. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  patternProperties?: Record<string, JsonSchema>;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

export interface ShapeOptions {
  /** Below this depth objects keep only their required properties and arrays their minimum. */
  maxDepth: number;
  /** At most this many optional properties per object (large schemas stay small values). */
  maxOptional: number;
  /** At most this many array items and map entries. */
  maxItems: number;
  /** Arbitraries that replace the schema at a property name (e.g. `strategy` of a rollout). */
  hints?: Readonly<Record<string, fc.Arbitrary<unknown>>>;
}

export const DEFAULT_SHAPE: ShapeOptions = { maxDepth: 8, maxOptional: 3, maxItems: 3 };

const SAFE = Number.MAX_SAFE_INTEGER;

function typesOf(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  if (schema.type) return [schema.type];
  if (schema.properties || schema.additionalProperties !== undefined || schema.patternProperties) return ['object'];
  if (schema.items) return ['array'];
  return [];
}

function lengthOk(s: string, schema: JsonSchema): boolean {
  return s.length >= (schema.minLength ?? 0) && s.length <= (schema.maxLength ?? Infinity);
}

function compile(pattern: string | undefined): RegExp | undefined {
  if (pattern === undefined) return undefined;
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}

function stringArb(schema: JsonSchema): fc.Arbitrary<string> {
  if (schema.format === 'date-time') {
    return fc.date({ noInvalidDate: true, min: new Date(0), max: new Date('2100-01-01') }).map((d) => d.toISOString());
  }
  const re = compile(schema.pattern);
  const fits = (s: string): boolean => lengthOk(s, schema) && (re === undefined || re.test(s));
  const dictionary = INTERESTING_STRINGS.filter(fits);
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? 40, Math.max(min, 40));
  const generated = re
    ? fc.stringMatching(re, { size: 'small' }).filter(fits)
    : fc.string({ minLength: min, maxLength: max, unit: 'grapheme' });
  const edges = [min, schema.maxLength]
    .filter((n): n is number => n !== undefined && n <= 4096 && re === undefined)
    .map((n) => 'x'.repeat(n));
  const options = [{ arbitrary: generated, weight: 6 }];
  if (dictionary.length > 0) options.push({ arbitrary: fc.constantFrom(...dictionary), weight: 2 });
  if (edges.length > 0) options.push({ arbitrary: fc.constantFrom(...edges), weight: 1 });
  return fc.oneof(...options);
}

function integerArb(schema: JsonSchema): fc.Arbitrary<number> {
  const min = Math.max(schema.minimum ?? -SAFE, -SAFE);
  const max = Math.min(schema.maximum ?? SAFE, SAFE);
  const edges = [min, max, ...EDGE_NUMBERS].filter((n) => Number.isInteger(n) && n >= min && n <= max);
  const small = fc.integer({ min: Math.max(min, -10), max: Math.min(max, Math.max(Math.max(min, -10), 100)) });
  return fc.oneof(
    { arbitrary: small, weight: 4 },
    { arbitrary: fc.integer({ min: Math.ceil(min), max: Math.floor(max) }), weight: 2 },
    { arbitrary: fc.constantFrom(...(edges.length > 0 ? edges : [Math.ceil(min)])), weight: 2 },
  );
}

function numberArb(schema: JsonSchema): fc.Arbitrary<number> {
  return fc.double({
    noNaN: true,
    noDefaultInfinity: true,
    ...(schema.minimum !== undefined ? { min: schema.minimum } : {}),
    ...(schema.maximum !== undefined ? { max: schema.maximum } : {}),
  });
}

/** Keys of free-form maps: label-like names, the dictionary (prototype keys included), random. */
const mapKey: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.stringMatching(/^[a-z][a-z0-9.-]{0,20}(\/[a-z0-9]{1,10})?$/), weight: 4 },
  { arbitrary: fc.constantFrom(...INTERESTING_STRINGS), weight: 1 },
  { arbitrary: fc.string({ maxLength: 12 }), weight: 1 },
);

/** Builds an object with own properties only (a `__proto__` key stays a key). */
function objectOf(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries)
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

class Shaper {
  constructor(private readonly opts: ShapeOptions) {}

  of(schema: JsonSchema, depth: number, name?: string): fc.Arbitrary<unknown> {
    const hint = name === undefined ? undefined : this.opts.hints?.[name];
    if (hint) return hint;
    if ('const' in schema) return fc.constant(schema.const);
    if (schema.enum) return fc.constantFrom(...schema.enum);
    const alternatives = schema.anyOf ?? schema.oneOf;
    if (alternatives) return fc.oneof(...alternatives.map((s) => this.of(s, depth)));
    const types = typesOf(schema);
    if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
    if (types.length > 1) return fc.oneof(...types.map((type) => this.of({ ...schema, type }, depth)));
    switch (types[0]) {
      case 'object':
        return this.object(schema, depth);
      case 'array':
        return this.array(schema, depth);
      case 'string':
        return stringArb(schema);
      case 'integer':
        return integerArb(schema);
      case 'number':
        return numberArb(schema);
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  }

  private array(schema: JsonSchema, depth: number): fc.Arbitrary<unknown[]> {
    const minLength = schema.minItems ?? 0;
    const cap = depth >= this.opts.maxDepth ? minLength : Math.max(minLength, this.opts.maxItems);
    const maxLength = Math.min(schema.maxItems ?? cap, cap);
    return fc.array(schema.items ? this.of(schema.items, depth + 1) : fc.jsonValue({ maxDepth: 2 }), {
      minLength,
      maxLength,
    });
  }

  private object(schema: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
    const props = Object.entries(schema.properties ?? {});
    const required = new Set(schema.required ?? []);
    const deep = depth >= this.opts.maxDepth;
    const requiredArbs = props
      .filter(([k]) => required.has(k))
      .map(([k, s]) => this.of(s, depth + 1, k).map((v) => [k, v] as const));
    const optional = deep ? [] : props.filter(([k]) => !required.has(k));
    const optionalArbs = new Map(optional.map(([k, s]) => [k, this.of(s, depth + 1, k)]));
    const picked = fc
      .subarray(
        optional.map(([k]) => k),
        { maxLength: Math.min(optional.length, this.opts.maxOptional) },
      )
      .chain((keys) => fc.tuple(...keys.map((k) => optionalArbs.get(k)!.map((v) => [k, v] as const))));
    const extra = deep ? fc.constant([]) : this.mapEntries(schema, depth);
    return fc
      .tuple(fc.tuple(...requiredArbs), picked, extra)
      .map(([req, opt, more]) => objectOf([...more, ...req, ...opt]));
  }

  /** Entries of a map-like object (`additionalProperties` / `patternProperties` schemas). */
  private mapEntries(schema: JsonSchema, depth: number): fc.Arbitrary<(readonly [string, unknown])[]> {
    const maps: fc.Arbitrary<readonly [string, unknown]>[] = [];
    const extra = schema.additionalProperties;
    const free = schema['x-kubernetes-preserve-unknown-fields'] === true;
    if (!schema.properties || free) {
      if (extra === true || free || (typeof extra === 'object' && Object.keys(extra).length === 0)) {
        maps.push(fc.tuple(mapKey, fc.jsonValue({ maxDepth: 2 })));
      } else if (typeof extra === 'object') {
        maps.push(fc.tuple(mapKey, this.of(extra, depth + 1)));
      }
    }
    for (const [pattern, s] of Object.entries(schema.patternProperties ?? {})) {
      const re = compile(pattern);
      const key = re && pattern !== '^.*$' ? fc.stringMatching(re, { size: 'xsmall' }) : mapKey;
      maps.push(fc.tuple(key, this.of(s, depth + 1)));
    }
    if (maps.length === 0) return fc.constant([]);
    return fc.array(fc.oneof(...maps), { maxLength: this.opts.maxItems });
  }
}

/** Values of the schema's shape (what a well-behaved client sends, edge values included). */
export function shaped(schema: JsonSchema, opts: ShapeOptions = DEFAULT_SHAPE): fc.Arbitrary<unknown> {
  return new Shaper(opts).of(schema, 0);
}

type Path = (string | number)[];

/** Every place in a JSON value (up to `limit`), iteratively so deep values cannot overflow. */
export function pathsOf(value: unknown, limit = 500): Path[] {
  const out: Path[] = [[]];
  const stack: [unknown, Path][] = [[value, []]];
  while (stack.length > 0 && out.length < limit) {
    const [v, path] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    const keys: (string | number)[] = Array.isArray(v) ? v.map((_, i) => i) : Object.keys(v);
    for (const k of keys) {
      const p = [...path, k];
      out.push(p);
      stack.push([(v as Record<string | number, unknown>)[k], p]);
    }
  }
  return out;
}

function parentOf(root: unknown, path: Path): Record<string | number, unknown> | undefined {
  let v = root;
  for (const k of path.slice(0, -1)) v = (v as Record<string | number, unknown>)[k];
  return typeof v === 'object' && v !== null ? (v as Record<string | number, unknown>) : undefined;
}

function setKey(target: Record<string | number, unknown>, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

export type Edit =
  | { op: 'replace'; at: number; value: unknown }
  | { op: 'delete'; at: number }
  | { op: 'extra'; at: number; key: string; value: unknown }
  | { op: 'wrap'; at: number; array: boolean }
  | { op: 'stringify'; at: number };

export const edit: fc.Arbitrary<Edit> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('replace' as const), at: fc.nat(), value: hostileValue }), weight: 4 },
  { arbitrary: fc.record({ op: fc.constant('delete' as const), at: fc.nat() }), weight: 2 },
  {
    arbitrary: fc.record({ op: fc.constant('extra' as const), at: fc.nat(), key: hostileString, value: hostileValue }),
    weight: 2,
  },
  { arbitrary: fc.record({ op: fc.constant('wrap' as const), at: fc.nat(), array: fc.boolean() }), weight: 1 },
  { arbitrary: fc.record({ op: fc.constant('stringify' as const), at: fc.nat() }), weight: 1 },
);

/**
 * Applies edits to a copy of `value`; each edit picks its place among the value's paths. Values
 * are copied in too: generators hand out the same `[]` or `{}` every time, and a later edit
 * changing one of those would change (or make cyclic) every value that holds it.
 */
export function applyEdits(value: unknown, edits: readonly Edit[]): unknown {
  let root = clone(value);
  for (const e of edits) {
    const paths = pathsOf(root);
    const path = paths[e.at % paths.length]!;
    const parent = parentOf(root, path);
    const key = path[path.length - 1];
    const current = parent && key !== undefined ? parent[key] : root;
    let next: unknown = current;
    if (e.op === 'replace') next = clone(e.value);
    else if (e.op === 'wrap') next = e.array ? [current] : { value: current };
    else if (e.op === 'stringify') next = stringify(current);
    else if (e.op === 'extra' && typeof current === 'object' && current !== null && !Array.isArray(current)) {
      setKey(current as Record<string, unknown>, e.key, clone(e.value));
      continue;
    } else if (e.op === 'extra') next = clone(e.value);
    else if (e.op === 'delete' && parent && key !== undefined) {
      if (Array.isArray(parent)) parent.splice(key as number, 1);
      else delete parent[key];
      continue;
    }
    if (parent && key !== undefined) setKey(parent, key, next);
    else root = next;
  }
  return root;
}

/** Values of `base` broken in one to three places. */
export function mutated(base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(base, fc.array(edit, { minLength: 1, maxLength: 3 })).map(([v, edits]) => applyEdits(v, edits));
}
