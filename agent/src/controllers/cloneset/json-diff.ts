/**
 * A JSON diff as RFC 6902 operations, with the shape OpenKruise gets from jsonpatch.CreatePatch:
 * objects key by key, arrays index by index (extra elements removed or added at the end), any
 * other difference a `replace`. In-place eligibility only asks which paths changed and how, so
 * this is all it needs.
 */

export interface JsonPatchOp {
  op: 'add' | 'remove' | 'replace';
  /** JSON pointer, e.g. `/spec/template/spec/containers/0/image`. */
  path: string;
  value?: unknown;
}

type JsonObject = Record<string, unknown>;

function isObject(v: unknown): v is JsonObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** RFC 6901 escaping of one path segment. */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** RFC 6901 unescaping of one path segment. */
export function unescapePointer(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

function diffInto(a: unknown, b: unknown, path: string, out: JsonPatchOp[]): void {
  if (deepEqual(a, b)) return;
  if (isObject(a) && isObject(b)) {
    for (const key of Object.keys(a)) {
      const p = `${path}/${escapePointer(key)}`;
      if (!(key in b)) out.push({ op: 'remove', path: p });
      else diffInto(a[key], b[key], p, out);
    }
    for (const key of Object.keys(b))
      if (!(key in a)) out.push({ op: 'add', path: `${path}/${escapePointer(key)}`, value: b[key] });
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const common = Math.min(a.length, b.length);
    for (let i = a.length - 1; i >= common; i--) out.push({ op: 'remove', path: `${path}/${i}` });
    for (let i = common; i < b.length; i++) out.push({ op: 'add', path: `${path}/${i}`, value: b[i] });
    for (let i = 0; i < common; i++) diffInto(a[i], b[i], `${path}/${i}`, out);
    return;
  }
  out.push({ op: 'replace', path, value: b });
}

/** The operations that turn `from` into `to`. */
export function createJsonPatch(from: unknown, to: unknown): JsonPatchOp[] {
  const out: JsonPatchOp[] = [];
  diffInto(from, to, '', out);
  return out;
}
