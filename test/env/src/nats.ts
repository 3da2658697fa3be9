import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { get } from './http.js';
import { freePort } from './ports.js';
import { startProcess, waitFor, type ManagedProcess } from './process.js';
import { hasTool, toolPath } from './tools.js';

export interface NatsPermissions {
  publish?: { allow?: string[]; deny?: string[] };
  subscribe?: { allow?: string[]; deny?: string[] };
}

export interface NatsUser {
  user: string;
  password: string;
  permissions?: NatsPermissions;
}

export interface NatsOptions {
  dir: string;
  users?: NatsUser[];
  name?: string;
  /** Fixed client port; a free one is picked when absent. */
  port?: number;
  /** nats-server's max_payload in bytes (default 2 MB). */
  maxPayload?: number;
}

export interface NatsServer {
  url: string;
  port: number;
  monitorUrl: string;
  configFile: string;
  process: ManagedProcess;
  stop(): Promise<void>;
  /** Starts the server again on the same port and store, as after a crash or upgrade. */
  restart(): Promise<void>;
}

// NATS config strings are JSON-compatible, so JSON.stringify quotes them safely.
const q = (s: string): string => JSON.stringify(s);

function renderPermissions(p: NatsPermissions): string {
  const side = (s?: { allow?: string[]; deny?: string[] }): string =>
    `{ allow: [${(s?.allow ?? []).map(q).join(', ')}], deny: [${(s?.deny ?? []).map(q).join(', ')}] }`;
  return `{ publish: ${side(p.publish)}, subscribe: ${side(p.subscribe)} }`;
}

/** Renders a nats-server config: loopback listener, monitoring, JetStream, static users. */
export function renderNatsConfig(o: {
  port: number;
  monitorPort: number;
  storeDir: string;
  users: NatsUser[];
  maxPayload?: number;
}): string {
  const lines = [
    `listen: "127.0.0.1:${o.port}"`,
    `http: "127.0.0.1:${o.monitorPort}"`,
    `jetstream { store_dir: ${q(o.storeDir)}, max_memory_store: 256MB, max_file_store: 2GB }`,
    // Room for the hub's largest desired message (its 1 MiB body limit plus the envelope); the
    // server's default of 1 MB is below it.
    `max_payload: ${o.maxPayload ?? '2MB'}`,
  ];
  if (o.users.length > 0) {
    const users = o.users.map(
      (u) =>
        `    { user: ${q(u.user)}, password: ${q(u.password)}${u.permissions ? `, permissions: ${renderPermissions(u.permissions)}` : ''} }`,
    );
    lines.push('authorization {', '  users: [', users.join(',\n'), '  ]', '}');
  }
  return lines.join('\n') + '\n';
}

/**
 * Starts a JetStream-enabled nats-server on free loopback ports with a generated config. Uses
 * the pinned build from build-tools.sh, or the machine's nats-server when that is absent.
 */
export async function startNats(opts: NatsOptions): Promise<NatsServer> {
  const name = opts.name ?? 'nats-server';
  mkdirSync(opts.dir, { recursive: true });
  const port = opts.port ?? (await freePort());
  const monitorPort = await freePort();
  const configFile = path.join(opts.dir, 'nats.conf');
  writeFileSync(
    configFile,
    renderNatsConfig({
      port,
      monitorPort,
      storeDir: path.join(opts.dir, 'js'),
      users: opts.users ?? [],
      ...(opts.maxPayload !== undefined ? { maxPayload: opts.maxPayload } : {}),
    }),
    { mode: 0o600 },
  );
  const command = hasTool('nats-server') ? toolPath('nats-server') : '/usr/sbin/nats-server';
  const monitorUrl = `http://127.0.0.1:${monitorPort}`;
  const launch = async (): Promise<ManagedProcess> => {
    const proc = startProcess({ name, command, args: ['-c', configFile], logFile: path.join(opts.dir, 'nats.log') });
    await waitFor(name, async () => (await get(`${monitorUrl}/healthz?js-enabled-only=true`)).status === 200, {
      timeoutMs: 30_000,
      process: proc,
    });
    return proc;
  };
  const server: NatsServer = {
    url: `nats://127.0.0.1:${port}`,
    port,
    monitorUrl,
    configFile,
    process: await launch(),
    stop: () => server.process.stop(),
    async restart() {
      await server.process.stop();
      server.process = await launch();
    },
  };
  return server;
}
