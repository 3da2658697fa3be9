/**
 * Starts a hub: Postgres (migrations under an advisory lock, seeded tokens), NATS (streams, the
 * agents' identities and durables), the outbox and its relay, the rollout scheduler, the watch
 * over the desired stream, status ingestion and the HTTP server, in that order. Returns a handle
 * whose close() shuts everything down in reverse order. main.ts calls this with the validated
 * config; tests call it with their own databases, NATS servers and switches (e.g. no relay, to
 * simulate a crash).
 */
import { readFileSync } from 'node:fs';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type ConnectionOptions, type NatsConnection } from '@nats-io/transport-node';
import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { buildApp } from './app.js';
import type { HubConfig } from './config.js';
import { createDb, type Db } from './db/client.js';
import { createPool } from './db/pool.js';
import { runMigrations } from './db/migrate.js';
import { kruiseSpecValidator, type SpecValidator } from './domain/spec-validator.js';
import { allReady, databaseProbe, natsProbe } from './health/checks.js';
import { createNatsHearing, type NatsHearing } from './health/nats-hearing.js';
import { HubError } from './errors.js';
import { createLogger } from './logger.js';
import { createHubMetrics, type HubMetrics } from './metrics.js';
import type { NatsAccountIssuer } from './nats/auth/issuer.js';
import { loadNatsAuthKeys, type NatsAuthKeys } from './nats/auth/keys.js';
import { hubAuthOptions, startAccountIssuer } from './nats/auth/start.js';
import { createAgentConsumers, type AgentConsumers } from './nats/agent-consumers.js';
import { desiredPublisher } from './nats/desired-publisher.js';
import { createDesiredWatch, type DesiredWatch } from './nats/desired-watch.js';
import { createLinkReconciler, type LinkReconciler } from './nats/link-reconciler.js';
import { createStatusIngest, type StatusIngest } from './nats/status-ingest.js';
import { ensureStreams } from './nats/streams.js';
import { whenJetStreamReady } from './nats/jetstream-ready.js';
import { hubSessionName, startOutbox, type HubOutbox, type Outbox, type OutboxRelay } from './outbox/index.js';
import { acceptedClusterNames } from './repositories/clusters-repo.js';
import { seedTokens } from './seed.js';
import { createAccountSync } from './services/account-sync.js';
import { createDesiredRepair } from './services/desired-repair.js';
import { createDesiredChanges, type DesiredChanges } from './services/desired-sync.js';
import { createRolloutNotifier, type RolloutNotifier } from './services/rollouts/notifier.js';
import { createRolloutScheduler, type RolloutScheduler } from './services/rollouts/scheduler.js';
import { createStatusIntake } from './services/status-intake.js';

export interface HubOptions {
  config: HubConfig;
  logger?: Logger;
  registry?: Registry;
  validate?: SpecValidator;
  /** Wraps the account issuer the config describes (tests inject faults). */
  wrapAccounts?: (accounts: NatsAccountIssuer) => NatsAccountIssuer;
  /** false: never publish the outbox (simulates a hub that dies right after committing). */
  relay?: boolean;
  /** false: do not consume status and heartbeats. */
  statusIngest?: boolean;
  /** false: build the app without listening (use app.inject). */
  listen?: boolean;
  /** false: do not run the rollout scheduler. */
  rolloutScheduler?: boolean;
  /** false: do not watch the desired stream for messages the hub did not publish. */
  desiredWatch?: boolean;
}

export interface RunningHub {
  app: FastifyInstance;
  /** http://host:port when listening. */
  url: string | undefined;
  db: Db;
  pool: pg.Pool;
  nc: NatsConnection;
  js: JetStreamClient;
  metrics: HubMetrics;
  relay: OutboxRelay;
  /** Status and heartbeat consumption (undefined when disabled). */
  ingest: StatusIngest | undefined;
  /** The rollout scheduler (active only while it holds the scheduler lock). */
  scheduler: RolloutScheduler;
  /** Agent identities and durables brought in line with Postgres (pass() runs one now). */
  link: LinkReconciler;
  /** The watch over the desired stream (undefined when disabled). */
  desiredWatch: DesiredWatch | undefined;
  close(): Promise<void>;
}

/** What every part is started with. */
interface Base {
  options: HubOptions;
  config: HubConfig;
  logger: Logger;
  metrics: HubMetrics;
  /** Adds a shutdown step; steps run in reverse order. */
  onClose: (step: () => Promise<unknown>) => void;
  /** Operator-mode keys (undefined: the hub issues no agent credentials). */
  natsKeys: NatsAuthKeys | undefined;
}

interface Nats {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** The largest desired message that can be published (stream limit or max_payload). */
  maxDesiredMessageBytes: number;
}

/** Shutdown steps, run in reverse order; a failing step is logged and the rest still run. */
function shutdownSteps(logger: Logger): { add: Base['onClose']; run: () => Promise<void> } {
  const steps: (() => Promise<unknown>)[] = [];
  return {
    add: (step) => void steps.push(step),
    async run() {
      for (const step of steps.reverse()) {
        await step().catch((err: unknown) => logger.warn({ err }, 'shutdown step failed'));
      }
    },
  };
}

/** The database URL without its password, for messages. */
function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '(not a URL)';
  }
}

/** A first query: an unreachable or refusing database is a DATABASE_URL error, said before migrating. */
async function checkDatabase(pool: pg.Pool, url: string): Promise<void> {
  try {
    await pool.query('select 1');
  } catch (err) {
    const reason = err instanceof Error && err.message !== '' ? err.message : String((err as { code?: unknown }).code);
    throw new HubError('HUB_ERR_CONFIG', `DATABASE_URL: cannot use ${redactedUrl(url)}: ${reason}`, { cause: err });
  }
}

/** Migrations (one replica at a time), then the configured tokens. */
async function prepareDatabase(pool: pg.Pool, config: HubConfig): Promise<Db> {
  await checkDatabase(pool, config.databaseUrl);
  await runMigrations(pool);
  const db = createDb(pool);
  await seedTokens(db, config.seedTokens);
  return db;
}

/** Connects as the hub's own NATS user and makes sure the streams exist with the configured limits. */
async function connectNats(base: Base): Promise<Nats> {
  const { config, logger } = base;
  const nc = await connect({
    ...natsConnection(config),
    ...hubAuthOptions(base.natsKeys, config.nats.user, config.nats.password),
    name: 'flotilla-hub',
    maxReconnectAttempts: -1,
  }).catch((err: unknown) => {
    throw natsConnectError(err, config.nats);
  });
  base.onClose(() => nc.drain());
  const statusDurableResume = {};
  const { jsm, statusDurable } = await whenJetStreamReady(
    async () => {
      const manager = await jetstreamManager(nc);
      const outcome = await ensureStreams(manager, {
        replicas: config.nats.replicas,
        ...config.streams,
        statusDurable: config.nats.statusDurable,
        statusDurableResume,
      });
      return { jsm: manager, statusDurable: outcome };
    },
    { deadlineMs: config.nats.startTimeoutMs, logger },
  );
  if (statusDurable.action === 'remade') {
    logger.warn(
      { drift: statusDurable.drift, start: statusDurable.start, setup: config.nats.statusDurable },
      "the hub's status durable was made under another setup; made it again from after its ack floor",
    );
  }
  const maxPayload = nc.info?.max_payload ?? Number.POSITIVE_INFINITY;
  if (maxPayload < config.streams.desired.maxMsgSize) {
    logger.warn(
      { maxPayload, desiredMaxMsgSize: config.streams.desired.maxMsgSize },
      "nats-server's max_payload is below the desired stream's message size: the largest manifests cannot be published",
    );
  }
  // The API refuses workloads whose desired messages could not be published at all.
  const maxDesiredMessageBytes = Math.min(config.streams.desired.maxMsgSize, maxPayload);
  return { nc, js: jetstream(nc), jsm, maxDesiredMessageBytes };
}

/**
 * A failed first connection is a configuration error: a certificate the CA does not verify names
 * FLOTILLA_NATS_CA_FILE, anything else (refused, unreachable, timed out) names NATS_URL.
 */
function natsConnectError(err: unknown, nats: { servers: string[]; caFile: string | undefined }): unknown {
  const { caFile } = nats;
  const message = err instanceof Error ? err.message : String(err);
  if (!/certificate|self[- ]signed|unable to verify|tls/i.test(message)) {
    return new HubError('HUB_ERR_CONFIG', `NATS_URL: cannot connect to ${nats.servers.join(', ')}: ${message}`, {
      cause: err,
    });
  }
  const ca = caFile ? `FLOTILLA_NATS_CA_FILE (${caFile})` : "the system's CAs (set FLOTILLA_NATS_CA_FILE)";
  return new HubError(
    'HUB_ERR_CONFIG',
    `NATS TLS: the servers' certificate does not verify against ${ca}: ${message}`,
    {
      cause: err,
    },
  );
}

/** Servers and TLS, the same for the hub's own and its system connection. */
function natsConnection(config: HubConfig): Pick<ConnectionOptions, 'servers' | 'tls'> {
  return { servers: config.nats.servers, ...(config.nats.caFile ? { tls: { caFile: config.nats.caFile } } : {}) };
}

/** The account issuer of operator mode, or undefined without signing keys. */
async function accountIssuer(base: Base): Promise<NatsAccountIssuer | undefined> {
  if (!base.natsKeys) return undefined;
  const started = await startAccountIssuer(base.natsKeys, natsConnection(base.config));
  base.onClose(() => started.close());
  return base.options.wrapAccounts ? base.options.wrapAccounts(started.accounts) : started.accounts;
}

interface NatsLink {
  accounts: NatsAccountIssuer | undefined;
  agentConsumers: AgentConsumers;
  link: LinkReconciler;
}

/**
 * The agents' side of NATS: identities rendered from Postgres, and before the API serves, durables
 * of accepted clusters exist and stale or drifted ones are gone; then a reconcile pass runs on an
 * interval and after every acceptance or removal.
 */
async function startNatsLink(base: Base, db: Db, nats: Nats): Promise<NatsLink> {
  const { config, logger } = base;
  const accounts = await accountIssuer(base);
  const keep = base.natsKeys ? [base.natsKeys.hubAccount, base.natsKeys.systemAccount] : [];
  const syncAccounts = accounts ? createAccountSync(db, accounts, keep) : () => Promise.resolve();
  const agentConsumers = createAgentConsumers({
    jsm: nats.jsm,
    setup: config.nats.agentDurables,
    streamReplicas: config.nats.replicas,
    logger: logger.child({ component: 'consumers' }),
    metrics: base.metrics,
  });
  const link = createLinkReconciler({
    consumers: agentConsumers,
    durableSetup: config.nats.agentDurables,
    acceptedClusters: () => acceptedClusterNames(db),
    syncAccounts,
    logger: logger.child({ component: 'consumers' }),
    intervalMs: config.natsReconcileMs,
  });
  await link.pass().catch((err: unknown) => logger.warn({ err }, 'first NATS link reconcile failed; retrying'));
  link.start();
  base.onClose(() => link.stop());
  return { accounts, agentConsumers, link };
}

/** Whether the hub hears NATS: a round trip, not isClosed() (a frozen nats-server stays "open"). */
function startHearing(base: Base, natsAnswers: () => Promise<boolean>): NatsHearing {
  const hearing = createNatsHearing({
    probe: natsAnswers,
    intervalMs: base.config.faults.natsProbeIntervalMs,
    logger: base.logger.child({ component: 'nats' }),
  });
  hearing.start();
  base.onClose(() => Promise.resolve(hearing.stop()));
  return hearing;
}

function startScheduler(
  base: Base,
  deps: { db: Db; pool: pg.Pool; desired: DesiredChanges; notifier: RolloutNotifier; hearing: NatsHearing },
): RolloutScheduler {
  const { config } = base;
  const scheduler = createRolloutScheduler({
    db: deps.db,
    pool: deps.pool,
    desired: deps.desired,
    logger: base.logger.child({ component: 'rollouts' }),
    heartbeatTimeoutMs: config.heartbeatTimeoutMs,
    tickMs: config.rolloutTickMs ?? 1000,
    notifier: deps.notifier,
    metrics: base.metrics,
    freshnessMs: config.faults.statusFreshnessMs,
    hearing: () => deps.hearing.state(),
    ...(config.prometheusSecretsDir ? { prometheusSecretsDir: config.prometheusSecretsDir } : {}),
  });
  if (base.options.rolloutScheduler !== false) scheduler.start();
  base.onClose(() => scheduler.stop());
  return scheduler;
}

async function startDesiredWatch(
  base: Base,
  deps: { db: Db; nats: Nats; desired: DesiredChanges },
): Promise<DesiredWatch | undefined> {
  if (base.options.desiredWatch === false) return undefined;
  const watch = createDesiredWatch({
    js: deps.nats.js,
    jsm: deps.nats.jsm,
    repair: createDesiredRepair({ db: deps.db, desired: deps.desired }),
    logger: base.logger.child({ component: 'desired-watch' }),
    metrics: base.metrics,
    // Room for the largest desired message twice over, and never less than 8 MiB.
    batchBytes: Math.max(8 * 1024 * 1024, 2 * base.config.streams.desired.maxMsgSize),
  });
  await watch.start();
  base.onClose(() => watch.stop());
  return watch;
}

async function startStatusIngest(
  base: Base,
  deps: { db: Db; nats: Nats; desired: DesiredChanges; scheduler: RolloutScheduler },
): Promise<StatusIngest | undefined> {
  if (base.options.statusIngest === false) return undefined;
  const logger = base.logger.child({ component: 'status' });
  const ingest = createStatusIngest({
    js: deps.nats.js,
    intake: createStatusIntake({
      db: deps.db,
      desired: deps.desired,
      logger,
      metrics: base.metrics,
      linkRepublishIntervalMs: base.config.faults.linkRepublishIntervalMs,
      onStored: () => deps.scheduler.kick(),
    }),
    logger,
    metrics: base.metrics,
    clockSkewMs: base.config.faults.statusClockSkewMs,
    perClusterRate: base.config.faults.statusRatePerCluster,
  });
  await ingest.start();
  base.onClose(() => ingest.stop());
  return ingest;
}

function startHubOutbox(base: Base, deps: { db: Db; nats: Nats; sessionName: string }): HubOutbox {
  const { config } = base;
  const hubOutbox = startOutbox({
    db: deps.db,
    publish: desiredPublisher(deps.nats.nc),
    logger: base.logger.child({ component: 'relay' }),
    metrics: base.metrics,
    intervalMs: config.relayIntervalMs,
    retentionSeconds: config.outboxRetentionSeconds ?? 3600,
    relay: base.options.relay !== false,
    databaseUrl: config.databaseUrl,
    sessionName: deps.sessionName,
  });
  base.onClose(() => hubOutbox.stop());
  return hubOutbox;
}

/** The HTTPS certificate and key, read once at start; a missing file names its variable. */
function readHttpsFiles(tls: { certFile: string; keyFile: string }): { cert: string; key: string } {
  const read = (file: string, key: string): string => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new HubError('HUB_ERR_CONFIG', `${key}: cannot read ${file}`, { cause: err });
    }
  };
  return { cert: read(tls.certFile, 'FLOTILLA_TLS_CERT_FILE'), key: read(tls.keyFile, 'FLOTILLA_TLS_KEY_FILE') };
}

/** The REST app over the services; it listens unless the options say not to. */
async function startApp(
  base: Base,
  deps: {
    db: Db;
    pool: pg.Pool;
    nats: Nats;
    link: NatsLink;
    outbox: Outbox;
    rolloutNotifier: RolloutNotifier;
    scheduler: RolloutScheduler;
    natsAnswers: () => Promise<boolean>;
  },
): Promise<{ app: FastifyInstance; url: string | undefined }> {
  const { config, options } = base;
  const app = await buildApp({
    db: deps.db,
    outbox: deps.outbox,
    logger: base.logger,
    metrics: base.metrics,
    validate: options.validate ?? kruiseSpecValidator,
    accounts: deps.link.accounts,
    agentConsumers: deps.link.agentConsumers,
    onLinkChange: () => deps.link.link.kick(),
    rolloutNotifier: deps.rolloutNotifier,
    onRolloutChange: () => deps.scheduler.kick(),
    ready: allReady([databaseProbe(deps.pool, config.faults.readyTimeoutMs), deps.natsAnswers]),
    options: {
      bodyLimitBytes: config.http.bodyLimitBytes,
      heartbeatTimeoutMs: config.heartbeatTimeoutMs,
      natsPublicUrls: config.nats.publicUrls,
      credentialTtlSeconds: config.natsAuth?.credentialTtlSeconds ?? 86_400,
      ...(config.limits ? { limits: config.limits } : {}),
      ...(config.workloadPolicy ? { workloadPolicy: config.workloadPolicy } : {}),
      maxDesiredMessageBytes: deps.nats.maxDesiredMessageBytes,
    },
    ...(config.http.tls ? { https: readHttpsFiles(config.http.tls) } : {}),
  });
  base.onClose(() => app.close());
  const url =
    options.listen === false ? undefined : await app.listen({ host: config.http.host, port: config.http.port });
  return { app, url };
}

export async function startHub(options: HubOptions): Promise<RunningHub> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.logLevel);
  const metrics = createHubMetrics(options.registry ?? new Registry());
  // Named per process, so the outbox wake-up can skip this process's own notifications.
  const sessionName = hubSessionName();
  // Survives lost connections (a Postgres restart): see db/pool.ts.
  const pool = createPool({
    connectionString: config.databaseUrl,
    applicationName: sessionName,
    max: 10,
    logger: logger.child({ component: 'db' }),
    onConnectionLost: () => metrics.dbConnectionsLost.inc(),
  });
  const shutdown = shutdownSteps(logger);
  shutdown.add(() => pool.end());
  // Read and checked before anything starts: a wrong file is a configuration error.
  const natsKeys = config.natsAuth ? loadNatsAuthKeys(config.natsAuth) : undefined;
  const base: Base = { options, config, logger, metrics, onClose: shutdown.add, natsKeys };
  try {
    const db = await prepareDatabase(pool, config);
    const nats = await connectNats(base);
    const natsLink = await startNatsLink(base, db, nats);
    const { link } = natsLink;
    const { outbox, relay } = startHubOutbox(base, { db, nats, sessionName });
    const desired = createDesiredChanges(outbox);
    const natsAnswers = natsProbe(nats.nc, config.faults.readyTimeoutMs);
    const hearing = startHearing(base, natsAnswers);
    const rolloutNotifier = createRolloutNotifier();
    const scheduler = startScheduler(base, { db, pool, desired, notifier: rolloutNotifier, hearing });
    const desiredWatch = await startDesiredWatch(base, { db, nats, desired });
    const ingest = await startStatusIngest(base, { db, nats, desired, scheduler });
    const deps = { db, pool, nats, link: natsLink, outbox, rolloutNotifier, scheduler, natsAnswers };
    const { app, url } = await startApp(base, deps);
    const { nc, js } = nats;
    return { app, url, db, pool, nc, js, metrics, relay, ingest, scheduler, link, desiredWatch, close: shutdown.run };
  } catch (err) {
    await shutdown.run();
    throw err;
  }
}
