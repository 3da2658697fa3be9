/**
 * Request rate limits: one token bucket per API token (a bootstrap token, which a whole fleet of
 * agents shares, per token and client address) and one per client address for requests without
 * a valid token. A valid token is never refused for its address's failures: behind a proxy many
 * clients share one address, and one of them guessing tokens must not lock the others out. The buckets live in this process; the least recently used are dropped beyond
 * MAX_BUCKETS (a dropped bucket comes back full, which only ever errs towards admitting).
 */
import type { RestLimits } from '../config.js';
import { takeToken, type Bucket, type BucketRule } from '../domain/token-bucket.js';
import { tooManyRequests } from '../errors.js';
import type { HubMetrics } from '../metrics.js';
import type { Principal } from '../auth/tokens.js';

const MAX_BUCKETS = 10_000;

export interface RateLimiter {
  /** Throws a 429 when the token (or, for bootstrap tokens, token and address) is over its rate. */
  admitToken(principal: Principal, ip: string): void;
  /** Charges a request without a valid token to its address; throws a 429 when over the rate. */
  admitAnonymous(ip: string): void;
}

export interface RateLimiterDeps {
  limits: Pick<
    RestLimits,
    'requestsPerSecond' | 'requestBurst' | 'anonymousRequestsPerSecond' | 'anonymousRequestBurst'
  >;
  metrics: Pick<HubMetrics, 'refusals'>;
  nowMs?: () => number;
}

class Buckets {
  private readonly map = new Map<string, Bucket>();

  constructor(private readonly rule: BucketRule) {}

  take(key: string, nowMs: number): number | undefined {
    const t = takeToken(this.map.get(key), this.rule, nowMs);
    // Re-inserting keeps the map in least-recently-used order.
    this.map.delete(key);
    this.map.set(key, t.bucket);
    if (this.map.size > MAX_BUCKETS) this.map.delete(this.map.keys().next().value!);
    return t.allowed ? undefined : t.retryAfterMs;
  }
}

export function createRateLimiter(deps: RateLimiterDeps): RateLimiter {
  const now = deps.nowMs ?? Date.now;
  const { limits } = deps;
  const tokens = new Buckets({ perSecond: limits.requestsPerSecond, burst: limits.requestBurst });
  const anonymous = new Buckets({ perSecond: limits.anonymousRequestsPerSecond, burst: limits.anonymousRequestBurst });
  const refuse = (reason: string, retryAfterMs: number): never => {
    deps.metrics.refusals.inc({ reason });
    throw tooManyRequests('too many requests; retry later', retryAfterMs / 1000);
  };
  return {
    admitToken(principal, ip) {
      const key = principal.role === 'bootstrap' ? `${principal.tokenId}@${ip}` : principal.tokenId;
      const wait = tokens.take(key, now());
      if (wait !== undefined) refuse('rate_limit', wait);
    },
    admitAnonymous(ip) {
      const wait = anonymous.take(ip, now());
      if (wait !== undefined) refuse('rate_limit_anonymous', wait);
    },
  };
}
