import { describe, expect, it } from 'vitest';
import { inFlight } from './ceiling.js';

describe('inFlight', () => {
  it('runs at most `max` calls at once and starts the others in order as slots free up', async () => {
    const slot = inFlight(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const release: (() => void)[] = [];
    const calls = [0, 1, 2, 3, 4].map((i) =>
      slot(async () => {
        started.push(i);
        most = Math.max(most, ++running);
        await new Promise<void>((resolve) => release.push(resolve));
        running--;
        return i;
      }),
    );
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    while (release.length > 0) {
      release.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    expect(await Promise.all(calls)).toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
  });

  it('frees the slot of a call that failed', async () => {
    const slot = inFlight(1);
    await expect(slot(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await slot(() => Promise.resolve('next'))).toBe('next');
  });
});
