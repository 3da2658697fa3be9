import { describe, expect, it } from 'vitest';
import { QuantityError, canonicalQuantity } from './quantity.js';

// The Go vectors cover the algorithm broadly; these name the cases that matter for revisions.
describe('canonicalQuantity', () => {
  it.each([
    ['1000m', '1'],
    ['0.5', '500m'],
    ['1Gi', '1Gi'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['2048Mi', '2Gi'],
    ['100m', '100m'],
    ['1e3', '1e3'],
    ['\u00852Gi\u0085', '2Gi'],
    ['0.1n', '1n'],
    ['16Ei', '9223372036854775807'],
    ['1e-12', '1e-9'],
  ])('%j becomes %j', (input, output) => {
    expect(canonicalQuantity(input)).toBe(output);
  });

  it('keeps text that Go found already canonical-looking', () => {
    expect(canonicalQuantity('+1')).toBe('+1');
    expect(canonicalQuantity('1.500')).toBe('1.500');
    expect(canonicalQuantity('01Gi')).toBe('01Gi');
  });

  it.each(['', 'abc', '1Gb', '1 Gi', '--1', '\ufeff1'])('rejects %j', (input) => {
    expect(() => canonicalQuantity(input)).toThrow(QuantityError);
  });

  it('handles huge exponents without materialising them', () => {
    expect(canonicalQuantity('1e999999999')).toBe('1e999999999');
    expect(canonicalQuantity('1e-999999999')).toBe('1e-9');
  });
});
