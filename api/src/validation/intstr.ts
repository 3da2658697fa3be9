/**
 * Int-or-percent values (`intstr.IntOrString` used as a count or a percentage of a total), parsed
 * and scaled with the rounding Kubernetes and OpenKruise use.
 */

/** A JSON int-or-string: an integer count, or a string such as "25%". */
export type IntOrString = number | string;

/** A percentage string: digits followed by '%', nothing else. */
export const PERCENT_PATTERN = /^[0-9]+%$/;

export type ParsedIntOrPercent =
  | { readonly kind: 'int'; readonly value: number }
  | { readonly kind: 'percent'; readonly value: number }
  | { readonly kind: 'invalid'; readonly reason: string };

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Reads an int-or-string as a count or a percentage, within Go's limits: intstr.IntOrString keeps
 * a number in an int32 (a larger one fails to decode), and a percentage goes through strconv.Atoi
 * (an int64), so Kubernetes and OpenKruise refuse values beyond those.
 */
export function parseIntOrPercent(value: IntOrString): ParsedIntOrPercent {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) return { kind: 'invalid', reason: 'must be an integer' };
    if (value < INT32_MIN || value > INT32_MAX) {
      return { kind: 'invalid', reason: `must be an integer from ${INT32_MIN} to ${INT32_MAX}` };
    }
    return { kind: 'int', value };
  }
  if (!PERCENT_PATTERN.test(value)) {
    return { kind: 'invalid', reason: "must be an integer or a percentage such as '25%'" };
  }
  const digits = value.slice(0, -1);
  if (BigInt(digits) > INT64_MAX) return { kind: 'invalid', reason: 'percentage is out of range' };
  return { kind: 'percent', value: Number(digits) };
}

/**
 * The absolute number an int-or-percent stands for against `total`: integers as they are,
 * percentages of `total` rounded up or down. Undefined when the value cannot be parsed.
 */
export function scaledValue(value: IntOrString, total: number, roundUp: boolean): number | undefined {
  const parsed = parseIntOrPercent(value);
  switch (parsed.kind) {
    case 'int':
      return parsed.value;
    case 'percent': {
      const exact = (parsed.value * total) / 100;
      return roundUp ? Math.ceil(exact) : Math.floor(exact);
    }
    default:
      return undefined;
  }
}
