/**
 * `flotilla-hub`: a complete hub on one machine. In order: the data directory (layout checked,
 * locked), the embedded PostgreSQL unless DATABASE_URL is set, nats-server unless NATS_URL is
 * set, the hub itself, and the admin token on the start that makes it. Whatever started is
 * stopped in reverse order on close() or when a later step fails, so a failed start leaves
 * nothing running and the lock released.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { newSecret, sha256 } from '../auth/tokens.js';
import { loadConfig } from '../config.js';
import type { Db } from '../db/client.js';
import { seedToken } from '../repositories/tokens-repo.js';
import { startHub } from '../server.js';
import type { LocalOptions } from './args.js';
import { renderBanner } from './banner.js';
import { lockDataDir, prepareDataDir, stampDataDir } from './data-dir.js';
import { ensureNatsFiles } from './nats-files.js';
import { hostPort, localAddress, natsServerBinary, startLocalNats } from './nats.js';
import { postgresBinaries, postgresRunAs, startEmbeddedPostgres } from './postgres.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface LocalHub {
  /** What to print: addresses, the admin token on its first start, the join steps. */
  banner: string;
  close(): Promise<void>;
}

/** Steps undone in reverse order; one that fails is logged and the rest still run. */
function undoStack(logger: Logger): { push(step: () => unknown): void; run(): Promise<void> } {
  const steps: (() => unknown)[] = [];
  return {
    push: (step) => void steps.push(step),
    async run() {
      for (const step of steps.splice(0).reverse()) {
        try {
          await step();
        } catch (err) {
          logger.warn({ err }, 'stopping a part of the local hub failed');
        }
      }
    },
  };
}

const given = (env: Env, key: string): boolean => (env[key]?.trim() ?? '') !== '';

/** The addresses the NATS certificate covers: loopback, the listen address and the advertised one. */
function natsHosts(o: LocalOptions): string[] {
  const listen = o.host === '0.0.0.0' || o.host === '::' ? [] : [o.host];
  return [...new Set(['localhost', '127.0.0.1', '::1', ...listen, o.advertise])];
}

/** The hub's NATS settings: the caller's NATS_URL, else a local nats-server it starts. */
async function natsSettings(
  o: LocalOptions,
  env: Env,
  undo: ReturnType<typeof undoStack>,
): Promise<{ env: Record<string, string>; caFile: string | undefined }> {
  if (given(env, 'NATS_URL')) return { env: {}, caFile: undefined };
  const binary = natsServerBinary(env['PATH']);
  const files = await ensureNatsFiles(o.dataDir, natsHosts(o));
  const nats = await startLocalNats(binary, { host: o.host, port: o.natsPort, dir: files.dir, files });
  undo.push(() => nats.stop());
  return {
    caFile: files.caFile,
    env: {
      NATS_URL: nats.url,
      FLOTILLA_NATS_CA_FILE: files.caFile,
      FLOTILLA_NATS_PUBLIC_URLS: `tls://${hostPort(o.advertise, o.natsPort)}`,
      FLOTILLA_NATS_REPLICAS: '1',
      ...files.hubEnv,
    },
  };
}

const MARKER = 'admin-token-shown';

/** A new admin token on the first start (or when asked); its hash replaces the previous one's. */
async function adminToken(
  o: LocalOptions,
  db: Db,
): Promise<{ token: string | undefined; shownAt: string | undefined }> {
  const marker = path.join(o.dataDir, MARKER);
  if (existsSync(marker) && !o.newAdminToken) return { token: undefined, shownAt: readFileSync(marker, 'utf8').trim() };
  const token = newSecret('flt');
  await seedToken(db, { name: 'local-admin', role: 'admin', tokenHash: sha256(token) });
  // The marker holds only when it was shown, never the token.
  writeFileSync(marker, new Date().toISOString() + '\n', { mode: 0o600 });
  return { token, shownAt: undefined };
}

/** Starts everything; throws (having stopped what it started) when any part cannot start. */
export async function startLocalHub(o: LocalOptions, env: Env, logger: Logger): Promise<LocalHub> {
  const embeddedDb = !given(env, 'DATABASE_URL');
  // Checked before anything starts: a missing program fails the start with nothing to undo.
  if (!given(env, 'NATS_URL')) natsServerBinary(env['PATH']);
  if (embeddedDb) postgresBinaries();
  const runAs = embeddedDb ? postgresRunAs() : undefined;
  prepareDataDir(o.dataDir, runAs !== undefined);
  const lock = lockDataDir(o.dataDir);
  const undo = undoStack(logger);
  undo.push(() => lock.release());
  try {
    stampDataDir(o.dataDir);
    let databaseUrl = env['DATABASE_URL']?.trim() ?? '';
    if (embeddedDb) {
      const pg = await startEmbeddedPostgres(o.dataDir, runAs);
      undo.push(() => pg.stop());
      databaseUrl = pg.url;
    }
    const nats = await natsSettings(o, env, undo);
    const config = loadConfig({
      ...env,
      LOG_LEVEL: env['LOG_LEVEL'] ?? 'warn',
      FLOTILLA_HUB_HOST: o.host,
      FLOTILLA_HUB_PORT: String(o.port),
      DATABASE_URL: databaseUrl,
      ...nats.env,
    });
    const hub = await startHub({ config, logger });
    undo.push(() => hub.close());
    const admin = await adminToken(o, hub.db);
    const localUrl = hub.url ?? `http://${hostPort(localAddress(o.host), o.port)}`;
    const port = Number(new URL(localUrl).port);
    const banner = renderBanner({
      localUrl,
      agentUrl: `http://${hostPort(o.advertise, port)}`,
      dataDir: o.dataDir,
      adminToken: admin.token,
      adminTokenShownAt: admin.shownAt,
      natsCaFile: nats.caFile,
    });
    return { banner, close: () => undo.run() };
  } catch (err) {
    await undo.run();
    throw err;
  }
}
