/**
 * A small fleet for the hub suites: a harness NATS cluster (3 TLS nodes by default) whose users
 * come from the hub's file credential issuer (the same mechanism a deployment uses), a hub
 * started in-process on a fresh database, and helpers to register, accept and claim clusters
 * over REST.
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startNatsCluster, type NatsClientTls, type NatsCluster, type NatsNode } from '@flotilla/test';
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
  cluster: NatsCluster;
  issuer: NatsCredentialIssuer;
  dir: string;
  /** What a client needs to trust the servers. */
  tls: NatsClientTls;
  /** The hub's NATS settings as its environment variables: servers, CA, identity, replicas. */
  hubEnv: Record<string, string>;
  /** Connects with the hub's own identity (for tests that look at streams and consumers). */
  connectAsHub(): Promise<NatsConnection>;
  stop(): Promise<void>;
}

export interface FleetNatsOptions {
  /** nats-server's max_payload in bytes (default the harness's 2 MB). */
  maxPayload?: number;
  /** How many NATS nodes (default 3; streams get min(3, nodes) replicas). */
  nodes?: number;
}

const AUTH_FILE = 'flotilla-auth.conf';

/**
 * Starts the NATS cluster with every node including the hub issuer's rendered authorization
 * (`flotilla-auth.conf`, written before the nodes start); a reload signals every running node.
 */
export async function startFleetNats(opts: FleetNatsOptions = {}): Promise<FleetNats> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-hub-nats-'));
  // Filled once the cluster runs; until then a reload has nothing to signal.
  const nodes: NatsNode[] = [];
  const issuer = createFileCredentialIssuer({
    file: path.join(dir, AUTH_FILE),
    staticUsers: [{ user: HUB_NATS_USER, passwordHash: await bcryptHash(HUB_NATS_PASSWORD, 4) }],
    reload: () => {
      for (const n of nodes) if (!n.process.hasExited()) process.kill(n.process.pid, 'SIGHUP');
      return Promise.resolve();
    },
  });
  await issuer.sync([]);
  const count = opts.nodes ?? 3;
  const started = await startNatsCluster({
    dir,
    nodes: count,
    ...(opts.maxPayload !== undefined ? { maxPayload: opts.maxPayload } : {}),
    // Each node's config sits in its own folder under `dir`; includes are relative to it.
    renderAuth: () => `include "../${AUTH_FILE}"`,
  });
  nodes.push(...started.nodes);
  return {
    cluster: started,
    issuer,
    dir,
    tls: started.tls,
    hubEnv: {
      NATS_URL: started.url,
      NATS_USER: HUB_NATS_USER,
      NATS_PASSWORD: HUB_NATS_PASSWORD,
      FLOTILLA_NATS_CA_FILE: started.caFile,
      FLOTILLA_NATS_REPLICAS: String(Math.min(3, count)),
    },
    connectAsHub: () =>
      connect({ servers: started.urls, tls: started.tls, user: HUB_NATS_USER, pass: HUB_NATS_PASSWORD }),
    stop: () => started.stop(),
  };
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
    ...nats.hubEnv,
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
export async function connectAs(nats: FleetNats, creds: AgentCredentials): Promise<NatsConnection> {
  for (let i = 0; ; i++) {
    try {
      return await connect({
        servers: creds.nats.servers,
        tls: nats.tls,
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
