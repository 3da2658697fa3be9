import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { controllerRevisionHash, controllerRevisionName } from './controllerRevision.js';
import { fnv1Hash32 } from './fnv1.js';
import { SAFE_ALPHABET, safeEncodeString } from './safeEncode.js';
import { utf8Bytes } from './utf8.js';

describe('fnv1Hash32', () => {
  // Published FNV-1 32-bit test values; FNV-1a gives 0xe40c292c and 0xbf9cf968 instead.
  it.each([
    ['', 0x811c9dc5],
    ['a', 0x050c5d7e],
    ['foobar', 0x31f0b262],
  ])('FNV-1 32 of %j', (input, expected) => {
    expect(fnv1Hash32(utf8Bytes(input))).toBe(expected);
  });

  it('hashes chunks as one stream', () => {
    fc.assert(
      fc.property(fc.uint8Array(), fc.uint8Array(), (a, b) => {
        expect(fnv1Hash32(a, b)).toBe(fnv1Hash32(new Uint8Array([...a, ...b])));
      }),
    );
  });
});

describe('safeEncodeString', () => {
  it('maps digits through the vowel-free alphabet', () => {
    expect(safeEncodeString('0123456789')).toBe('456789bcdf');
  });

  it('maps hex digits too (SidecarSet hashes)', () => {
    expect(safeEncodeString('abcdef')).toBe('vwxz24');
  });

  it('pads multi-byte input with NUL bytes as Go does', () => {
    expect(safeEncodeString('é')).toBe(`${SAFE_ALPHABET[0xe9 % 27]}\0`);
  });

  it('only emits alphabet characters for ASCII input', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii' }), (s) => {
        expect([...safeEncodeString(s)].every((ch) => SAFE_ALPHABET.includes(ch))).toBe(true);
      }),
    );
  });
});

describe('controllerRevisionHash', () => {
  const data = '{"spec":{"template":{"$patch":"replace"}}}';

  it('treats collisionCount 0 differently from none', () => {
    expect(controllerRevisionHash(data, 0)).not.toBe(controllerRevisionHash(data));
    expect(controllerRevisionHash(data, null)).toBe(controllerRevisionHash(data));
  });

  it('appends the decimal collision count to the hashed bytes', () => {
    expect(controllerRevisionHash(data, 12)).toBe(safeEncodeString(String(fnv1Hash32(utf8Bytes(`${data}12`)))));
  });

  it('hashes strings as UTF-8, the same as the bytes', () => {
    expect(controllerRevisionHash('é<', 1)).toBe(controllerRevisionHash(utf8Bytes('é<'), 1));
  });

  it.each([1.5, 2 ** 31, -(2 ** 31) - 1, NaN])('rejects collisionCount %d (not an int32)', (count) => {
    expect(() => controllerRevisionHash(data, count)).toThrow(RangeError);
  });
});

describe('controllerRevisionName', () => {
  it('joins prefix and hash', () => {
    expect(controllerRevisionName('sample', '59c7d6fb4')).toBe('sample-59c7d6fb4');
  });

  it('cuts the prefix to 223 bytes', () => {
    expect(controllerRevisionName('a'.repeat(300), 'h')).toBe(`${'a'.repeat(223)}-h`);
    expect(controllerRevisionName('a'.repeat(223), 'h')).toBe(`${'a'.repeat(223)}-h`);
  });
});
