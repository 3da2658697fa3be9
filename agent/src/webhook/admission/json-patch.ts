/**
 * RFC 6902 patches between two JSON documents, as admission responses carry them. Objects are
 * compared member by member; arrays that differ are replaced whole, which is always valid to apply
 * and keeps patches readable (injected containers, readiness gates) at a small size cost.
 */
import type { JsonPatchOperation } from './types.js';

/** `/a~1b/c` for the path segments ["a/b", "c"] (RFC 6901 escaping). */
export function pointer(segments: readonly (string | number)[]): string {
  return segments.map((s) => `/${String(s).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a).filter((k) => a[k] !== undefined);
    const otherKeys = Object.keys(b).filter((k) => b[k] !== undefined);
    return keys.length === otherKeys.length && keys.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** The operations that turn `from` into `to`; empty when they are equal. */
export function createJsonPatch(from: unknown, to: unknown): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  diff(from, to, [], ops);
  return ops;
}

function diff(from: unknown, to: unknown, path: (string | number)[], ops: JsonPatchOperation[]): void {
  if (jsonEqual(from, to)) return;
  if (isObject(from) && isObject(to)) {
    for (const key of Object.keys(from)) {
      if (from[key] !== undefined && to[key] === undefined) ops.push({ op: 'remove', path: pointer([...path, key]) });
    }
    for (const [key, value] of Object.entries(to)) {
      if (value === undefined) continue;
      if (from[key] === undefined) ops.push({ op: 'add', path: pointer([...path, key]), value });
      else diff(from[key], value, [...path, key], ops);
    }
    return;
  }
  ops.push({ op: 'replace', path: pointer(path), value: to });
}

/**
 * Applies a patch produced by createJsonPatch (add, replace, remove on object members and whole
 * values) to a copy of `doc`. Used by tests and to double-check patches; not a general RFC 6902
 * implementation (no array index inserts, no move/copy/test).
 */
export function applyJsonPatch<T>(doc: T, patch: readonly JsonPatchOperation[]): T {
  let root: unknown = structuredClone(doc);
  for (const op of patch) {
    const segments = op.path === '' ? [] : op.path.slice(1).split('/').map(unescape);
    if (segments.length === 0) {
      root = op.op === 'remove' ? undefined : structuredClone(op.value);
      continue;
    }
    const parent = segments.slice(0, -1).reduce<unknown>((node, s) => (node as Record<string, unknown>)[s], root);
    const key = segments[segments.length - 1]!;
    const container = parent as Record<string, unknown>;
    if (op.op === 'remove') delete container[key];
    else container[key] = structuredClone(op.value);
  }
  return root as T;
}

function unescape(segment: string): string {
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}
