// Defensive readers for status and spec fields. Health runs on whatever a cluster reported, so
// every field is checked at run time instead of trusted, and a bad one is reported, not thrown.

/** Thrown inside this package only; the health functions turn it into an Unknown verdict. */
export class MalformedField extends Error {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(`${field} ${reason}`);
    this.name = 'MalformedField';
  }
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A record field, or {} when absent or null. */
export function recordAt(parent: Record<string, unknown>, key: string, field: string): Record<string, unknown> {
  const value = parent[key];
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw new MalformedField(field, 'is not an object');
  return value;
}

/** A non-negative integer count, or `fallback` when absent. */
export function countAt(parent: Record<string, unknown>, key: string, field: string, fallback: number): number;
export function countAt(
  parent: Record<string, unknown>,
  key: string,
  field: string,
  fallback?: undefined,
): number | undefined;
export function countAt(
  parent: Record<string, unknown>,
  key: string,
  field: string,
  fallback?: number,
): number | undefined {
  const value = parent[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new MalformedField(field, `is not a non-negative integer: ${JSON.stringify(value)}`);
  }
  return value;
}

export function stringAt(parent: Record<string, unknown>, key: string, field: string): string | undefined {
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new MalformedField(field, 'is not a string');
  return value;
}

export function booleanAt(parent: Record<string, unknown>, key: string, field: string): boolean {
  const value = parent[key];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new MalformedField(field, 'is not a boolean');
  return value;
}

/** An IntOrString as given (number or "N%"), or undefined when absent. */
export function intOrStringAt(
  parent: Record<string, unknown>,
  key: string,
  field: string,
): number | string | undefined {
  const value = parent[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' && typeof value !== 'string')
    throw new MalformedField(field, 'is not an int or string');
  return value;
}

/** A list of objects, or [] when absent; `field` names it in the error (`field[i]` for an entry). */
export function recordListAt(parent: Record<string, unknown>, key: string, field: string): Record<string, unknown>[] {
  const value = parent[key];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new MalformedField(field, 'is not a list');
  return value.map((entry: unknown, i) => {
    if (!isRecord(entry)) throw new MalformedField(`${field}[${i}]`, 'is not an object');
    return entry;
  });
}
