/**
 * The credential locks on real Postgres: account changes of different clusters run side by side
 * (a fleet joining at once is not serialized), two of the same cluster one after the other, and
 * the account sync alone, after every change in flight and before any that comes later.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, createPool, createLogger, lockAllCredentials, lockClusterCredentials, type Db } from '@flotilla/hub';
import { createTestDatabase, type TestDatabase } from '@flotilla/test';
import type pg from 'pg';

let database: TestDatabase;
let pool: pg.Pool;
let db: Db;

beforeAll(async () => {
  database = await createTestDatabase('flotilla_cred_locks');
  pool = createPool({
    connectionString: database.url,
    applicationName: 'cred-locks-test',
    max: 6,
    logger: createLogger('silent'),
  });
  db = createDb(pool);
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

/** A transaction that takes `lock`, records when it got it, and holds it until `release` resolves. */
function holder(
  lock: Parameters<Db['transaction']>[0],
  release: Promise<void>,
  log: string[],
  name: string,
): Promise<void> {
  return db.transaction(async (tx) => {
    await lock(tx);
    log.push(name);
    await release;
  });
}

const tick = (ms = 300): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('credential locks', () => {
  it('let clusters change side by side, one change per cluster, and the sync run alone', async () => {
    const log: string[] = [];
    let releaseA!: () => void;
    const a = holder((tx) => lockClusterCredentials(tx, 'a'), new Promise((r) => (releaseA = r)), log, 'a');
    await tick();
    // Another cluster is not held up by a.
    const b = holder((tx) => lockClusterCredentials(tx, 'b'), Promise.resolve(), log, 'b');
    await b;
    expect(log).toEqual(['a', 'b']);
    // The same cluster waits for a; the sync waits for a too, and what comes after the sync waits for it.
    const a2 = holder((tx) => lockClusterCredentials(tx, 'a'), Promise.resolve(), log, 'a2');
    await tick();
    let releaseSync!: () => void;
    const sync = holder((tx) => lockAllCredentials(tx), new Promise((r) => (releaseSync = r)), log, 'sync');
    await tick();
    const c = holder((tx) => lockClusterCredentials(tx, 'c'), Promise.resolve(), log, 'c');
    await tick();
    expect(log).toEqual(['a', 'b']);
    releaseA();
    await a;
    await a2;
    await tick();
    expect(log).toEqual(['a', 'b', 'a2', 'sync']);
    releaseSync();
    await sync;
    await c;
    expect(log).toEqual(['a', 'b', 'a2', 'sync', 'c']);
  });
});
