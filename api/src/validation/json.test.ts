import { describe, expect, it } from 'vitest';
import { cloneJson, firstDifference, isRecord, jsonEqual } from './json.js';

function nested(depth: number): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { child: value };
  return value;
}

describe('JSON helpers', () => {
  it('copy deeply, without sharing, at any depth', () => {
    const value = { a: [1, { b: 'c' }], d: null };
    const copy = cloneJson(value);
    expect(copy).toEqual(value);
    expect(copy.a).not.toBe(value.a);
    expect(() => cloneJson(nested(100_000))).not.toThrow();
  });

  it('keep a "__proto__" key as data instead of changing the prototype', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    const copy = cloneJson(value);
    expect(Object.keys(copy)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
  });

  it('find where documents differ, shallow additions first', () => {
    expect(firstDifference({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBeUndefined();
    expect(firstDifference({ a: [1, 2] }, { a: [1, 3] })).toEqual({ path: ['a', 1], op: 'replace' });
    expect(firstDifference({ a: [1] }, { a: [1, 2] })).toEqual({ path: ['a', 1], op: 'add' });
    expect(firstDifference({ a: 1, b: 2 }, { a: 1 })).toEqual({ path: ['b'], op: 'remove' });
    expect(jsonEqual(nested(50_000), nested(50_000))).toBe(true);
  });

  it('treat only plain objects as records', () => {
    expect([isRecord({}), isRecord([]), isRecord(null), isRecord(new Date()), isRecord(new Map())]).toEqual([
      true,
      false,
      false,
      false,
      false,
    ]);
  });
});
