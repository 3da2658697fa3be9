/**
 * A small fleet for the hub suites: a harness nats-server whose users come from the hub's file
 * credential issuer (the same mechanism a deployment uses), a hub started in-process on a fresh
 * database, and helpers to register, accept and claim clusters over REST.
 */
import { appendFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startNats, type NatsServer } from '@flotilla/test';
import {
  bcryptHash,
  createFileCredentialIssuer,
  createLogger,
  loadConfig,
  startHub,
  type NatsCredentialIssuer,
  type RunningHub,
} from '@flotilla/hub';
import type { AgentCredentials } from '@flotilla/api';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Registry } from 'prom-client';
import { insertToken, migratedDatabase, type HubDb } from './fixtures.js';

export const HUB_NATS_USER = 'hub';
export const HUB_NATS_PASSWORD = 'hub-password-for-tests';

export interface FleetNats {
  server: NatsServer;
  issuer: NatsCredentialIssuer;
  dir: string;
  stop(): Promise<void>;
}

export interface FleetNatsOptions {
  /** nats-server's max_payload in bytes (default the harness's 2 MB). */
  maxPayload?: number;
}

/** Starts nats-server with `include "flotilla-auth.conf"`, rendered by the hub's issuer. */
export async function startFleetNats(opts: FleetNatsOptions = {}): Promise<FleetNats> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-hub-nats-'));
  const server = await startNats({ dir, users: [], ...opts });
  const authFile = path.join(dir, 'flotilla-auth.conf');
  appendFileSync(server.configFile, 'include "flotilla-auth.conf"\n');
  const issuer = createFileCredentialIssuer({
    file: authFile,
    staticUsers: [{ user: HUB_NATS_USER, passwordHash: await bcryptHash(HUB_NATS_PASSWORD, 4) }],
    reload: () => {
      process.kill(server.process.pid, 'SIGHUP');
      return Promise.resolve();
    },
  });
  await issuer.sync([]);
  // Auth is on once an anonymous connection is refused.
  for (let i = 0; ; i++) {
    try {
      const nc = await connect({ servers: server.url, maxReconnectAttempts: 0, timeout: 1000 });
      await nc.close();
    } catch {
      break;
    }
    if (i > 100) throw new Error('nats-server did not load the authorization include');
    await sleep(100);
  }
  return { server, issuer, dir, stop: () => server.stop() };
}

export interface TestHub {
  hub: RunningHub;
  db: HubDb;
  adminToken: string;
  operatorToken: string;
  bootstrapToken: string;
  viewerToken: string;
  registry: Registry;
}

export interface TestHubOptions {
  relay?: boolean;
  /** Reuse an existing database (a restarted hub). */
  db?: HubDb;
  /** The relay's polling interval; default 100 ms. */
  relayIntervalMs?: number;
  /** How long sent outbox rows are kept; default the hub's (1 hour). */
  outboxRetentionSeconds?: number;
  /** Replaces the fleet's credential issuer (e.g. one that fails on purpose). */
  issuer?: NatsCredentialIssuer;
  /** More hub configuration (environment variables, as main.ts reads them). */
  env?: Record<string, string>;
}

export async function startTestHub(nats: FleetNats, opts: TestHubOptions = {}): Promise<TestHub> {
  const db = opts.db ?? (await migratedDatabase('flotilla_hub_fleet'));
  const config = loadConfig({
    DATABASE_URL: db.database.url,
    NATS_URL: nats.server.url,
    NATS_USER: HUB_NATS_USER,
    NATS_PASSWORD: HUB_NATS_PASSWORD,
    FLOTILLA_HUB_HOST: '127.0.0.1',
    FLOTILLA_HUB_PORT: '0',
    FLOTILLA_RELAY_INTERVAL_MS: String(opts.relayIntervalMs ?? 100),
    ...(opts.outboxRetentionSeconds !== undefined
      ? { FLOTILLA_OUTBOX_RETENTION_SECONDS: String(opts.outboxRetentionSeconds) }
      : {}),
    FLOTILLA_HEARTBEAT_TIMEOUT_SECONDS: '30',
    LOG_LEVEL: 'warn',
    ...opts.env,
  });
  const registry = new Registry();
  const hub = await startHub({
    config,
    logger: createLogger('warn'),
    registry,
    issuer: opts.issuer ?? nats.issuer,
    relay: opts.relay ?? true,
  });
  const tokens = await Promise.all(
    (['admin', 'operator', 'bootstrap', 'viewer'] as const).map((role) =>
      insertToken(db.pool, `${role}-${Math.random().toString(36).slice(2, 8)}`, role),
    ),
  );
  return {
    hub,
    db,
    adminToken: tokens[0]!,
    operatorToken: tokens[1]!,
    bootstrapToken: tokens[2]!,
    viewerToken: tokens[3]!,
    registry,
  };
}

export async function rest<T>(t: TestHub, method: string, url: string, token: string, body?: unknown): Promise<T> {
  const res = await t.hub.app.inject({
    method: method as 'GET',
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { payload: body as object }),
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return (res.body === '' ? undefined : res.json()) as T;
}

/** Register → accept → claim; returns the agent's credentials (the password is shown only here). */
export async function joinCluster(t: TestHub, name: string, labels: Record<string, string>): Promise<AgentCredentials> {
  const reg = await rest<{ registrationSecret: string }>(t, 'POST', '/api/v1/clusters/register', t.bootstrapToken, {
    name,
    labels,
  });
  await rest(t, 'POST', `/api/v1/clusters/${name}/accept`, t.operatorToken);
  return rest<AgentCredentials>(t, 'POST', `/api/v1/clusters/${name}/claim`, t.bootstrapToken, {
    registrationSecret: reg.registrationSecret,
  });
}

/** Connects as a cluster's agent, retrying while nats-server reloads its authorization. */
export async function connectAs(creds: AgentCredentials): Promise<NatsConnection> {
  for (let i = 0; ; i++) {
    try {
      return await connect({
        servers: creds.nats.servers,
        user: creds.nats.user,
        pass: creds.nats.password,
        inboxPrefix: creds.nats.inboxPrefix,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
      });
    } catch (err) {
      if (i > 50) throw err;
      await sleep(100);
    }
  }
}

export async function metricValue(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (metric?.values ?? []) as { value: number; labels: Record<string, string | number> }[];
  return values
    .filter((v) => Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want))
    .reduce((sum, v) => sum + v.value, 0);
}
