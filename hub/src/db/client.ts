/** The drizzle database handle over a pg pool, and the transaction type repositories accept. */
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import * as schema from './schema/index.js';

export type Db = NodePgDatabase<typeof schema>;
/** A transaction handle; repositories take `Db | Tx` so services decide the boundaries. */
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type DbOrTx = Db | Tx;

/**
 * drizzle over the pool, except that a transaction runs on a client this takes from the pool and
 * always gives back. drizzle's own pool transaction gives its client back only once BEGIN has
 * succeeded: a BEGIN that fails (the connection was terminated just as the client was taken, as
 * when Postgres restarts) would keep the client checked out for ever, shrinking the pool and
 * making pool.end() wait for good. A client whose connection failed is dropped by the pool on
 * release. (A drizzle handle per transaction costs about 0.06 ms.)
 */
export function createDb(pool: pg.Pool): Db {
  const db = drizzle(pool, { schema });
  const transaction: Db['transaction'] = async (work, config) => {
    const client = await pool.connect();
    try {
      return await drizzle(client, { schema }).transaction(work, config);
    } finally {
      client.release();
    }
  };
  return Object.assign(db, { transaction });
}
