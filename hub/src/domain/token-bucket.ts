/**
 * Token buckets for request rate limits: a bucket holds up to `burst` tokens, refills at
 * `perSecond`, and every admitted request takes one. Pure: the caller keeps the buckets and the
 * clock.
 */

export interface BucketRule {
  perSecond: number;
  burst: number;
}

export interface Bucket {
  tokens: number;
  /** When `tokens` was computed (ms). */
  at: number;
}

export interface Take {
  bucket: Bucket;
  allowed: boolean;
  /** How long until one token is available again (0 when allowed). */
  retryAfterMs: number;
}

function refill(bucket: Bucket | undefined, rule: BucketRule, nowMs: number): Bucket {
  if (!bucket) return { tokens: rule.burst, at: nowMs };
  const elapsed = Math.max(0, nowMs - bucket.at);
  return { tokens: Math.min(rule.burst, bucket.tokens + (elapsed / 1000) * rule.perSecond), at: nowMs };
}

/** Takes one token if there is one; an unknown bucket starts full. */
export function takeToken(bucket: Bucket | undefined, rule: BucketRule, nowMs: number): Take {
  const current = refill(bucket, rule, nowMs);
  if (current.tokens >= 1)
    return { bucket: { ...current, tokens: current.tokens - 1 }, allowed: true, retryAfterMs: 0 };
  return { bucket: current, allowed: false, retryAfterMs: ((1 - current.tokens) / rule.perSecond) * 1000 };
}
