import { describe, expect, it } from 'vitest';
import { delayAfterFailures, delayAfterSync } from './cert-sync.js';

describe('certificate sync pauses', () => {
  const interval = 60_000;

  it('wait the interval when nothing changed, a second while a rotation moves on', () => {
    expect(delayAfterSync({ action: 'none' }, interval, 0)).toBe(60_000);
    expect(delayAfterSync({ action: 'create' }, interval, 0)).toBe(1000);
    expect(delayAfterSync({ action: 'renew-serving', reason: 'expiring' }, interval, 0)).toBe(1000);
    expect(delayAfterSync({ action: 'create' }, 500, 0), 'never past the interval').toBe(500);
  });

  it('wait until a pending rotation may proceed, at least 100 ms and at most the interval', () => {
    expect(delayAfterSync({ action: 'wait', untilMs: 5_000 }, interval, 1_000)).toBe(4_000);
    expect(delayAfterSync({ action: 'wait', untilMs: 1_010 }, interval, 1_000)).toBe(100);
    expect(delayAfterSync({ action: 'wait', untilMs: 500_000 }, interval, 0)).toBe(60_000);
  });

  it('back off after failures: 1 s doubling up to 32 s, never past the interval', () => {
    expect([1, 2, 3, 5, 6, 7, 20].map((f) => delayAfterFailures(f, interval))).toEqual([
      1000, 2000, 4000, 16_000, 32_000, 32_000, 32_000,
    ]);
    expect(delayAfterFailures(3, 3000)).toBe(3000);
  });
});
