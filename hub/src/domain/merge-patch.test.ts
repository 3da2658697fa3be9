import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyMergePatch } from './merge-patch.js';

describe('applyMergePatch (RFC 7396 appendix A)', () => {
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('%j + %j = %j', (target, patch, expected) => {
    expect(applyMergePatch(target, patch)).toEqual(expected);
  });

  it('never modifies its inputs, and an empty patch is the identity', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (target, patch) => {
        const t = structuredClone(target);
        const p = structuredClone(patch);
        applyMergePatch(target, patch);
        expect(target).toEqual(t);
        expect(patch).toEqual(p);
      }),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (target) => {
        expect(applyMergePatch(target, {})).toEqual(target);
      }),
    );
  });

  it('applies a patch nested 100,000 deep without exhausting the stack', () => {
    const depth = 100_000;
    let patch: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < depth; i++) patch = { a: patch };
    let node = applyMergePatch({ keep: true }, patch) as Record<string, unknown>;
    expect(node.keep).toBe(true);
    for (let i = 0; i < depth; i++) node = node.a as Record<string, unknown>;
    expect(node).toEqual({ leaf: 1 });
  });

  it('keeps a __proto__ key an own property', () => {
    const out = applyMergePatch({}, JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
