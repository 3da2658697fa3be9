/**
 * A small fleet for the hub suites: a harness NATS cluster (3 TLS nodes by default) in operator
 * mode (docs/adr/0012: a full resolver, SYS and HUB accounts preloaded, cluster accounts pushed by
 * the hub, the same mechanism a deployment uses), a hub started in-process on a fresh database,
 * and helpers to register, accept and claim clusters over REST with agent keys of their own.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { operatorModeAuth, startNatsCluster, type NatsClientTls, type NatsCluster } from '@flotilla/test';
import {
  createLogger,
  createOperatorSetup,
  loadConfig,
  startHub,
  type HubOptions,
  type OperatorSetup,
  type RunningHub,
} from '@flotilla/hub';
import { SIGNATURE_HEADER, newAgentKey, signRequest, type AgentCredentials } from '@flotilla/api';
import { connect, credsAuthenticator, jwtAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Registry } from 'prom-client';
import { insertToken, migratedDatabase, type HubDb } from './fixtures.js';

export interface FleetNats {
  cluster: NatsCluster;
  /** The operator, its keys and the hub's creds (as an installer generates them). */
  setup: OperatorSetup;
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

/** Writes the hub's secret files; returns them as the hub's environment variables. */
function writeHubSecrets(dir: string, setup: OperatorSetup): Record<string, string> {
  const files = {
    FLOTILLA_NATS_CREDS_FILE: ['hub.creds', setup.hubCreds],
    FLOTILLA_NATS_SYSTEM_CREDS_FILE: ['hub-system.creds', setup.systemCreds],
    FLOTILLA_NATS_OPERATOR_SIGNING_KEY_FILE: ['operator-signing.nk', setup.operatorSigningSeed],
    FLOTILLA_NATS_ACCOUNT_SIGNING_KEY_FILE: ['account-signing.nk', setup.accountSigningSeed],
  } as const;
  const env: Record<string, string> = {};
  for (const [key, [name, content]] of Object.entries(files)) {
    writeFileSync(path.join(dir, name), content, { mode: 0o600 });
    env[key] = path.join(dir, name);
  }
  return env;
}

/**
 * Waits until the HUB account answers JetStream: right after the nodes start, the preloaded
 * account may not have it yet ("JetStream not enabled for account"), and the hub would fail its start.
 */
async function untilHubJetStream(cluster: NatsCluster, setup: OperatorSetup): Promise<void> {
  const nc = await connect({
    servers: cluster.urls,
    tls: cluster.tls,
    authenticator: credsAuthenticator(new TextEncoder().encode(setup.hubCreds)),
  });
  try {
    for (let i = 0; ; i++) {
      try {
        await jetstreamManager(nc);
        return;
      } catch (err) {
        if (i > 150) throw err;
        await sleep(200);
      }
    }
  } finally {
    await nc.close();
  }
}

/** Starts the NATS cluster in operator mode: every node preloads the SYS and HUB accounts. */
export async function startFleetNats(opts: FleetNatsOptions = {}): Promise<FleetNats> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-hub-nats-'));
  const setup = await createOperatorSetup();
  const count = opts.nodes ?? 3;
  const started = await startNatsCluster({
    dir,
    nodes: count,
    ...(opts.maxPayload !== undefined ? { maxPayload: opts.maxPayload } : {}),
    renderAuth: operatorModeAuth(setup),
  });
  await untilHubJetStream(started, setup);
  return {
    cluster: started,
    setup,
    dir,
    tls: started.tls,
    hubEnv: {
      NATS_URL: started.url,
      ...writeHubSecrets(dir, setup),
      FLOTILLA_NATS_CA_FILE: started.caFile,
      FLOTILLA_NATS_REPLICAS: String(Math.min(3, count)),
    },
    connectAsHub: () =>
      connect({
        servers: started.urls,
        tls: started.tls,
        authenticator: credsAuthenticator(new TextEncoder().encode(setup.hubCreds)),
      }),
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
  /** Wraps the hub's NATS account issuer (e.g. one that fails on purpose). */
  wrapAccounts?: HubOptions['wrapAccounts'];
  /** More hub configuration (environment variables, as main.ts reads them). */
  env?: Record<string, string>;
}

/** A hub on `nats` (only its hubEnv is read: a NATS set up some other way works too). */
export async function startTestHub(nats: Pick<FleetNats, 'hubEnv'>, opts: TestHubOptions = {}): Promise<TestHub> {
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
    ...(opts.wrapAccounts ? { wrapAccounts: opts.wrapAccounts } : {}),
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

export async function rest<T>(
  t: TestHub,
  method: string,
  url: string,
  token: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const res = await t.hub.app.inject({
    method: method as 'GET',
    url,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    ...(body === undefined ? {} : { payload: body as object }),
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return (res.body === '' ? undefined : res.json()) as T;
}

/** The signature header of a request signed with an agent's seed (api: signed-request.ts). */
export function signedHeaders(seed: string, method: string, url: string, body: unknown): Record<string, string> {
  return { [SIGNATURE_HEADER]: signRequest(seed, { method, path: url, body }, Date.now()) };
}

/** What a test agent holds: the credentials the hub returned and the seed that never left it. */
export type JoinedCluster = AgentCredentials & { seed: string };

/** Register (with a new key) → accept → claim (signed); returns the credentials and the seed. */
export async function joinCluster(t: TestHub, name: string, labels: Record<string, string>): Promise<JoinedCluster> {
  const key = newAgentKey();
  const reg = await rest<{ registrationSecret: string }>(t, 'POST', '/api/v1/clusters/register', t.bootstrapToken, {
    name,
    labels,
    publicKey: key.publicKey,
  });
  await rest(t, 'POST', `/api/v1/clusters/${name}/accept`, t.operatorToken);
  const url = `/api/v1/clusters/${name}/claim`;
  const body = { registrationSecret: reg.registrationSecret };
  const creds = await rest<AgentCredentials>(
    t,
    'POST',
    url,
    t.bootstrapToken,
    body,
    signedHeaders(key.seed, 'POST', url, body),
  );
  return { ...creds, seed: key.seed };
}

/** A renewal signed with the cluster's seed: a fresh user JWT. */
export async function renewCredentials(t: TestHub, c: JoinedCluster): Promise<JoinedCluster> {
  const url = `/api/v1/clusters/${c.cluster}/credentials/renew`;
  const creds = await rest<AgentCredentials>(t, 'POST', url, undefined, {}, signedHeaders(c.seed, 'POST', url, {}));
  return { ...creds, seed: c.seed };
}

/** Connects as a cluster's agent with its user JWT and seed, retrying while the account propagates. */
export async function connectAs(nats: Pick<FleetNats, 'tls'>, creds: JoinedCluster): Promise<NatsConnection> {
  for (let i = 0; ; i++) {
    try {
      return await connect({
        servers: creds.nats.servers,
        tls: nats.tls,
        authenticator: jwtAuthenticator(creds.nats.jwt, new TextEncoder().encode(creds.seed)),
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
