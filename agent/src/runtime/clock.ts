import { systemTimers, type Timers } from '@flotilla/api';

export type { Timer } from '@flotilla/api';

/**
 * Time as the runtime sees it. Injected everywhere time matters (queues, backoff, leases,
 * expectations) so unit tests drive time with a fake instead of sleeping; it is also the timer
 * source api's sleep runs on.
 */
export interface Clock extends Timers {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** The real clock, backed by Date.now and setTimeout. */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer: (fn, ms) => systemTimers.setTimer(fn, ms),
};
