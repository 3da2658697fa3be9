/** A scheduled callback that can be cancelled. */
export interface Timer {
  cancel(): void;
}

/**
 * Time as the runtime sees it. Injected everywhere time matters (queues, backoff, leases,
 * expectations) so unit tests drive time with a fake instead of sleeping.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `fn` once after `ms` milliseconds. */
  setTimer(fn: () => void, ms: number): Timer;
}

/** The real clock, backed by Date.now and setTimeout. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const handle = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle) };
  },
};

/**
 * Resolves after `ms` on `clock`, or early (without rejecting) when `signal` aborts, so loops
 * can check their own stop condition afterwards instead of handling an exception.
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = (): void => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
