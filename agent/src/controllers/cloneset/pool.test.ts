import { describe, expect, it } from 'vitest';
import { firstError, pooled } from './pool.js';

describe('pooled', () => {
  it('runs everything with at most `limit` in flight and reports errors by position', async () => {
    let inFlight = 0;
    let max = 0;
    const errors = await pooled([1, 2, 3, 4, 5, 6], 2, async (n) => {
      max = Math.max(max, ++inFlight);
      await new Promise((r) => setTimeout(r, 2));
      inFlight--;
      if (n === 4) throw new Error('four');
    });
    expect(max).toBe(2);
    expect(errors.map((e) => (e as Error | undefined)?.message)).toEqual([
      undefined,
      undefined,
      undefined,
      'four',
      undefined,
      undefined,
    ]);
    expect((firstError(errors) as Error).message).toBe('four');
  });

  it('with stopOnError starts nothing new after a failure', async () => {
    const started: number[] = [];
    await pooled(
      [1, 2, 3, 4],
      1,
      (n) => {
        started.push(n);
        return n === 2 ? Promise.reject(new Error('two')) : Promise.resolve();
      },
      true,
    );
    expect(started).toEqual([1, 2]);
  });
});
