/**
 * The hub's dependency checks for /readyz and for hearing NATS. `isClosed()` is not enough for
 * NATS: the client stays "connected" to a frozen server and reconnects forever to a dead one, so
 * the check is a round trip (PING/PONG). Postgres gets a real query; both have a deadline.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type pg from 'pg';
import { createProbe, type Probe } from './probe.js';

export function databaseProbe(pool: pg.Pool, timeoutMs: number): Probe {
  // query_timeout also ends the query on the connection's side: the pool then drops that client.
  const query: pg.QueryConfig & { query_timeout: number } = { text: 'select 1', query_timeout: timeoutMs };
  return createProbe(() => pool.query(query), timeoutMs);
}

export function natsProbe(nc: NatsConnection, timeoutMs: number): Probe {
  return createProbe(() => nc.rtt(), timeoutMs);
}

/** Ready when every probe answers in time (they run side by side). */
export function allReady(probes: readonly Probe[]): () => Promise<boolean> {
  return async () => (await Promise.all(probes.map((p) => p()))).every(Boolean);
}
