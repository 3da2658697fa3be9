/**
 * `flotilla-hub` as its own process, as a user runs it: from its sources (no build needed), with
 * only the environment a test gives it (no DATABASE_URL or NATS_URL leaks in from the runner).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { hasTool, toolPath } from '@flotilla/test';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

/** A PATH with nats-server on it: the built tool, else the Debian package's. */
export function pathWithNats(): string {
  const nats = hasTool('nats-server') ? toolPath('nats-server') : '/usr/sbin/nats-server';
  return [path.dirname(nats), '/usr/local/bin', '/usr/bin', '/bin'].join(':');
}

export interface LocalHubProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The exit code (or signal name). */
  exit: Promise<number | string>;
  /** Resolves with stdout once the banner is printed; rejects if the process exits first. */
  started: Promise<string>;
  /** SIGINT, as Ctrl-C; resolves with the exit code. */
  stop(): Promise<number | string>;
}

export function startLocalHubProcess(args: string[], env: Record<string, string>): LocalHubProcess {
  const child = spawn(
    process.execPath,
    ['--conditions=@flotilla/source', '--import', 'tsx', 'hub/src/local/main.ts', ...args],
    { cwd: root, env: { LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const started = new Promise<string>((resolve, reject) => {
    const check = (): void => {
      if (out.includes('Ctrl-C stops the hub')) resolve(out);
    };
    child.stdout.on('data', check);
    void exit.then((code) => reject(new Error(`flotilla-hub exited (${code}) before it started:\n${err}`)));
  });
  // Callers that expect a failed start never wait for `started`.
  started.catch(() => undefined);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exit,
    started,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      return exit;
    },
  };
}

/** The admin token a first start printed. */
export function adminTokenOf(banner: string): string {
  const token = /^ {4}(flt_\S+)$/m.exec(banner)?.[1];
  if (!token) throw new Error(`no admin token in:\n${banner}`);
  return token;
}

/** The hub's local URL from the banner. */
export function hubUrlOf(banner: string): string {
  const url = /Dashboard:\s+(\S+)\/ui\//.exec(banner)?.[1];
  if (!url) throw new Error(`no dashboard address in:\n${banner}`);
  return url;
}
