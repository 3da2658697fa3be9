/**
 * The local NATS server: `nats-server` from PATH, one node with JetStream stored in the data
 * directory, a TLS-only client listener, and operator mode (docs/adr/0012) with a `full` resolver
 * whose account JWTs are kept in the data directory, so the clusters' accounts survive restarts.
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { HubError } from '../errors.js';
import { operatorModeLines } from '../nats/auth/server-config.js';
import { logTail, startService, stopLeftover, type ServiceProcess } from './child.js';
import type { NatsFiles } from './nats-files.js';

export interface NatsConfigInput {
  host: string;
  port: number;
  dir: string;
  files: Pick<NatsFiles, 'caFile' | 'serverCertFile' | 'serverKeyFile' | 'operatorJwt' | 'systemAccount' | 'preload'>;
}

/** host:port, with an IPv6 address in brackets. */
export function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Where a client on this machine reaches a listener on `host` (a wildcard means loopback). */
export function localAddress(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  return host === '::' ? '::1' : host;
}

// NATS config strings are JSON-compatible, so JSON.stringify quotes them safely.
const q = (s: string): string => JSON.stringify(s);

/** The server's configuration file. */
export function renderNatsConfig(o: NatsConfigInput): string {
  const f = o.files;
  return [
    'server_name: "flotilla-hub-local"',
    `listen: ${q(hostPort(o.host, o.port))}`,
    `pid_file: ${q(path.join(o.dir, 'nats-server.pid'))}`,
    `tls { cert_file: ${q(f.serverCertFile)}, key_file: ${q(f.serverKeyFile)}, ca_file: ${q(f.caFile)}, timeout: 5 }`,
    `jetstream { store_dir: ${q(path.join(o.dir, 'jetstream'))} }`,
    // Room for the hub's largest desired message (its 1 MiB body limit plus the envelope).
    'max_payload: 2MB',
    ...operatorModeLines(f, path.join(o.dir, 'jwt')),
    '',
  ].join('\n');
}

/** The first executable `name` on PATH, or undefined. */
export function findOnPath(name: string, pathVar: string | undefined): string | undefined {
  for (const dir of (pathVar ?? '').split(path.delimiter).filter((d) => d !== '')) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

export function natsServerBinary(pathVar: string | undefined): string {
  const found = findOnPath('nats-server', pathVar);
  if (found) return found;
  throw new HubError(
    'HUB_ERR_CONFIG',
    'nats-server was not found on PATH: install nats-server (https://github.com/nats-io/nats-server/releases; Debian and Ubuntu: apt install nats-server) and start again, or set NATS_URL to use a NATS server you run',
  );
}

function portAnswers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: localAddress(host), port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export interface LocalNats {
  url: string;
  stop(): Promise<void>;
}

const leftoverPid = (dir: string): number | undefined => {
  const file = path.join(dir, 'nats-server.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
};

async function untilListening(proc: ServiceProcess, o: NatsConfigInput, logFile: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await portAnswers(o.host, o.port))) {
    if (proc.hasExited() || Date.now() > deadline) {
      await proc.stop('SIGTERM', 5000);
      throw new HubError(
        'HUB_ERR_CONFIG',
        `nats-server did not start on ${hostPort(o.host, o.port)} (is the port taken? --nats-port picks another); its log ${logFile} ends:\n${logTail(logFile)}`,
      );
    }
    await sleep(100);
  }
}

/** Starts nats-server with the data directory's files; resolves once it listens. */
export async function startLocalNats(binary: string, o: NatsConfigInput): Promise<LocalNats> {
  mkdirSync(o.dir, { recursive: true, mode: 0o700 });
  await stopLeftover(leftoverPid(o.dir), 'nats-server', 15_000);
  const configFile = path.join(o.dir, 'nats.conf');
  writeFileSync(configFile, renderNatsConfig(o), { mode: 0o600 });
  const logFile = path.join(o.dir, 'nats.log');
  const proc = startService({ command: binary, args: ['-c', configFile], logFile });
  await untilListening(proc, o, logFile);
  return {
    url: `tls://${hostPort(localAddress(o.host), o.port)}`,
    // SIGTERM: nats-server flushes JetStream and exits.
    stop: () => proc.stop('SIGTERM', 15_000),
  };
}
