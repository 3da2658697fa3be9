/**
 * Applies the committed drizzle-kit migrations. Several hub replicas may start at once, so the
 * run is wrapped in a session-level Postgres advisory lock: the first replica migrates, the
 * others wait for the lock and then find nothing left to do.
 */
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import type pg from 'pg';
import { HubError } from '../errors.js';

/** `migrations/` at the repository root (same relative depth from src/ and dist/). */
export const DEFAULT_MIGRATIONS_FOLDER = fileURLToPath(new URL('../../../migrations', import.meta.url));

/** Arbitrary constant shared by every hub replica ("flotilla" in ASCII, as a bigint). */
const MIGRATION_LOCK_KEY = '7380396435129003105';

export async function runMigrations(pool: pg.Pool, migrationsFolder = DEFAULT_MIGRATIONS_FOLDER): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query(`select pg_advisory_lock(${MIGRATION_LOCK_KEY}::bigint)`);
    try {
      await migrate(drizzle(client), { migrationsFolder });
    } finally {
      await client.query(`select pg_advisory_unlock(${MIGRATION_LOCK_KEY}::bigint)`);
    }
  } catch (cause) {
    throw new HubError('HUB_ERR_MIGRATION', `applying migrations from ${migrationsFolder} failed`, { cause });
  } finally {
    client.release();
  }
}
