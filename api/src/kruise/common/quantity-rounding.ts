/**
 * Kubernetes' SetDefaults_ResourceList: every quantity in a resource list is rounded up (away
 * from zero) to whole milli-units, so "0.0001" is stored as "1m". Quantities already at milli
 * precision or coarser are returned untouched; their canonical spelling is an encoding concern
 * (see revision/quantity.ts), not a default.
 */
import type { Quantity, ResourceList } from './pod.js';

const QUANTITY = /^([+-]?)([0-9]*)(?:\.([0-9]*))?(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;
const DECIMAL_EXPONENT: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const BINARY_EXPONENT: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const BINARY_SUFFIXES = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
/** Exponents beyond this are not real quantities; leave them for validation to reject. */
const MAX_EXPONENT = 64;

/** The quantity rounded up to milli-units, or the same value when no rounding is needed. */
export function roundUpToMilli(quantity: Quantity): Quantity {
  const parts = quantityParts(typeof quantity === 'number' ? String(quantity) : quantity);
  if (!parts) return quantity;
  const milli = roundedMillis(parts);
  if (milli === undefined) return quantity;
  const sign = parts.negative ? '-' : '';
  if (parts.exponentForm) return `${sign}${milli}e-3`;
  if (parts.binary > 0 && milli % 1000n === 0n) return binaryText(milli / 1000n, parts.negative);
  return `${sign}${milli}m`;
}

/** A quantity as digits × 2^binary × 10^decimal. */
interface QuantityParts {
  negative: boolean;
  /** The digits before and after the point, without it. */
  digits: string;
  binary: number;
  /** The suffix's decimal exponent less the digits after the point. */
  decimal: number;
  /** Written with an e/E exponent. */
  exponentForm: boolean;
}

/** The parts of a quantity's text; undefined when it does not parse or has no digits. */
function quantityParts(text: string): QuantityParts | undefined {
  const match = QUANTITY.exec(text);
  if (!match) return undefined;
  const [, sign = '', whole = '', fraction = '', suffix = ''] = match;
  if (whole === '' && fraction === '') return undefined;
  const exponentForm = suffix.startsWith('e') || suffix.startsWith('E');
  const decimal = exponentForm ? Number(suffix.slice(1)) : (DECIMAL_EXPONENT[suffix] ?? 0);
  return {
    negative: sign === '-',
    digits: `${whole}${fraction}`,
    binary: BINARY_EXPONENT[suffix] ?? 0,
    decimal: decimal - fraction.length,
    exponentForm,
  };
}

/**
 * The quantity in milli-units, rounded up, or undefined when it is already a whole number of
 * milli-units (or the exponent is beyond any real quantity).
 */
function roundedMillis({ digits, binary, decimal }: QuantityParts): bigint | undefined {
  const scale = decimal + 3;
  if (scale >= 0 || Math.abs(scale) > MAX_EXPONENT) return undefined;
  const numerator = BigInt(digits || '0') * 2n ** BigInt(binary);
  const denominator = 10n ** BigInt(-scale);
  if (numerator % denominator === 0n) return undefined;
  return numerator / denominator + 1n;
}

/** A whole number of bytes written with the largest binary suffix that divides it. */
function binaryText(units: bigint, negative: boolean): string {
  let value = units;
  let power = 0;
  while (power < BINARY_SUFFIXES.length - 1 && value !== 0n && value % 1024n === 0n) {
    value /= 1024n;
    power++;
  }
  return `${negative ? '-' : ''}${value}${BINARY_SUFFIXES[power]}`;
}

/** A copy of the list with every quantity rounded up to milli-units. */
export function roundResourceList(list: ResourceList): ResourceList {
  const out: ResourceList = {};
  for (const [name, quantity] of Object.entries(list)) {
    Object.defineProperty(out, name, {
      value: roundUpToMilli(quantity),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return out;
}
