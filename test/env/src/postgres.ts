import pg from 'pg';
import { HarnessError } from './errors.js';

export interface TestDatabase {
  /** postgres://... URL of a database that exists only for this suite. */
  url: string;
  name: string;
  drop(): Promise<void>;
}

export interface PostgresServer {
  host: string;
  port: number;
  user: string;
}

export const localPostgres: PostgresServer = { host: '127.0.0.1', port: 5432, user: 'postgres' };

const adminUrl = (s: PostgresServer): string => `postgres://${s.user}@${s.host}:${s.port}/postgres`;

/** Creates a fresh, uniquely named database; `drop` removes it and ends its connections. */
export async function createTestDatabase(prefix = 'flotilla_test', server = localPostgres): Promise<TestDatabase> {
  const name =
    `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`.toLowerCase();
  const client = new pg.Client({ connectionString: adminUrl(server) });
  try {
    await client.connect();
    await client.query(`CREATE DATABASE "${name}"`);
  } catch (cause) {
    throw new HarnessError('START_FAILED', 'postgres', `cannot create database on ${server.host}:${server.port}`, '', {
      cause,
    });
  } finally {
    await client.end().catch(() => undefined);
  }
  return {
    name,
    url: `postgres://${server.user}@${server.host}:${server.port}/${name}`,
    async drop(): Promise<void> {
      const c = new pg.Client({ connectionString: adminUrl(server) });
      await c.connect();
      try {
        // Clients that just ended may still be closing their sockets; terminating them mid-close
        // surfaces as an unhandled error in their process. Give them a moment, then force.
        for (let i = 0; i < 20; i++) {
          const r = await c.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1', [
            name,
          ]);
          if (Number(r.rows[0]?.n ?? 0) === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
