/**
 * Checks a decoded request (body, query, path parameters) before schema validation: nesting no
 * deeper than a limit (deeper documents cost stack in code that recurses, and Postgres refuses
 * them), no NUL characters in keys or strings (Postgres text and jsonb cannot hold them), and no
 * `__proto__` key or `constructor.prototype` (the keys prototype pollution goes through once some
 * code assigns them; JSON.parse keeps them as plain keys, so they can be named here), and no
 * number that is not finite (JSON.parse reads `1e999` as Infinity, which Postgres and
 * JSON.stringify cannot keep).
 * Iterative, so the check itself never recurses.
 */
import type { FieldProblem } from '@flotilla/api';

export type JsonLimitReason = 'json_depth' | 'nul_character' | 'prototype_key' | 'non_finite_number';

export interface JsonLimitProblem extends FieldProblem {
  reason: JsonLimitReason;
}

interface PathLink {
  parent: PathLink | undefined;
  segment: string | number;
}

/** `spec.template[0]`, the form the error handler uses for schema problems. */
function spell(link: PathLink | undefined, root: string): string {
  const segments: (string | number)[] = [];
  for (let at = link; at !== undefined; at = at.parent) segments.push(at.segment);
  let path = root;
  for (const s of segments.reverse()) path += typeof s === 'number' ? `[${s}]` : path === '' ? s : `.${s}`;
  return path;
}

const MAX_PROBLEMS = 10;

function keyProblem(key: string, value: unknown): Omit<JsonLimitProblem, 'path'> | undefined {
  if (key.includes('\u0000')) return { message: 'keys must not contain NUL characters', reason: 'nul_character' };
  if (key === '__proto__') return { message: 'a key named __proto__ is not accepted', reason: 'prototype_key' };
  if (key === 'constructor' && typeof value === 'object' && value !== null && Object.hasOwn(value, 'prototype')) {
    return { message: 'constructor.prototype is not accepted', reason: 'prototype_key' };
  }
  return undefined;
}

/**
 * Problems of one decoded value; `root` prefixes the paths ('' for a body). The value itself is
 * at depth 1 when it is an object or array.
 */
export function jsonLimitProblems(value: unknown, root: string, maxDepth: number): JsonLimitProblem[] {
  const problems: JsonLimitProblem[] = [];
  const work: Array<[unknown, PathLink | undefined, number]> = [[value, undefined, 1]];
  for (let item = work.pop(); item !== undefined && problems.length < MAX_PROBLEMS; item = work.pop()) {
    const [v, at, depth] = item;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) {
        problems.push({ path: spell(at, root), message: 'must not contain NUL characters', reason: 'nul_character' });
      }
      continue;
    }
    if (typeof v === 'number' && !Number.isFinite(v)) {
      problems.push({ path: spell(at, root), message: 'must be a finite number', reason: 'non_finite_number' });
      continue;
    }
    if (typeof v !== 'object' || v === null) continue;
    if (depth > maxDepth) {
      problems.push({
        path: spell(at, root),
        message: `is nested deeper than ${maxDepth} levels`,
        reason: 'json_depth',
      });
      continue;
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) work.push([v[i], { parent: at, segment: i }, depth + 1]);
      continue;
    }
    for (const [key, child] of Object.entries(v as Record<string, unknown>).reverse()) {
      const link = { parent: at, segment: key };
      const problem = keyProblem(key, child);
      if (problem) problems.push({ path: spell(link, root), ...problem });
      else work.push([child, link, depth + 1]);
    }
  }
  return problems;
}
