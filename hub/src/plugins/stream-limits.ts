/**
 * Caps the server-sent event streams this process holds open, per token and in total: each open
 * stream holds a socket, buffers and a polling loop, so without a cap one token could hold
 * thousands. A refused stream is a 429 with Retry-After, counted by reason.
 */
import type { RestLimits } from '../config.js';
import { tooManyRequests } from '../errors.js';
import type { HubMetrics } from '../metrics.js';

/** Retry-After of a refused stream: streams end when their rollout does or the client leaves. */
const STREAM_RETRY_SECONDS = 5;

export interface StreamLimiter {
  /** Takes a slot for a stream of `tokenId` and returns its release, or throws a 429. */
  open(tokenId: string): () => void;
  /** Streams open now (for tests and diagnostics). */
  openCount(): number;
}

export function createStreamLimiter(deps: {
  limits: Pick<RestLimits, 'streamsPerToken' | 'streamsTotal'>;
  metrics: Pick<HubMetrics, 'refusals'>;
}): StreamLimiter {
  const perToken = new Map<string, number>();
  let total = 0;
  return {
    open(tokenId) {
      const mine = perToken.get(tokenId) ?? 0;
      const reason =
        mine >= deps.limits.streamsPerToken
          ? 'streams_per_token'
          : total >= deps.limits.streamsTotal
            ? 'streams_total'
            : undefined;
      if (reason) {
        deps.metrics.refusals.inc({ reason });
        throw tooManyRequests(
          reason === 'streams_per_token'
            ? `this token already holds ${mine} event streams (the limit)`
            : 'the hub holds as many event streams as it allows',
          STREAM_RETRY_SECONDS,
        );
      }
      perToken.set(tokenId, mine + 1);
      total++;
      let released = false;
      return () => {
        if (released) return;
        released = true;
        total--;
        const left = (perToken.get(tokenId) ?? 1) - 1;
        if (left > 0) perToken.set(tokenId, left);
        else perToken.delete(tokenId);
      };
    },
    openCount: () => total,
  };
}
