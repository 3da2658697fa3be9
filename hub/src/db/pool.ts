/**
 * The hub's Postgres pool, safe against lost connections. pg-pool listens for errors only on
 * idle clients: a client that is checked out (a transaction, the scheduler's lock session, the
 * migration) and loses its connection — Postgres restarted or failed over — emits 'error' with
 * no listener, and Node ends the process. Here every client gets a listener for its whole life
 * as soon as the pool creates it: the loss is logged and counted, whoever holds the client sees
 * its next query fail, and the pool discards the client when it is released (a client that saw
 * a connection error is not queryable, so pg-pool never hands it out again).
 */
import pg from 'pg';
import type { Logger } from 'pino';

export interface PoolOptions {
  connectionString: string;
  /** application_name of every session (the outbox listener tells its own notifications by it). */
  applicationName: string;
  max: number;
  logger: Logger;
  /** Called once per connection lost (a metric). */
  onConnectionLost?: () => void;
  /** A connection attempt that takes longer fails (a frozen or unreachable server). */
  connectTimeoutMs?: number;
}

/** Attaches a permanent error listener to a pg client; returns the client. */
export function guardClient<C extends pg.ClientBase>(client: C, onError: (err: Error) => void): C {
  let reported = false;
  client.on('error', (err: Error) => {
    // One loss can surface twice (the server's FATAL message, then the socket's end).
    if (reported) return;
    reported = true;
    onError(err);
  });
  return client;
}

export function createPool(options: PoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max,
    application_name: options.applicationName,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    // A peer that vanished without closing the socket is noticed by the kernel, not never.
    keepAlive: true,
  });
  const lost = (err: Error): void => {
    options.onConnectionLost?.();
    options.logger.warn({ err: err.message }, 'database connection lost; it is replaced on next use');
  };
  pool.on('connect', (client) => guardClient(client, lost));
  // pg-pool re-emits an idle client's error here; the client's own listener above has logged it.
  pool.on('error', () => undefined);
  return pool;
}
