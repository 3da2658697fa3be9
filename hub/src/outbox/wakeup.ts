/**
 * Wakes the outbox relay of every hub replica when any replica commits outbox rows. A writer
 * hands its rows to its own relay in-process (outbox.ts); but only one relay publishes at a time
 * (the relay lock), and when another replica holds it, that replica would otherwise find the rows
 * only on its next poll. Every append queues a NOTIFY in the writing transaction (delivered on
 * commit, dropped on rollback) naming the writer's session; each replica LISTENs on one dedicated
 * connection and kicks its relay, skipping its own notifications. Polling stays as the safety
 * net: a lost connection costs latency, never a message.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Logger } from 'pino';
import { listenOnOutboxChannel } from '../repositories/outbox-repo.js';

/** A per-process application_name for the hub's pool, to tell its own notifications apart. */
export function hubSessionName(): string {
  return `flotilla-hub-${randomUUID()}`;
}

export interface OutboxListener {
  stop(): Promise<void>;
}

interface ListenOptions {
  connectionString: string;
  logger: Logger;
  onNotify: () => void;
  /** Notifications from sessions with this application_name are this process's own: skipped. */
  ownSessionName?: string;
  retryMs?: number;
  /** Called when an established connection is lost (a metric). */
  onConnectionLost?: () => void;
}

/** A client (not yet connected) that wakes the relay on other sessions' notifications. */
function listeningClient(options: ListenOptions, onError: (err: Error) => void): pg.Client {
  const c = new pg.Client({ connectionString: options.connectionString, keepAlive: true });
  c.on('notification', (n) => {
    if (options.ownSessionName === undefined || n.payload !== options.ownSessionName) options.onNotify();
  });
  c.on('error', onError);
  return c;
}

/**
 * LISTENs on its own connection, reconnecting with backoff (from `retryMs` up to 30 s) whenever
 * the connection fails or is lost (a Postgres restart); calls `onNotify` per notification, and
 * once after every (re)connect for rows committed while nobody listened.
 */
export function listenOutbox(options: ListenOptions): OutboxListener {
  const firstDelay = options.retryMs ?? 500;
  let client: pg.Client | undefined;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let delay = firstDelay;

  /** Ends a failed client and schedules the next attempt; runs at most once per client. */
  const failedOnce = (c: pg.Client): ((err: Error, what: string) => void) => {
    let failed = false;
    return (err, what) => {
      if (failed) return;
      failed = true;
      if (client === c) client = undefined;
      void c.end().catch(() => undefined);
      if (stopped) return;
      options.logger.warn({ err: err.message, retryInMs: delay }, what);
      timer = setTimeout(() => void connect(), delay);
      delay = Math.min(delay * 2, 30_000);
    };
  };

  async function connect(): Promise<void> {
    timer = undefined;
    const c = listeningClient(options, (err) => {
      if (client === c) options.onConnectionLost?.();
      fail(err, 'outbox listener connection lost; reconnecting');
    });
    const fail = failedOnce(c);
    try {
      await c.connect();
      await listenOnOutboxChannel(c);
    } catch (err) {
      fail(err as Error, 'outbox listener cannot connect; retrying');
      return;
    }
    if (stopped) return void (await c.end().catch(() => undefined));
    client = c;
    delay = firstDelay;
    // Rows committed while not listening are found by this pass.
    options.onNotify();
  }

  void connect();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await client?.end().catch(() => undefined);
      client = undefined;
    },
  };
}
