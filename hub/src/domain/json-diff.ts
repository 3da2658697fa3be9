/**
 * The changes between two JSON values as a list of leaf fields: each with its path
 * (`spec.template.spec.containers[0].image`), the old value (absent: added) and the new one
 * (absent: removed). Objects are compared key by key and arrays index by index; any other
 * difference (a scalar, or a value changing kind) is one change at that path. Pure.
 */
import type { ManifestChange } from '@flotilla/api';
import { isRecord } from '@flotilla/api';

const SIMPLE_KEY = /^[A-Za-z_$][\w$-]*$/;

function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (!SIMPLE_KEY.test(key)) return `${path}[${JSON.stringify(key)}]`;
  return path === '' ? key : `${path}.${key}`;
}

function walk(path: string, from: unknown, to: unknown, out: ManifestChange[]): void {
  if (from === undefined && to === undefined) return;
  if (Array.isArray(from) && Array.isArray(to)) {
    for (let i = 0; i < Math.max(from.length, to.length); i++) walk(child(path, i), from[i], to[i], out);
    return;
  }
  if (isRecord(from) && isRecord(to)) {
    const keys = [...new Set([...Object.keys(from), ...Object.keys(to)])].sort();
    for (const k of keys) walk(child(path, k), from[k], to[k], out);
    return;
  }
  if (JSON.stringify(from) === JSON.stringify(to)) return;
  out.push({ path, ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) });
}

export function jsonDiff(from: unknown, to: unknown): ManifestChange[] {
  const out: ManifestChange[] = [];
  walk('', from, to, out);
  return out;
}
