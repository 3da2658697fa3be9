import type { Clock, Timer } from '../clock.js';

interface Scheduled {
  due: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A manual clock for tests: timers fire only when the test advances time, in due order (ties in
 * scheduling order), exactly like real timers but without waiting.
 */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: Scheduled[] = [];

  constructor(start = 1_700_000_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(fn: () => void, ms: number): Timer {
    const t: Scheduled = { due: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(t);
    return {
      cancel: () => {
        t.cancelled = true;
      },
    };
  }

  /** Number of timers still waiting to fire. */
  pending(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward by `ms`, firing due timers synchronously. */
  advance(ms: number): void {
    const target = this.#now + ms;
    for (let t = this.#next(target); t; t = this.#next(target)) {
      this.#now = t.due;
      t.fn();
    }
    this.#now = target;
  }

  /**
   * Moves time forward by `ms` and lets promise continuations run after each timer, for code
   * that awaits sleeps in a loop (informer restarts, lease renewals).
   */
  async tick(ms: number): Promise<void> {
    const target = this.#now + ms;
    await flush();
    for (let t = this.#next(target); t; t = this.#next(target)) {
      this.#now = t.due;
      t.fn();
      await flush();
    }
    this.#now = target;
    await flush();
  }

  #next(target: number): Scheduled | undefined {
    this.#timers = this.#timers.filter((t) => !t.cancelled);
    let best: Scheduled | undefined;
    for (const t of this.#timers) {
      if (t.due <= target && (!best || t.due < best.due || (t.due === best.due && t.seq < best.seq))) best = t;
    }
    if (best) best.cancelled = true;
    return best;
  }
}

/** Lets every pending promise continuation (and I/O callbacks queued before it) run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
