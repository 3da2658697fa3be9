import { describe, expect, it } from 'vitest';
import { createClusterRateLimiter } from './cluster-rate.js';

describe('createClusterRateLimiter', () => {
  it('admits a burst per cluster, then the refill rate, each cluster on its own budget', () => {
    const limiter = createClusterRateLimiter({ perSecond: 10, burst: 5 });
    const a = Array.from({ length: 8 }, () => limiter.admit('a', 0));
    expect(a.filter(Boolean)).toHaveLength(5);
    // b is untouched by a's flood.
    expect(limiter.admit('b', 0)).toBe(true);
    // 10 per second: after 300 ms, three more of a's.
    const later = Array.from({ length: 5 }, () => limiter.admit('a', 300));
    expect(later).toEqual([true, true, true, false, false]);
    expect(limiter.size()).toBe(2);
  });
});
