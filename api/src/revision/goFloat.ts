/**
 * Formats a float64 the way Go's encoding/json does (floatEncoder): shortest round-trip digits,
 * plain notation for 1e-6 <= |n| < 1e21, exponent notation outside that range with the exponent
 * unpadded ("1e-7", "1e+21"). Go picked these cutoffs to match ES6 number-to-string, so
 * Number#toString and #toExponential give the same text; only -0 differs (Go keeps the sign).
 */
export function formatGoFloat64(n: number): string {
  if (!Number.isFinite(n)) {
    throw new TypeError(`json: unsupported value: ${String(n)}`);
  }
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const abs = Math.abs(n);
  if (abs < 1e-6 || abs >= 1e21) return n.toExponential();
  return n.toString();
}
