/**
 * At start the hub needs JetStream to answer: its streams are created or updated before anything
 * else runs. A NATS cluster that has just started (or restarted) answers the connection before its
 * JetStream does: the meta leader is being elected, an account's JetStream is not enabled yet,
 * requests time out or find no responders. Those are waits, not configuration errors, so the start
 * retries them with backoff until the deadline; any other error (a permission violation, a stream
 * config the server refuses) fails the start at once.
 */
import { sleep } from '@flotilla/api';
import type { Logger } from 'pino';

/** Errors a starting or electing JetStream answers with. */
const NOT_READY = [
  /timeout/i,
  /no responders/i,
  /jetstream not enabled/i,
  /temporarily unavailable/i,
  /jetstream system temporarily/i,
  /no suitable peers/i,
  /insufficient resources/i,
  /cluster not available|no leader|leader not known/i,
];

export function isJetStreamNotReady(err: unknown): boolean {
  const text = err instanceof Error ? `${err.name} ${err.message}` : String(err);
  return NOT_READY.some((re) => re.test(text));
}

export interface ReadyOptions {
  /** Give up (with the last error) after this long. */
  deadlineMs: number;
  logger: Pick<Logger, 'warn'>;
  /** First pause between attempts; doubles up to maxDelayMs. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Ends the wait early (hub shutdown); the last error is thrown. */
  signal?: AbortSignal;
  now?: () => number;
}

/** Runs `attempt` until it succeeds, retrying while JetStream is not ready. */
export async function whenJetStreamReady<T>(attempt: () => Promise<T>, options: ReadyOptions): Promise<T> {
  const now = options.now ?? Date.now;
  const maxDelayMs = options.maxDelayMs ?? 5000;
  const giveUpAt = now() + options.deadlineMs;
  let delayMs = options.initialDelayMs ?? 250;
  for (let attempts = 1; ; attempts++) {
    try {
      return await attempt();
    } catch (err) {
      const left = giveUpAt - now();
      if (!isJetStreamNotReady(err) || left <= 0 || options.signal?.aborted) throw err;
      options.logger.warn({ err, attempts, retryInMs: delayMs }, 'JetStream is not ready yet; retrying');
      await sleep(Math.min(delayMs, left), { signal: options.signal });
      delayMs = Math.min(delayMs * 2, maxDelayMs);
    }
  }
}
