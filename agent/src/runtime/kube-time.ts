/** metav1.Time: RFC 3339 with second precision, e.g. `2026-01-02T03:04:05Z`. */
export function formatTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * metav1.MicroTime: RFC 3339 with exactly six fractional digits. The apiserver parses it with a
 * fixed-width layout, so the millisecond form Date.toISOString() produces is rejected.
 */
export function formatMicroTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Parses metav1.Time or MicroTime into epoch milliseconds; undefined when absent or invalid. */
export function parseTime(value: string | undefined | null): number | undefined {
  if (!value) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}
