/** Shared pieces of the hub suites: a migrated database, tokens, request helpers, templates. */
import { createTestDatabase, localPostgres, type PostgresServer, type TestDatabase } from '@flotilla/test';
import {
  buildApp,
  createAccountIssuer,
  createOperatorSetup,
  keysOfSetup,
  kruiseSpecValidator,
  createDb,
  createHubMetrics,
  createLogger,
  newSecret,
  runMigrations,
  sha256,
  type Db,
} from '@flotilla/hub';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { Registry } from 'prom-client';

export interface HubDb {
  db: Db;
  pool: pg.Pool;
  database: TestDatabase;
  close(): Promise<void>;
}

/** A fresh, migrated database on `server` (default: the shared local Postgres). */
export async function migratedDatabase(
  prefix = 'flotilla_hub',
  server: PostgresServer = localPostgres,
): Promise<HubDb> {
  const database = await createTestDatabase(prefix, server);
  const pool = new pg.Pool({ connectionString: database.url, max: 5 });
  // Connections the drop terminates must not surface as unhandled errors.
  pool.on('error', () => undefined);
  await runMigrations(pool);
  return {
    db: createDb(pool),
    pool,
    database,
    async close() {
      await pool.end();
      await database.drop();
    },
  };
}

/** Inserts a token directly (as an admin would through the API) and returns its secret. */
export async function insertToken(pool: pg.Pool, name: string, role: string): Promise<string> {
  const token = newSecret('flt');
  await pool.query(`insert into api_tokens (name, role, token_hash, created_by) values ($1, $2, $3, 'test')`, [
    name,
    role,
    sha256(token),
  ]);
  return token;
}

export interface TestApp {
  app: FastifyInstance;
  /** Account JWTs the hub pushed to its (recording) resolver, in order. */
  accountPushes: () => string[];
}

/**
 * The REST app over a real database, without NATS: the hub signs real account and user JWTs with
 * real keys, and its resolver records the pushes instead of sending them; outbox rows stay in the
 * table (no relay).
 */
export async function restApp(db: Db, bodyLimitBytes = 64 * 1024): Promise<TestApp> {
  const pushes: string[] = [];
  const accounts = createAccountIssuer({
    keys: keysOfSetup(await createOperatorSetup()),
    resolver: {
      update: (jwt) => {
        pushes.push(jwt);
        return Promise.resolve();
      },
      remove: () => Promise.resolve(),
      list: () => Promise.resolve([]),
    },
  });
  const app = await buildApp({
    db,
    logger: createLogger('silent'),
    metrics: createHubMetrics(new Registry(), false),
    validate: kruiseSpecValidator,
    accounts,
    ready: () => Promise.resolve(true),
    options: { bodyLimitBytes, heartbeatTimeoutMs: 30_000, natsPublicUrls: ['nats://127.0.0.1:4222'] },
  });
  return { app, accountPushes: () => [...pushes] };
}

export function call(
  app: FastifyInstance,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  token: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return app.inject({
    method,
    url,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    ...(body === undefined ? {} : { payload: body as object }),
  });
}

/** A small valid CloneSet spec (kwok nodes run any image name). */
export function cloneSetSpec(replicas = 2, image = 'registry.local/app:v1'): Record<string, unknown> {
  return {
    replicas,
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'main', image }] },
    },
  };
}
