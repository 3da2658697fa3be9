/**
 * Ordering of status reports: a report may replace the stored one only when it is about a newer
 * desired generation, or the same generation with a newer observedGeneration, or the same pair
 * reported later. The hub applies the same rule in SQL (a row-value comparison); this is the
 * reference and the rule used when coalescing a batch in memory.
 */
export interface StatusOrderKey {
  generation: number;
  observedGeneration: number;
  /** Milliseconds since the epoch. */
  reportedAtMs: number;
}

/** True when `next` must replace `prev`. Equal keys do not replace (idempotent redelivery). */
export function isNewerStatus(prev: StatusOrderKey | undefined, next: StatusOrderKey): boolean {
  if (!prev) return true;
  if (next.generation !== prev.generation) return next.generation > prev.generation;
  if (next.observedGeneration !== prev.observedGeneration) return next.observedGeneration > prev.observedGeneration;
  return next.reportedAtMs > prev.reportedAtMs;
}
