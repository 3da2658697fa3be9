import { describe, expect, it } from 'vitest';
import { jsonLimitProblems } from './json-limits.js';

function nested(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

describe('jsonLimitProblems', () => {
  it('accepts ordinary documents', () => {
    expect(jsonLimitProblems({ spec: { template: { spec: { containers: [{ name: 'x' }] } } } }, '', 8)).toEqual([]);
    expect(jsonLimitProblems('plain', '', 1)).toEqual([]);
    expect(jsonLimitProblems(nested(7), '', 8)).toEqual([]);
  });

  it('names the first field nested too deep, also 10,000 levels down', () => {
    const body = { overrides: { c1: nested(10_000) } };
    const problems = jsonLimitProblems(body, '', 64);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ reason: 'json_depth', message: 'is nested deeper than 64 levels' });
    expect(problems[0]!.path).toBe(`overrides.c1${'.a'.repeat(62)}`);
  });

  it('counts arrays as levels and names indexes', () => {
    expect(jsonLimitProblems({ a: [[['x']]] }, '', 3)).toEqual([
      { path: 'a[0][0]', message: 'is nested deeper than 3 levels', reason: 'json_depth' },
    ]);
  });

  it('names __proto__ keys and constructor.prototype wherever they are', () => {
    const body = JSON.parse(
      '{"role":{"__proto__":{"x":1}},"spec":{"constructor":{"prototype":{}}},"labels":{"constructor":"ok"}}',
    ) as unknown;
    expect(jsonLimitProblems(body, '', 64)).toEqual([
      { path: 'role.__proto__', message: 'a key named __proto__ is not accepted', reason: 'prototype_key' },
      { path: 'spec.constructor', message: 'constructor.prototype is not accepted', reason: 'prototype_key' },
    ]);
  });

  it('names numbers that are not finite', () => {
    expect(jsonLimitProblems(JSON.parse('{"spec":{"replicas":1e999},"a":[-1e999]}'), '', 64)).toEqual([
      { path: 'spec.replicas', message: 'must be a finite number', reason: 'non_finite_number' },
      { path: 'a[0]', message: 'must be a finite number', reason: 'non_finite_number' },
    ]);
    expect(jsonLimitProblems({ revision: Infinity }, 'params', 2)[0]?.path).toBe('params.revision');
  });

  it('refuses NUL characters in strings and keys', () => {
    expect(jsonLimitProblems({ spec: { env: [{ value: 'a\u0000b' }] }, 'k\u0000': 1 }, '', 64)).toEqual([
      { path: 'k\u0000', message: 'keys must not contain NUL characters', reason: 'nul_character' },
      { path: 'spec.env[0].value', message: 'must not contain NUL characters', reason: 'nul_character' },
    ]);
    expect(jsonLimitProblems({ namespace: '\u0000' }, 'query', 64)[0]?.path).toBe('query.namespace');
  });
});
