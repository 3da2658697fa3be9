/**
 * How many pulls may run at once on this node (kruise-daemon's `--max-workers-for-pull-image`,
 * OpenKruise v1.9): a FIFO of waiting pulls in front of a fixed number of slots. Without a limit
 * every pull gets a slot at once. A pull aborted while it waits leaves the queue without one.
 */

/** Gives the slot back; calling it twice gives it back once. */
export type ReleaseSlot = () => void;

interface Waiter {
  grant: (release: ReleaseSlot) => void;
  signal: AbortSignal;
}

export class PullSlots {
  readonly #limit: number | undefined;
  #used = 0;
  readonly #queue: Waiter[] = [];

  /** `limit` undefined: no limit. */
  constructor(limit: number | undefined) {
    this.#limit = limit;
  }

  /** A slot now, or undefined when all are taken (then `acquire` queues for one). */
  tryAcquire(): ReleaseSlot | undefined {
    if (this.#limit !== undefined && this.#used >= this.#limit) return undefined;
    this.#used++;
    return this.#releaser();
  }

  /** Waits in line for a slot; resolves undefined if `signal` aborts first. */
  acquire(signal: AbortSignal): Promise<ReleaseSlot | undefined> {
    const now = this.tryAcquire();
    if (now) return Promise.resolve(now);
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const waiter: Waiter = { grant: resolve, signal };
      this.#queue.push(waiter);
      signal.addEventListener(
        'abort',
        () => {
          const at = this.#queue.indexOf(waiter);
          if (at >= 0) {
            this.#queue.splice(at, 1);
            resolve(undefined);
          }
        },
        { once: true },
      );
    });
  }

  /** Pulls waiting for a slot. */
  waiting(): number {
    return this.#queue.length;
  }

  #releaser(): ReleaseSlot {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // The slot passes straight to the first waiter, so `used` only drops when nobody waits.
      const next = this.#queue.shift();
      if (next) next.grant(this.#releaser());
      else this.#used--;
    };
  }
}
