import { goJsonMarshal } from './goJson.js';
import type { GoStructTable } from './goStructTable.js';
import { goStructs } from './goStructs.generated.js';
import { roundTripGoTime } from './goTime.js';
import { QuantityError, canonicalQuantity } from './quantity.js';
import { quoteGoString } from './goString.js';
import { compareUtf8, toGoString } from './utf8.js';

/** A value Go's JSON decoder would reject for the typed field at `path`. */
export class GoDecodeError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path || '(root)'}: ${reason}`);
    this.name = 'GoDecodeError';
  }
}

/**
 * Decodes `value` into the Go type `type` (an expression over the generated table) and encodes
 * it again, returning Go's JSON text: struct fields in declaration order, unknown and miscased
 * keys dropped (the Kubernetes decoder is case-sensitive), omitempty fields dropped when empty,
 * other fields written with their zero value (`"name":""`, `"resources":{}`, `"containers":null`),
 * maps sorted, quantities canonicalised, times in UTC. `null` decodes like an absent key.
 *
 * Integers above 2^53 have already lost precision in a JS number; Go would print the exact
 * int64. The revision data is unaffected (Go re-reads it as float64 too); a typed hash would be.
 */
export function encodeGoTyped(type: string, value: unknown, table: GoStructTable = goStructs): string {
  return new TypedEncoder(table).encode(type, value, false, '') ?? 'null';
}

const INT_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  int32: [-(2 ** 31), 2 ** 31 - 1],
  int64: [-(2 ** 63), 2 ** 63 - 1],
};

/** The prefix of a pointer, slice or map type (`*T`, `[]T`, `map[]T`: string keys only), if it is one. */
function compositePrefix(type: string): '*' | '[]' | 'map[]' | undefined {
  if (type.startsWith('*')) return '*';
  if (type.startsWith('[]')) return '[]';
  return type.startsWith('map[]') ? 'map[]' : undefined;
}

class TypedEncoder {
  constructor(private readonly table: GoStructTable) {}

  /** Go JSON text for `value` as `type`, or undefined when an omitempty field is empty. */
  encode(type: string, value: unknown, omitEmpty: boolean, path: string): string | undefined {
    const absent = value === undefined || value === null;
    // Pointers, slices and maps: nil is null, or nothing when omitempty.
    const composite = compositePrefix(type);
    if (composite !== undefined && absent) return omitEmpty ? undefined : 'null';
    const elem = type.slice(composite?.length ?? 0);
    switch (composite) {
      case '*':
        return this.encode(elem, value, false, path);
      case '[]':
        return this.encodeSlice(elem, value, omitEmpty, path);
      case 'map[]':
        return this.encodeMap(elem, value, omitEmpty, path);
      default:
        return this.encodeValue(type, value, omitEmpty, path);
    }
  }

  /** A value of a scalar type, a Kubernetes special type or a struct. */
  private encodeValue(type: string, value: unknown, omitEmpty: boolean, path: string): string | undefined {
    switch (type) {
      case 'string':
        return this.encodeString(value, omitEmpty, path);
      case 'bool':
        return this.encodeBool(value, omitEmpty, path);
      case 'int32':
      case 'int64':
        return this.encodeInteger(type, value, omitEmpty, path);
      case 'quantity':
        return this.encodeQuantity(value, path);
      case 'intOrString':
        return this.encodeIntOrString(value, path);
      case 'time':
        return this.encodeTime(value, path);
      case 'raw':
        // FieldsV1 keeps its raw bytes; only managedFields use it, which never matter to a hash.
        return value === undefined || value === null ? 'null' : goJsonMarshal(value);
      default:
        return this.encodeStruct(type, value, path);
    }
  }

  private encodeSlice(elem: string, value: unknown, omitEmpty: boolean, path: string): string | undefined {
    if (!Array.isArray(value)) throw mismatch(path, 'array', value);
    if (value.length === 0 && omitEmpty) return undefined;
    return `[${value.map((item: unknown, i) => this.encode(elem, item, false, `${path}[${i}]`)).join(',')}]`;
  }

  private encodeBool(value: unknown, omitEmpty: boolean, path: string): string | undefined {
    if (value === undefined || value === null) return omitEmpty ? undefined : 'false';
    if (typeof value !== 'boolean') throw mismatch(path, 'boolean', value);
    return value || !omitEmpty ? String(value) : undefined;
  }

  private encodeIntOrString(value: unknown, path: string): string | undefined {
    if (value === undefined || value === null) return '0';
    if (typeof value === 'string') return quoteGoString(value);
    return this.encodeInteger('int32', value, false, path);
  }

  private encodeString(value: unknown, omitEmpty: boolean, path: string): string | undefined {
    const s = value === undefined || value === null ? '' : value;
    if (typeof s !== 'string') throw mismatch(path, 'string', value);
    return s === '' && omitEmpty ? undefined : quoteGoString(s);
  }

  private encodeInteger(type: string, value: unknown, omitEmpty: boolean, path: string): string | undefined {
    const n = value === undefined || value === null ? 0 : value;
    if (typeof n !== 'number') throw mismatch(path, 'number', value);
    const [min, max] = INT_RANGES[type] ?? [0, 0];
    if (!Number.isInteger(n)) throw new GoDecodeError(path, `${n} is not an integer (${type})`);
    if (n < min || n > max) throw new GoDecodeError(path, `${n} overflows ${type}`);
    return n === 0 && omitEmpty ? undefined : String(n);
  }

  private encodeQuantity(value: unknown, path: string): string {
    if (value === undefined || value === null) return '"0"';
    // Go's Quantity decoder reads a bare JSON number's text too; a JS number's shortest text
    // stands in for it.
    if (typeof value !== 'string' && typeof value !== 'number') throw mismatch(path, 'quantity string', value);
    try {
      return quoteGoString(canonicalQuantity(String(value)));
    } catch (error) {
      if (error instanceof QuantityError) throw new GoDecodeError(path, error.message);
      throw error;
    }
  }

  private encodeTime(value: unknown, path: string): string {
    if (value === undefined || value === null) return 'null';
    if (typeof value !== 'string') throw mismatch(path, 'RFC 3339 time string', value);
    const time = roundTripGoTime(value);
    if (time === undefined) throw new GoDecodeError(path, `${JSON.stringify(value)} is not an RFC 3339 time`);
    return time === null ? 'null' : quoteGoString(time);
  }

  private encodeMap(elem: string, value: unknown, omitEmpty: boolean, path: string): string | undefined {
    if (!isObject(value)) throw mismatch(path, 'object', value);
    // Keys that Go decodes to the same string (lone surrogates) collapse; the later one wins.
    const entries = new Map<string, [string, unknown]>();
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined) entries.set(toGoString(key), [key, item]);
    }
    if (entries.size === 0 && omitEmpty) return undefined;
    const keys = [...entries.keys()].sort(compareUtf8);
    const members = keys.map((key) => {
      const [original, item] = entries.get(key) ?? [key, undefined];
      return `${quoteGoString(key)}:${this.encode(elem, item, false, `${path}[${JSON.stringify(original)}]`)}`;
    });
    return `{${members.join(',')}}`;
  }

  private encodeStruct(type: string, value: unknown, path: string): string {
    const fields = this.table[type];
    if (fields === undefined) throw new Error(`encodeGoTyped: unknown Go type ${type}`);
    if (value !== undefined && value !== null && !isObject(value)) throw mismatch(path, 'object', value);
    const object = isObject(value) ? value : {};
    const members: string[] = [];
    for (const [name, fieldType, omitEmpty] of fields) {
      const member = Object.hasOwn(object, name) ? object[name] : undefined;
      const encoded = this.encode(fieldType, member, omitEmpty !== undefined, path ? `${path}.${name}` : name);
      if (encoded !== undefined) members.push(`${quoteGoString(name)}:${encoded}`);
    }
    return `{${members.join(',')}}`;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function mismatch(path: string, expected: string, value: unknown): GoDecodeError {
  const got = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value;
  return new GoDecodeError(path, `expected ${expected}, got ${got}`);
}
