/**
 * Counts and logs the desired-state messages JetStream refused. Every refusal is counted
 * (`flotilla_hub_outbox_refused_total{reason}`); the log gets at most one line per interval,
 * naming subjects and the server's reasons, never payloads (they may be large, and they are
 * the workloads' content), and how many refusals the lines in between would have shown.
 */
import type { Logger } from 'pino';
import type { RefusedRow } from '../domain/outbox-plan.js';
import { takeToken, type Bucket } from '../domain/token-bucket.js';
import type { HubMetrics } from '../metrics.js';

/** Subjects named in one log line. */
const LOGGED_SUBJECTS = 10;

export type RefusalReporter = (refused: readonly RefusedRow[]) => void;

export function createRefusalReporter(deps: {
  metrics: Pick<HubMetrics, 'outboxRefused'>;
  logger: Logger;
  /** At most one log line per this long. */
  intervalMs: number;
  now?: () => number;
}): RefusalReporter {
  const now = deps.now ?? ((): number => performance.now());
  const rule = { perSecond: 1000 / deps.intervalMs, burst: 1 };
  let bucket: Bucket | undefined;
  let unlogged = 0;
  return (refused) => {
    if (refused.length === 0) return;
    for (const r of refused) deps.metrics.outboxRefused.inc({ reason: r.reason });
    const take = takeToken(bucket, rule, now());
    bucket = take.bucket;
    if (!take.allowed) {
      unlogged += refused.length;
      return;
    }
    deps.logger.warn(
      {
        refused: refused.length,
        notLoggedBefore: unlogged,
        messages: refused
          .slice(0, LOGGED_SUBJECTS)
          .map(({ subject, reason, detail, retryMs }) => ({ subject, reason, detail, retryMs })),
      },
      'JetStream refused desired-state messages; they stay in the outbox and are tried again later',
    );
    unlogged = 0;
  };
}
