import { systemClock, type Clock } from './clock.js';

/** Decides how long a failed item waits before it is retried (client-go's RateLimiter). */
export interface RateLimiter {
  /** Delay in ms for the next retry of `key`; records the retry. */
  when(key: string): number;
  /** Drops what is known about `key`, so its next failure starts from the smallest delay. */
  forget(key: string): void;
  /** How many retries of `key` were recorded since it was last forgotten. */
  numRequeues(key: string): number;
}

/** base·2^failures per item, capped at max: keeps a broken object from spinning the controller. */
export class ItemExponentialRateLimiter implements RateLimiter {
  readonly #failures = new Map<string, number>();

  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1_000_000,
  ) {}

  when(key: string): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    // The exponent is capped so the power never overflows to Infinity before the cap applies.
    return Math.min(this.baseMs * 2 ** Math.min(failures, 62), this.maxMs);
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }
}

/**
 * One token bucket across all items (qps refill, burst capacity): bounds the overall retry rate
 * when many items fail at once. A retry that finds the bucket empty reserves a future token.
 */
export class TokenBucketRateLimiter implements RateLimiter {
  #tokens: number;
  #last: number;

  constructor(
    private readonly qps = 10,
    private readonly burst = 100,
    private readonly clock: Clock = systemClock,
  ) {
    this.#tokens = burst;
    this.#last = clock.now();
  }

  when(_key: string): number {
    const now = this.clock.now();
    this.#tokens = Math.min(this.burst, this.#tokens + ((now - this.#last) / 1000) * this.qps);
    this.#last = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.qps) * 1000;
  }

  forget(_key: string): void {}

  numRequeues(_key: string): number {
    return 0;
  }
}

/** The longest delay of several limiters; every limiter records every retry. */
export class MaxOfRateLimiter implements RateLimiter {
  readonly #limiters: readonly RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    this.#limiters = limiters;
  }

  when(key: string): number {
    return Math.max(0, ...this.#limiters.map((l) => l.when(key)));
  }

  forget(key: string): void {
    for (const l of this.#limiters) l.forget(key);
  }

  numRequeues(key: string): number {
    return Math.max(0, ...this.#limiters.map((l) => l.numRequeues(key)));
  }
}

/** client-go's default controller limiter: per item 5 ms → 1000 s, overall 10 qps with burst 100. */
export function defaultControllerRateLimiter(clock: Clock = systemClock): RateLimiter {
  return new MaxOfRateLimiter(new ItemExponentialRateLimiter(5, 1_000_000), new TokenBucketRateLimiter(10, 100, clock));
}
