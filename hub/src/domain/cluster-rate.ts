/**
 * A status budget per cluster, so one cluster flooding the STATUS stream (a bug, or a hostile
 * agent: NATS has no per-account message rate) cannot take the ingest's time from the others:
 * each cluster's reports take a token from its own bucket, and reports over the budget are
 * dropped (reason `rate_limit`). Nothing is lost for good: agents resend every object's report
 * at their resync period. Heartbeats are not limited; they coalesce to one per cluster per batch.
 * Pure apart from the map it keeps; the caller passes the clock.
 */
import { takeToken, type Bucket, type BucketRule } from './token-bucket.js';

export interface ClusterRateLimiter {
  /** Takes one report of `cluster` at `nowMs`; false when the cluster is over its budget. */
  admit(cluster: string, nowMs: number): boolean;
  /** Clusters with a bucket (bounded by the accepted clusters, which alone reach the limiter). */
  size(): number;
}

export function createClusterRateLimiter(rule: BucketRule): ClusterRateLimiter {
  const buckets = new Map<string, Bucket>();
  return {
    admit(cluster, nowMs) {
      const take = takeToken(buckets.get(cluster), rule, nowMs);
      buckets.set(cluster, take.bucket);
      return take.allowed;
    },
    size: () => buckets.size,
  };
}
