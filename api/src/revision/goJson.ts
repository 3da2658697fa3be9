import { formatGoFloat64 } from './goFloat.js';
import { quoteGoString } from './goString.js';
import { compareUtf8, toGoString } from './utf8.js';

/**
 * Returns the exact text Go's `json.Marshal` writes for the `interface{}` that `json.Unmarshal`
 * builds from the same JSON text `JSON.parse` turned into `value`: object keys sorted by UTF-8
 * bytes, no whitespace, Go's HTML-safe string escaping, numbers as float64 in Go's format.
 * This is the last step of OpenKruise's revision data, so the bytes must match.
 *
 * Accepts JSON data only: null, booleans, finite numbers, strings, arrays and plain objects.
 * Like JSON.stringify, undefined object members are skipped and undefined array items are null.
 * Unlike JSON.stringify, -0 stays "-0" (Go decodes the text -0 to negative zero and keeps it).
 * Keys that differ only in lone surrogates collapse into one U+FFFD key, the later one winning,
 * as in Go's map.
 */
export function goJsonMarshal(value: unknown): string {
  if (value === undefined) throw new TypeError('goJsonMarshal: undefined is not JSON');
  return encode(value, []);
}

function encode(value: unknown, stack: object[]): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return formatGoFloat64(value);
    case 'string':
      return quoteGoString(value);
    case 'object':
      break;
    default:
      throw new TypeError(`goJsonMarshal: ${typeof value} is not JSON`);
  }
  if (stack.includes(value)) throw new TypeError('goJsonMarshal: cyclic value');
  stack.push(value);
  try {
    if (Array.isArray(value)) return `[${value.map((item: unknown) => encode(item, stack)).join(',')}]`;
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) {
      throw new TypeError('goJsonMarshal: only plain objects are JSON objects');
    }
    return encodeObject(value as Record<string, unknown>, stack);
  } finally {
    stack.pop();
  }
}

function encodeObject(object: Record<string, unknown>, stack: object[]): string {
  const members = new Map<string, unknown>();
  for (const [key, member] of Object.entries(object)) {
    if (member !== undefined) members.set(toGoString(key), member);
  }
  const keys = [...members.keys()].sort(compareUtf8);
  return `{${keys.map((key) => `${quoteGoString(key)}:${encode(members.get(key), stack)}`).join(',')}}`;
}
