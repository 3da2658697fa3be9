/**
 * The one abortable sleep of the code base, and the timer interface it runs on. The agent's
 * runtime passes its injected Clock (which extends Timers) so unit tests drive time with a fake;
 * everything else uses the real timers.
 */

/** A scheduled callback that can be cancelled. */
export interface Timer {
  cancel(): void;
}

/** Where timers come from: the real ones below, or a fake clock in tests. */
export interface Timers {
  /** Runs `fn` once after `ms` milliseconds. */
  setTimer(fn: () => void, ms: number): Timer;
}

/** setTimeout and clearTimeout. */
export const systemTimers: Timers = {
  setTimer(fn, ms) {
    const handle = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(handle) };
  },
};

export interface SleepOptions {
  /** Ends the sleep early, without rejecting. */
  signal?: AbortSignal | undefined;
  /** Default: systemTimers. */
  timers?: Timers;
}

/**
 * Resolves after `ms`, or early (without rejecting) when `signal` aborts, so loops check their own
 * stop condition afterwards instead of handling an exception. The abort listener goes when the
 * sleep ends: a loop pausing thousands of times on one long-lived signal must not pile them up.
 */
export function sleep(ms: number, options: SleepOptions = {}): Promise<void> {
  const { signal, timers = systemTimers } = options;
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = (): void => {
      timer.cancel();
      resolve();
    };
    const timer = timers.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves when `signal` aborts (at once if it already has): a runnable's "run until stopped". */
export function untilAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}
