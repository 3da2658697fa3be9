/** Settings of an exponential backoff. */
export interface BackoffOptions {
  /** Delay after the first failure. */
  initialMs: number;
  /** Upper bound of any delay. */
  maxMs: number;
  /** Growth per failure; 2 doubles. */
  factor?: number;
  /** Random spread as a fraction of the delay: 0.5 picks from [d, 1.5 d] before capping. */
  jitter?: number;
}

/**
 * Delay before retry number `attempt` (1 = after the first failure): initial·factor^(attempt-1),
 * spread by jitter so many restarting watchers don't hit the apiserver in lockstep, then capped.
 * `random` is injectable to make tests exact.
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const factor = options.factor ?? 2;
  const jitter = options.jitter ?? 0.5;
  const exponent = Math.min(Math.max(attempt - 1, 0), 64);
  const base = Math.min(options.initialMs * factor ** exponent, options.maxMs);
  return Math.min(base * (1 + jitter * random()), options.maxMs);
}
