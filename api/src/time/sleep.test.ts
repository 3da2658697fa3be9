import { describe, expect, it, vi } from 'vitest';
import { sleep, untilAborted, type Timers } from './sleep.js';

/** Timers that fire only when the test says so. */
function manualTimers(): Timers & { fire(): void; scheduled: number[]; cancelled: number } {
  const pending: { fn: () => void; live: boolean }[] = [];
  const t = {
    scheduled: [] as number[],
    cancelled: 0,
    setTimer(fn: () => void, ms: number) {
      const entry = { fn, live: true };
      pending.push(entry);
      t.scheduled.push(ms);
      return {
        cancel: () => {
          if (entry.live) t.cancelled++;
          entry.live = false;
        },
      };
    },
    fire() {
      for (const p of pending.splice(0)) if (p.live) p.fn();
    },
  };
  return t;
}

const settled = async (p: Promise<void>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  await new Promise((r) => setImmediate(r));
  return done;
};

describe('sleep', () => {
  it('resolves when its timer fires', async () => {
    const timers = manualTimers();
    const slept = sleep(250, { timers });
    expect(timers.scheduled).toEqual([250]);
    expect(await settled(slept)).toBe(false);
    timers.fire();
    expect(await settled(slept)).toBe(true);
  });

  it('resolves early, without rejecting, when the signal aborts, and cancels its timer', async () => {
    const timers = manualTimers();
    const stop = new AbortController();
    const slept = sleep(60_000, { signal: stop.signal, timers });
    stop.abort();
    await expect(slept).resolves.toBeUndefined();
    expect(timers.cancelled).toBe(1);
  });

  it('does not schedule anything for an already aborted signal', async () => {
    const timers = manualTimers();
    await expect(sleep(1000, { signal: AbortSignal.abort(), timers })).resolves.toBeUndefined();
    expect(timers.scheduled).toEqual([]);
  });

  it('leaves no abort listener behind on a long-lived signal', async () => {
    const timers = manualTimers();
    const stop = new AbortController();
    const remove = vi.spyOn(stop.signal, 'removeEventListener');
    for (let i = 0; i < 3; i++) {
      const slept = sleep(10, { signal: stop.signal, timers });
      timers.fire();
      await slept;
    }
    expect(remove).toHaveBeenCalledTimes(3);
  });

  it('runs on the real timers by default', async () => {
    await expect(sleep(1)).resolves.toBeUndefined();
  });
});

describe('untilAborted', () => {
  it('resolves when the signal aborts', async () => {
    const stop = new AbortController();
    const waiting = untilAborted(stop.signal);
    expect(await settled(waiting)).toBe(false);
    stop.abort();
    expect(await settled(waiting)).toBe(true);
  });

  it('resolves at once for an aborted signal', async () => {
    expect(await settled(untilAborted(AbortSignal.abort()))).toBe(true);
  });
});
