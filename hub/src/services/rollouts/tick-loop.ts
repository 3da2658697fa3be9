/**
 * The scheduler's timer: a tick every `tickMs`, one at a time; a kick asks for a tick soon,
 * coalescing kicks over `kickDelayMs` (status reports arrive in bursts), and a kick during a tick
 * runs the next one right after it.
 */
export interface TickLoop {
  start(): void;
  /** Stops ticking and waits for a running tick. */
  stop(): Promise<void>;
  kick(): void;
}

export function createTickLoop(deps: {
  tick: () => Promise<unknown>;
  tickMs: number;
  kickDelayMs: number;
  /** A failed tick is reported here; the loop goes on. */
  onError: (err: unknown) => void;
}): TickLoop {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> = Promise.resolve();
  let stopped = true;
  let kicked = false;
  let ticking = false;
  let kickPending = false;

  function schedule(delay: number): void {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(loop, delay);
  }

  function loop(): void {
    timer = undefined;
    kickPending = false;
    if (stopped || ticking) return;
    ticking = true;
    kicked = false;
    running = deps
      .tick()
      .catch(deps.onError)
      .finally(() => {
        ticking = false;
        schedule(kicked ? deps.kickDelayMs : deps.tickMs);
      });
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(0);
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await running;
    },
    kick() {
      if (stopped) return;
      if (ticking) kicked = true;
      else if (!timer || !kickPending) {
        kickPending = true;
        schedule(deps.kickDelayMs);
      }
    },
  };
}
