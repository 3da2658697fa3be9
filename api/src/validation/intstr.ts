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

/** Reads an int-or-string as a count or a percentage. */
export function parseIntOrPercent(value: IntOrString): ParsedIntOrPercent {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) ? { kind: 'int', value } : { kind: 'invalid', reason: 'must be an integer' };
  }
  if (!PERCENT_PATTERN.test(value)) {
    return { kind: 'invalid', reason: "must be an integer or a percentage such as '25%'" };
  }
  return { kind: 'percent', value: Number(value.slice(0, -1)) };
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
