/**
 * Resource quantities as k8s.io/apimachinery/pkg/api/resource decodes and re-encodes them
 * (Quantity.UnmarshalJSON then MarshalJSON). A revision hash covers the re-encoded text, so
 * "1000m" must become "1", "0.5" become "500m", while "1Gi" stays. Go also keeps the text as
 * written when its fast parser finds it already in a canonical-looking shape ("+1", "1.500",
 * "01Gi"); that reuse rule is reproduced because the vectors show it changes bytes.
 */

export class QuantityError extends Error {
  constructor(input: string, reason: string) {
    super(`invalid quantity ${JSON.stringify(input)}: ${reason}`);
    this.name = 'QuantityError';
  }
}

type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

/** An exact decimal: mantissa × 10^exponent. */
interface Decimal {
  mantissa: bigint;
  exponent: number;
}

const MAX_INT64 = 2n ** 63n - 1n;
const NANO = -9;
/** Kubernetes quantity suffixes: decimal ones as powers of ten, binary ones as powers of two. */
export const DECIMAL_SUFFIXES: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
export const BINARY_SUFFIXES: Readonly<Record<string, number>> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const SUFFIX_CHARS = 'eEinumkKMGTP';

/** The text Go writes for a quantity given as this JSON string. Throws QuantityError like Go fails. */
export function canonicalQuantity(input: string): string {
  const str = trimGoSpace(input);
  if (str === '') throw new QuantityError(input, 'empty');
  if (str === '0') return '0';
  const parts = splitQuantity(str);
  if (parts === undefined) throw new QuantityError(input, 'does not match the quantity format');
  const suffix = interpretSuffix(parts.suffix);
  if (suffix === undefined) throw new QuantityError(input, `unknown suffix ${JSON.stringify(parts.suffix)}`);

  const fast = fastPath(str, parts, suffix);
  if (typeof fast === 'string') return fast;
  if (fast !== undefined) return canonicalize(fast, suffix.format);
  return canonicalize(...slowPath(input, parts, suffix));
}

interface QuantityParts {
  positive: boolean;
  /** The numeric text as written (sign, zeros, point), what Go's slow path parses. */
  value: string;
  num: string;
  denom: string;
  suffix: string;
}

interface Suffix {
  base: 2 | 10;
  exponent: number;
  format: Format;
}

// Splits "<sign><digits>.<digits><suffix>" the way parseQuantityString scans it; undefined
// where Go returns ErrFormatWrong.
// eslint-disable-next-line complexity -- Go's parseQuantityString scanner step for step, so both accept the same text
function splitQuantity(str: string): QuantityParts | undefined {
  let pos = 0;
  let positive = true;
  if (str[0] === '-' || str[0] === '+') {
    positive = str[0] === '+';
    pos++;
  }
  while (pos < str.length && str[pos] === '0') pos++;
  if (pos === str.length) return { positive, value: '0', num: '0', denom: '', suffix: '' };
  const numStart = pos;
  while (pos < str.length && isDigit(str[pos])) pos++;
  const num = pos > numStart ? str.slice(numStart, pos) : '0';
  let denom = '';
  if (str[pos] === '.') {
    const denomStart = ++pos;
    while (pos < str.length && isDigit(str[pos])) pos++;
    denom = str.slice(denomStart, pos);
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < str.length && SUFFIX_CHARS.includes(str[pos] ?? '')) pos++;
  if (str[pos] === '-' || str[pos] === '+') pos++;
  while (pos < str.length && isDigit(str[pos])) pos++;
  if (pos < str.length) return undefined;
  return { positive, value, num, denom, suffix: str.slice(suffixStart) };
}

function interpretSuffix(suffix: string): Suffix | undefined {
  const decimal = DECIMAL_SUFFIXES[suffix];
  if (decimal !== undefined) return { base: 10, exponent: decimal, format: 'DecimalSI' };
  const binary = BINARY_SUFFIXES[suffix];
  if (binary !== undefined) return { base: 2, exponent: binary, format: 'BinarySI' };
  if (suffix.length > 1 && (suffix[0] === 'e' || suffix[0] === 'E') && /^[+-]?\d+$/.test(suffix.slice(1))) {
    const parsed = BigInt(suffix.slice(1));
    if (parsed > MAX_INT64 || parsed < -MAX_INT64 - 1n) return undefined; // ParseInt range error
    return { base: 10, exponent: Number(BigInt.asIntN(32, parsed)), format: 'DecimalExponent' };
  }
  return undefined;
}

// Go's int64 fast path. Returns the reused input text, the exact value, or undefined when Go
// falls back to the arbitrary-precision path.
function fastPath(str: string, parts: QuantityParts, suffix: Suffix): string | Decimal | undefined {
  const { num, denom } = parts;
  let scale = 0;
  let multiplier = 1n;
  let precision: number;
  if (suffix.format === 'BinarySI') {
    if (suffix.exponent < 0 || denom.length > 0) return undefined;
    multiplier = 1n << BigInt(suffix.exponent);
    precision = 15 - num.length - Math.trunc((suffix.exponent * 3) / 10) - 1;
  } else {
    scale = suffix.exponent;
    precision = 18 - (num.length + denom.length);
  }
  if (precision < 0) return undefined;
  scale -= denom.length;
  if (scale < NANO) return undefined;
  const shifted = num + denom;
  const digits = BigInt(shifted);
  const product = digits * multiplier;
  if (product > MAX_INT64) return undefined;
  const reuse =
    suffix.format === 'BinarySI'
      ? (digits & 7n) !== 0n
      : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
  if (reuse) return str;
  return { mantissa: parts.positive ? product : -product, exponent: scale };
}

// Go's inf.Dec path: exact value, rounded away from zero to nanos, BinarySI capped at MaxInt64.
function slowPath(input: string, parts: QuantityParts, suffix: Suffix): [Decimal, Format] {
  if (!/\d/.test(parts.value)) throw new QuantityError(input, 'unable to parse numeric part');
  const unsigned = BigInt(parts.num + parts.denom);
  let magnitude: Decimal =
    suffix.base === 10
      ? { mantissa: unsigned, exponent: suffix.exponent - parts.denom.length }
      : { mantissa: unsigned << BigInt(suffix.exponent), exponent: -parts.denom.length };
  if (magnitude.mantissa !== 0n) magnitude = roundUpToNano(magnitude);
  let format = suffix.format;
  if (format === 'BinarySI') {
    if (compareDecimal(magnitude, { mantissa: MAX_INT64, exponent: 0 }) > 0) {
      magnitude = { mantissa: MAX_INT64, exponent: 0 };
    }
    if (magnitude.mantissa !== 0n && compareDecimal(magnitude, { mantissa: 1n, exponent: 0 }) < 0) format = 'DecimalSI';
  }
  const mantissa = parts.positive ? magnitude.mantissa : -magnitude.mantissa;
  return [{ mantissa, exponent: magnitude.exponent }, format];
}

function roundUpToNano(d: Decimal): Decimal {
  if (d.exponent >= NANO) return d;
  const drop = NANO - d.exponent;
  // A mantissa shorter than the dropped digits is below one nano: it rounds up to exactly one.
  if (d.mantissa.toString().length <= drop) return { mantissa: 1n, exponent: NANO };
  const divisor = 10n ** BigInt(drop);
  const quotient = d.mantissa / divisor;
  return { mantissa: d.mantissa % divisor === 0n ? quotient : quotient + 1n, exponent: NANO };
}

// CanonicalizeBytes: mantissa with the exponent moved to a multiple of 3 (decimal) or of 1024
// (binary), and the matching suffix. A decimal exponent without an SI suffix (above E) prints
// with no suffix at all: Go's table lookup fails silently, and so does this.
function canonicalize(value: Decimal, requested: Format): string {
  if (value.mantissa === 0n) return '0';
  let format = requested;
  if (format === 'BinarySI') {
    const withinKi = compareDecimal(abs(value), { mantissa: 1024n, exponent: 0 }) < 0;
    if (withinKi || !isInteger(value)) format = 'DecimalSI';
  }
  return format === 'BinarySI' ? canonicalBinary(value) : canonicalDecimal(value, format);
}

/** An integer with as many factors of 1024 as its suffix can take (Ki … Ei). */
function canonicalBinary(value: Decimal): string {
  let integer = toInteger(value);
  let power = 0;
  while ((integer >= 1024n || integer <= -1024n) && integer % 1024n === 0n) {
    integer /= 1024n;
    power += 10;
  }
  const suffix = Object.entries(BINARY_SUFFIXES).find(([, exp]) => exp === power)?.[0] ?? '';
  return integer.toString() + suffix;
}

/** The mantissa with the exponent at a multiple of 3, as an SI suffix or `e<n>`. */
function canonicalDecimal(value: Decimal, format: Format): string {
  let { mantissa, exponent } = value;
  while (mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent++;
  }
  while (exponent % 3 !== 0) {
    mantissa *= 10n;
    exponent--;
  }
  if (format === 'DecimalExponent') return mantissa.toString() + (exponent === 0 ? '' : `e${exponent}`);
  const suffix = Object.entries(DECIMAL_SUFFIXES).find(([, exp]) => exp === exponent)?.[0] ?? '';
  return mantissa.toString() + suffix;
}

function compareDecimal(a: Decimal, b: Decimal): number {
  const exponent = Math.min(a.exponent, b.exponent);
  const x = a.mantissa * 10n ** BigInt(a.exponent - exponent);
  const y = b.mantissa * 10n ** BigInt(b.exponent - exponent);
  return x === y ? 0 : x < y ? -1 : 1;
}

function abs(d: Decimal): Decimal {
  return d.mantissa < 0n ? { mantissa: -d.mantissa, exponent: d.exponent } : d;
}

function isInteger(d: Decimal): boolean {
  return d.exponent >= 0 || d.mantissa % 10n ** BigInt(-d.exponent) === 0n;
}

function toInteger(d: Decimal): bigint {
  return d.exponent >= 0 ? d.mantissa * 10n ** BigInt(d.exponent) : d.mantissa / 10n ** BigInt(-d.exponent);
}

function isDigit(ch: string | undefined): boolean {
  return ch !== undefined && ch >= '0' && ch <= '9';
}

// Go's strings.TrimSpace: unicode.IsSpace, which includes U+0085 and excludes U+FEFF (unlike JS trim).
const GO_SPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

function trimGoSpace(s: string): string {
  return s.replace(GO_SPACE, '');
}
