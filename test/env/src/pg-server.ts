/**
 * A private PostgreSQL server for tests that stop or restart the database under a running hub:
 * Debian's binaries (`/usr/lib/postgresql/<version>/bin`), a fresh data directory, trust auth,
 * loopback only, on a free port. The shared server on 5432 is never touched. As root (postgres
 * refuses to run as root) the server runs as the `postgres` system user.
 */
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { HarnessError } from './errors.js';
import { run } from './exec.js';
import { freePort } from './ports.js';
import type { PostgresServer } from './postgres.js';
import { startProcess, waitFor, type ManagedProcess } from './process.js';

export interface PrivatePostgres extends PostgresServer {
  dataDir: string;
  /** The running postmaster (undefined while stopped). */
  process: ManagedProcess | undefined;
  /**
   * Fast shutdown, as `pg_ctl stop -m fast` and a restart do: every session is terminated
   * ("terminating connection due to administrator command"), then the server exits.
   */
  stop(): Promise<void>;
  /** Starts the server again on the same port and data directory. */
  start(): Promise<void>;
  /** stop(), `downMs` with no server, start(). */
  restart(downMs?: number): Promise<void>;
  /** Stops the server and deletes its data directory. */
  destroy(): Promise<void>;
}

/** The newest installed major version's bin folder. */
export function postgresBinDir(root = '/usr/lib/postgresql'): string {
  let versions: string[] = [];
  try {
    versions = readdirSync(root).filter((v) => /^\d+$/.test(v));
  } catch {
    // reported below
  }
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest)
    throw new HarnessError('TOOL_MISSING', 'postgres', `no PostgreSQL under ${root} (apt-get install postgresql)`);
  return path.join(root, newest, 'bin');
}

/** uid/gid of the `postgres` system user when this process is root (postgres refuses root). */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) {
    throw new HarnessError('START_FAILED', 'postgres', 'running as root, but there is no postgres system user');
  }
  return { uid: Number(uid), gid: Number(gid) };
}

async function accepting(server: PostgresServer): Promise<boolean> {
  const c = new pg.Client({
    host: server.host,
    port: server.port,
    user: server.user,
    database: 'postgres',
    connectionTimeoutMillis: 1000,
  });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.query('select 1');
    return true;
  } finally {
    await c.end().catch(() => undefined);
  }
}

export async function startPrivatePostgres(opts: { name?: string; dir?: string } = {}): Promise<PrivatePostgres> {
  const name = opts.name ?? 'postgres-private';
  const bin = postgresBinDir();
  const dir = opts.dir ?? mkdtempSync(path.join(os.tmpdir(), 'flotilla-pg-'));
  const dataDir = path.join(dir, 'data');
  const runAs = serverUser();
  if (runAs) chownSync(dir, runAs.uid, runAs.gid);
  const asServer = runAs ? ['setpriv', `--reuid=${runAs.uid}`, `--regid=${runAs.gid}`, '--clear-groups', '--'] : [];
  const initdb = [...asServer, path.join(bin, 'initdb')];
  await run(name, initdb[0]!, [
    ...initdb.slice(1),
    '-D',
    dataDir,
    '-U',
    'postgres',
    '--auth=trust',
    '--encoding=UTF8',
    '--no-sync',
  ]);
  const port = await freePort();
  const launch = async (): Promise<ManagedProcess> => {
    const proc = startProcess({
      name,
      command: path.join(bin, 'postgres'),
      args: [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        `unix_socket_directories=${dir}`,
        // Throwaway data: durability only costs time here.
        '-c',
        'fsync=off',
        '-c',
        'synchronous_commit=off',
        '-c',
        'full_page_writes=off',
      ],
      logFile: path.join(dir, 'postgres.log'),
      ...(runAs ? { runAs } : {}),
    });
    await waitFor(name, () => accepting(server), { timeoutMs: 30_000, process: proc, intervalMs: 100 });
    return proc;
  };
  const server: PrivatePostgres = {
    host: '127.0.0.1',
    port,
    user: 'postgres',
    dataDir,
    process: undefined,
    async stop() {
      const proc = server.process;
      server.process = undefined;
      if (!proc || proc.hasExited()) return;
      process.kill(proc.pid, 'SIGINT'); // fast shutdown
      const gone = await Promise.race([proc.exited.then(() => true), sleep(15_000).then(() => false)]);
      if (!gone) await proc.stop(1000);
    },
    async start() {
      if (server.process && !server.process.hasExited()) return;
      server.process = await launch();
    },
    async restart(downMs = 0) {
      await server.stop();
      if (downMs > 0) await sleep(downMs);
      await server.start();
    },
    async destroy() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
