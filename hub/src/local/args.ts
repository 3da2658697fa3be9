/**
 * `flotilla-hub`'s command line, parsed and checked without side effects; every error names the
 * flag (`flotilla-hub nats-setup …` is handed to nats-setup-args.ts). The environment supplies the defaults a flag may override (FLOTILLA_HUB_DATA_DIR,
 * FLOTILLA_HUB_HOST, FLOTILLA_HUB_PORT).
 */
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { HubError } from '../errors.js';
import { NATS_SETUP_USAGE, parseNatsSetup, type NatsSetupOptions } from './nats-setup-args.js';

export interface LocalOptions {
  dataDir: string;
  /** Address the HTTP API and the local NATS server listen on. */
  host: string;
  port: number;
  natsPort: number;
  /** Name or address agents reach this machine by (certificate, URLs handed out). */
  advertise: string;
  /** Make a new admin token on this start (the previous one is revoked). */
  newAdminToken: boolean;
}

export type ParsedCommand =
  | { kind: 'help'; usage: string }
  | { kind: 'version' }
  | { kind: 'run'; options: LocalOptions }
  | { kind: 'nats-setup'; options: NatsSetupOptions };

export const USAGE = `Usage: flotilla-hub [options]
       flotilla-hub nats-setup --out DIR   (operator-mode files for a cluster install; --help)

Runs a complete Flotilla hub on this machine. Without DATABASE_URL it starts an embedded
PostgreSQL, without NATS_URL it starts nats-server (from PATH) with JetStream, TLS and operator
mode; both keep their data in the data directory. Ctrl-C stops everything it started.

Options:
  --data-dir DIR       where the hub keeps its data (default $FLOTILLA_HUB_DATA_DIR, else
                       ~/.flotilla/hub; /var/lib/flotilla-hub for root)
  --host ADDR          address the API and NATS listen on (default $FLOTILLA_HUB_HOST or 127.0.0.1)
  --port N             the API's port (default $FLOTILLA_HUB_PORT or 8080)
  --nats-port N        the local NATS server's port (default 4222)
  --advertise HOST     name or address agents reach this machine by (default: --host, or this
                       machine's hostname when --host is 0.0.0.0)
  --new-admin-token    make a new admin token and print it (the previous one stops working)
  -h, --help           show this help
  --version            print the version
`;

type Env = Readonly<Record<string, string | undefined>>;

function port(raw: string | undefined, flag: string, fallback: number, min: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > 65535) {
    throw new HubError(
      'HUB_ERR_CONFIG',
      `${flag} must be an integer between ${min} and 65535, got ${JSON.stringify(raw)}`,
    );
  }
  return n;
}

function nonEmpty(raw: string | undefined, flag: string): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.trim() === '') throw new HubError('HUB_ERR_CONFIG', `${flag} must not be empty`);
  return raw.trim();
}

const isRoot = (): boolean => process.getuid?.() === 0;

/**
 * ~/.flotilla/hub; for root /var/lib/flotilla-hub, since root's embedded PostgreSQL runs as the
 * postgres system user, which cannot enter /root.
 */
function defaultDataDir(home: string, root: boolean): string {
  return root ? '/var/lib/flotilla-hub' : path.join(home, '.flotilla', 'hub');
}

/** --port, else FLOTILLA_HUB_PORT, else 8080 (0: any free port). */
function httpPortOf(flag: string | undefined, env: Env): number {
  if (flag !== undefined) return port(flag, '--port', 8080, 0);
  return port(env['FLOTILLA_HUB_PORT'], 'FLOTILLA_HUB_PORT', 8080, 0);
}

const FLAGS = {
  'data-dir': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  'nats-port': { type: 'string' },
  advertise: { type: 'string' },
  'new-admin-token': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

/** Parses argv (without node and the script); throws HubError naming the flag that is wrong. */
export function parseCommand(argv: string[], env: Env, home = os.homedir(), root = isRoot()): ParsedCommand {
  if (argv[0] !== 'nats-setup') return parseRun(argv, env, home, root);
  const options = parseNatsSetup(argv.slice(1));
  return options ? { kind: 'nats-setup', options } : { kind: 'help', usage: NATS_SETUP_USAGE };
}

/** The local hub's own flags (no subcommand). */
function parseRun(argv: string[], env: Env, home: string, root: boolean): ParsedCommand {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: false }));
  } catch (err) {
    throw new HubError('HUB_ERR_CONFIG', `${(err as Error).message} (see --help)`);
  }
  if (values.help) return { kind: 'help', usage: USAGE };
  if (values.version) return { kind: 'version' };
  const dataDir =
    nonEmpty(values['data-dir'], '--data-dir') ?? (env['FLOTILLA_HUB_DATA_DIR']?.trim() || defaultDataDir(home, root));
  const host = nonEmpty(values.host, '--host') ?? (env['FLOTILLA_HUB_HOST']?.trim() || '127.0.0.1');
  const wildcard = host === '0.0.0.0' || host === '::';
  const httpPort = httpPortOf(values.port, env);
  return {
    kind: 'run',
    options: {
      dataDir: path.resolve(dataDir),
      host,
      port: httpPort,
      natsPort: port(values['nats-port'], '--nats-port', 4222, 1),
      advertise: nonEmpty(values.advertise, '--advertise') ?? (wildcard ? os.hostname() : host),
      newAdminToken: values['new-admin-token'] === true,
    },
  };
}
