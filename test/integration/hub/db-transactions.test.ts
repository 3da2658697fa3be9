/**
 * The hub's transactions against real Postgres when the connection a transaction takes from the
 * pool was terminated just before its BEGIN (as when Postgres restarts under a busy hub): the
 * transaction fails, and the pool gets its client back. The race is made certain by holding the
 * idle client's socket unread (so the pool cannot see the termination) until the transaction
 * has taken it. Were the client kept, a pool of one would never hand out a connection again, and
 * ending the pool would never return (the hub's shutdown hung on exactly that).
 */
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql } from 'drizzle-orm';
import { createDb, createLogger, createPool } from '@flotilla/hub';
import { createTestDatabase, localPostgres, type TestDatabase } from '@flotilla/test';
import { eventually } from '../helpers/kube.js';

let database: TestDatabase;
let admin: pg.Client;

beforeAll(async () => {
  database = await createTestDatabase('flotilla_db_tx');
  admin = new pg.Client({
    connectionString: `postgres://${localPostgres.user}@${localPostgres.host}:${localPostgres.port}/postgres`,
  });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await database?.drop();
});

/** The socket under a pg client (private to pg; the test holds its reads back). */
const socketOf = (client: pg.PoolClient): Socket =>
  (client as unknown as { connection: { stream: Socket } }).connection.stream;

describe('a transaction whose connection was terminated before BEGIN', () => {
  it('fails, and gives the client back to the pool', async () => {
    const pool = createPool({
      connectionString: database.url,
      applicationName: 'flotilla-db-tx-test',
      max: 1,
      logger: createLogger('silent'),
      connectTimeoutMs: 5000,
    });
    const db = createDb(pool);
    let client: pg.PoolClient | undefined;
    pool.on('acquire', (c) => (client = c));
    const { rows } = await db.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`);
    const pid = rows[0]!.pid;

    // The idle client's termination stays unread: the pool still holds it as healthy.
    socketOf(client!).pause();
    await admin.query('select pg_terminate_backend($1)', [pid]);
    await eventually(
      'the backend to be gone',
      async () => (await admin.query('select 1 from pg_stat_activity where pid = $1', [pid])).rowCount === 0,
      10_000,
      50,
    );
    const tx = db.transaction(async (t) => t.execute(sql`select 1`));
    socketOf(client!).resume();
    await expect(tx).rejects.toThrow();

    // A pool of one serves again only if the failed transaction gave its client back.
    const again = await db.execute<{ one: number }>(sql`select 1 as one`);
    expect(again.rows[0]!.one).toBe(1);
    await pool.end();
  });
});
