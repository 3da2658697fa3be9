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
import { LOCK_KEYS, lockSession, unlockSession } from './locks.js';

/** `migrations/` at the repository root (same relative depth from src/ and dist/). */
export const DEFAULT_MIGRATIONS_FOLDER = fileURLToPath(new URL('../../../migrations', import.meta.url));

export async function runMigrations(pool: pg.Pool, migrationsFolder = DEFAULT_MIGRATIONS_FOLDER): Promise<void> {
  const client = await pool.connect();
  try {
    await lockSession(client, LOCK_KEYS.migration);
    try {
      await migrate(drizzle(client), { migrationsFolder });
    } finally {
      await unlockSession(client, LOCK_KEYS.migration);
    }
  } catch (cause) {
    throw new HubError('HUB_ERR_MIGRATION', `applying migrations from ${migrationsFolder} failed`, { cause });
  } finally {
    client.release();
  }
}
