/**
 * Ordering of status reports. A report may replace the stored one only when it is about a newer
 * desired generation, or about the same generation and stored later by JetStream. Only what the
 * agent cannot choose decides: the generation is bounded by what the hub sent (the hub drops a
 * report about a generation it never sent), and the stored time and stream sequence are the
 * server's, monotonic per subject. The agent's own `reportedAt` and `observedGeneration` are
 * shown, never compared: one message with a far-future timestamp or a huge observedGeneration
 * could otherwise win against every later report. The hub applies the same rule in SQL (a
 * row-value comparison); this is the reference and the rule used when coalescing a batch.
 */
export interface StatusOrderKey {
  generation: number;
  /** When JetStream stored the report (ms since the epoch, sub-millisecond part kept). */
  storedAtMs: number;
  /** The report's stream sequence: breaks ties between reports stored in the same instant. */
  streamSequence: number;
}

/** True when `next` must replace `prev`. Equal keys do not replace (idempotent redelivery). */
export function isNewerStatus(prev: StatusOrderKey | undefined, next: StatusOrderKey): boolean {
  if (!prev) return true;
  if (next.generation !== prev.generation) return next.generation > prev.generation;
  if (next.storedAtMs !== prev.storedAtMs) return next.storedAtMs > prev.storedAtMs;
  return next.streamSequence > prev.streamSequence;
}
