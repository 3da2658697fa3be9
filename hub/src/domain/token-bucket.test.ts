import { describe, expect, it } from 'vitest';
import { takeToken, type Bucket } from './token-bucket.js';

const rule = { perSecond: 2, burst: 3 };

describe('token bucket', () => {
  it('admits a burst, then refuses with the time until the next token', () => {
    let bucket: Bucket | undefined;
    const allowed: boolean[] = [];
    for (let i = 0; i < 4; i++) {
      const t = takeToken(bucket, rule, 1000);
      bucket = t.bucket;
      allowed.push(t.allowed);
      if (!t.allowed) expect(t.retryAfterMs).toBe(500);
    }
    expect(allowed).toEqual([true, true, true, false]);
    expect(takeToken(bucket, rule, 1499).allowed).toBe(false);
    expect(takeToken(bucket, rule, 1500).allowed).toBe(true);
  });

  it('refills at the rate and never beyond the burst', () => {
    const empty: Bucket = { tokens: 0, at: 0 };
    expect(takeToken(empty, rule, 250).allowed).toBe(false);
    expect(takeToken(empty, rule, 500).allowed).toBe(true);
    expect(takeToken(empty, rule, 60_000).bucket.tokens).toBe(2);
  });

  it('does not refill when the clock goes backwards', () => {
    const t = takeToken({ tokens: 0.5, at: 10_000 }, rule, 5_000);
    expect(t.allowed).toBe(false);
    expect(t.bucket.tokens).toBe(0.5);
  });
});
