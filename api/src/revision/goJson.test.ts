import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { goJsonMarshal } from './goJson.js';
import { compareUtf8, toGoString } from './utf8.js';

describe('goJsonMarshal escaping', () => {
  it.each([
    ['HTML characters', '<a>&', '"\\u003ca\\u003e\\u0026"'],
    ['quote and backslash', '"\\', '"\\"\\\\"'],
    ['slash stays', '/', '"/"'],
    ['short escapes, \\b and \\f included (Go >= 1.22)', '\b\f\n\r\t', '"\\b\\f\\n\\r\\t"'],
    ['other control characters as lowercase \\u00XX', '\u0000\u001f\u000b', '"\\u0000\\u001f\\u000b"'],
    ['DEL is not escaped', '\u007f', '"\u007f"'],
    ['line and paragraph separators', '\u2028\u2029', '"\\u2028\\u2029"'],
    ['non-ASCII stays raw', 'é日😀', '"é日😀"'],
    ['lone surrogates become a raw U+FFFD', 'a\ud800b\udc00', '"a\ufffdb\ufffd"'],
  ])('%s', (_name, input, output) => {
    expect(goJsonMarshal(input)).toBe(output);
  });
});

describe('goJsonMarshal key order', () => {
  it('sorts by UTF-8 bytes: U+E000 and U+FFFF before a character outside the BMP', () => {
    // UTF-16 order would put 😀 (D83D DE00) first; its UTF-8 lead byte F0 sorts last.
    const keys = ['😀', '\uffff', '\ue000', 'z'];
    expect([...keys].sort()).toEqual(['z', '😀', '\ue000', '\uffff']);
    expect(goJsonMarshal(Object.fromEntries(keys.map((k) => [k, 1])))).toBe('{"z":1,"\ue000":1,"\uffff":1,"😀":1}');
  });

  it('sorts integer-like keys as strings, not in JS insertion order', () => {
    expect(goJsonMarshal({ 9: 'a', 10: 'b', a: 'c', 1: 'd' })).toBe('{"1":"d","10":"b","9":"a","a":"c"}');
  });

  it('merges keys that differ only in lone surrogates, the later winning', () => {
    expect(goJsonMarshal(JSON.parse('{"\\ud800":1,"\\udbff":2}'))).toBe('{"\ufffd":2}');
  });

  it('compareUtf8 agrees with byte order', () => {
    const units = fc.constantFrom('a', 'Z', '\u0000', 'é', '\ue000', '\uffff', '😀', '𝄞', '\u2028');
    fc.assert(
      fc.property(fc.string({ unit: units }), fc.string({ unit: units }), (a, b) => {
        expect(Math.sign(compareUtf8(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
    );
  });
});

describe('goJsonMarshal numbers', () => {
  it.each([
    [0, '0'],
    [-0, '-0'],
    [1e20, '100000000000000000000'],
    [1e21, '1e+21'],
    [1e-6, '0.000001'],
    [1e-7, '1e-7'],
    [1.5e-10, '1.5e-10'],
    [2 ** 53 + 2, '9007199254740994'],
    [Number.MAX_VALUE, '1.7976931348623157e+308'],
    [5e-324, '5e-324'],
  ])('%d prints as %s', (input, output) => {
    expect(goJsonMarshal(input)).toBe(output);
  });

  it.each([NaN, Infinity, -Infinity])('rejects %d like Go (UnsupportedValueError)', (input) => {
    expect(() => goJsonMarshal(input)).toThrow(TypeError);
  });
});

describe('goJsonMarshal input rules', () => {
  it('skips undefined members and writes undefined items as null', () => {
    expect(goJsonMarshal({ a: undefined, b: [undefined, 1] })).toBe('{"b":[null,1]}');
  });

  it.each([
    ['undefined', undefined],
    ['a function', () => 1],
    ['a bigint', 1n],
    ['a class instance', new Date(0)],
    ['a Map', new Map()],
  ])('rejects %s', (_name, input) => {
    expect(() => goJsonMarshal(input)).toThrow(TypeError);
  });

  it('rejects cycles', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => goJsonMarshal(cyclic)).toThrow(/cyclic/);
  });

  it('accepts the same object twice when it is not a cycle', () => {
    const shared = { x: 1 };
    expect(goJsonMarshal([shared, shared])).toBe('[{"x":1},{"x":1}]');
  });
});

// A hundred random documents per property: seconds of work on a loaded CI machine.
describe('goJsonMarshal properties', { timeout: 30_000 }, () => {
  const json = fc.jsonValue({ stringUnit: 'grapheme' });

  it('parses back to the same value', () => {
    fc.assert(
      fc.property(json, (value) => {
        expect(JSON.parse(goJsonMarshal(value))).toEqual(value);
      }),
    );
  });

  it('is a fixed point of its own output', () => {
    fc.assert(
      fc.property(json, (value) => {
        const once = goJsonMarshal(value);
        expect(goJsonMarshal(JSON.parse(once))).toBe(once);
      }),
    );
  });

  it('never writes raw control, HTML or separator characters', () => {
    fc.assert(
      fc.property(json, (value) => {
        const out = goJsonMarshal(value);
        expect(out).not.toMatch(/[<>&\u2028\u2029]/);
        expect([...out].some((ch) => ch.charCodeAt(0) < 0x20)).toBe(false);
      }),
    );
  });

  it('writes object keys in UTF-8 byte order', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ unit: 'grapheme' }), fc.constant(0)), (object) => {
        const keys = Object.keys(JSON.parse(goJsonMarshal(object)) as object);
        // JSON.parse reorders integer-like keys, so read the order from the text instead.
        const textOrder = [...goJsonMarshal(object).matchAll(/"((?:[^"\\]|\\.)*)":0/g)].map(
          (m) => JSON.parse(`"${m[1]}"`) as string,
        );
        expect(textOrder).toEqual([...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
    );
  });

  it('maps any string, lone surrogates included, to its Go string', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(JSON.parse(goJsonMarshal(s))).toBe(toGoString(s));
      }),
    );
  });
});
