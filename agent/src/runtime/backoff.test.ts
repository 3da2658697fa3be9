import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  const opts = { initialMs: 100, maxMs: 5000, jitter: 0.5 };

  it('doubles per attempt without jitter and caps at max', () => {
    const none = (): number => 0;
    expect([1, 2, 3, 4, 5, 6, 7].map((a) => backoffDelay(a, opts, none))).toEqual([
      100, 200, 400, 800, 1600, 3200, 5000,
    ]);
    expect(backoffDelay(10_000, opts, none)).toBe(5000);
  });

  it('spreads by up to the jitter fraction but never beyond the cap', () => {
    const most = (): number => 0.999;
    expect(backoffDelay(1, opts, most)).toBeCloseTo(149.95);
    expect(backoffDelay(6, opts, most)).toBeCloseTo(4798.4);
    expect(backoffDelay(7, opts, most)).toBe(5000);
    for (let i = 0; i < 100; i++) {
      const d = backoffDelay(3, opts);
      expect(d).toBeGreaterThanOrEqual(400);
      expect(d).toBeLessThanOrEqual(600);
    }
  });
});
