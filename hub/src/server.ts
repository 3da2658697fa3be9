/**
 * Starts a hub: Postgres (migrations under an advisory lock), NATS (streams, credential issuer,
 * the agents' durables and the watch over the desired stream), the outbox relay, status
 * ingestion and the HTTP server. Returns a handle whose close() shuts
 * everything down in reverse order. main.ts calls this with the validated config; tests call it
 * with their own databases, NATS servers and switches (e.g. no relay, to simulate a crash).
 */
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
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
import { createNatsHearing } from './health/nats-hearing.js';
import { createLogger } from './logger.js';
import { createHubMetrics, type HubMetrics } from './metrics.js';
import { createFileCredentialIssuer, signalReloadFromPidFile } from './nats/credentials/file-issuer.js';
import { externalCredentialIssuer, type NatsCredentialIssuer } from './nats/credentials/issuer.js';
import { bcryptHash } from './nats/credentials/passwords.js';
import { hubSessionName, listenOutbox } from './nats/outbox-notify.js';
import { createOutboxRelay, type OutboxRelay } from './nats/relay.js';
import { createAgentConsumers } from './nats/agent-consumers.js';
import { createDesiredWatch, type DesiredWatch } from './nats/desired-watch.js';
import { createLinkReconciler, type LinkReconciler } from './nats/link-reconciler.js';
import { acceptedClusterNames } from './repositories/clusters-repo.js';
import { createStatusIngest, type StatusIngest } from './nats/status-ingest.js';
import { createRolloutNotifier } from './services/rollouts/notifier.js';
import { createRolloutScheduler, type RolloutScheduler } from './services/rollouts/scheduler.js';
import { ensureStreams } from './nats/streams.js';
import { countUnsent, type OutboxRecord } from './repositories/outbox-repo.js';
import { seedTokens } from './seed.js';
import { createCredentialSync } from './services/credential-sync.js';

export interface HubOptions {
  config: HubConfig;
  logger?: Logger;
  registry?: Registry;
  validate?: SpecValidator;
  /** Replaces the issuer the config describes (tests point it at their nats-server). */
  issuer?: NatsCredentialIssuer;
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

async function issuerFor(config: HubConfig): Promise<NatsCredentialIssuer> {
  if (!config.natsAuth) return externalCredentialIssuer;
  const { file, pidFile, bcryptCost } = config.natsAuth;
  return createFileCredentialIssuer({
    file,
    staticUsers: [{ user: config.nats.user!, passwordHash: await bcryptHash(config.nats.password!, bcryptCost) }],
    reload: pidFile ? signalReloadFromPidFile(pidFile) : () => Promise.resolve(),
  });
}

export async function startHub(options: HubOptions): Promise<RunningHub> {
  const { config } = options;
  const logger = options.logger ?? createLogger(config.logLevel);
  const metrics = createHubMetrics(options.registry ?? new Registry());
  // Named per process, so the outbox listener can skip this process's own notifications.
  const sessionName = hubSessionName();
  // Survives lost connections (a Postgres restart): see db/pool.ts.
  const pool = createPool({
    connectionString: config.databaseUrl,
    applicationName: sessionName,
    max: 10,
    logger: logger.child({ component: 'db' }),
    onConnectionLost: () => metrics.dbConnectionsLost.inc(),
  });
  const cleanup: (() => Promise<unknown>)[] = [() => pool.end()];
  const closeAll = async (): Promise<void> => {
    for (const fn of cleanup.reverse())
      await fn().catch((err: unknown) => logger.warn({ err }, 'shutdown step failed'));
  };
  try {
    await runMigrations(pool);
    const db = createDb(pool);
    await seedTokens(db, config.seedTokens);

    const nc = await connect({
      servers: config.nats.url,
      ...(config.nats.user ? { user: config.nats.user, pass: config.nats.password ?? '' } : {}),
      name: 'flotilla-hub',
      maxReconnectAttempts: -1,
    });
    cleanup.push(() => nc.drain());
    const jsm = await jetstreamManager(nc);
    await ensureStreams(jsm, { replicas: config.nats.replicas, ...config.streams });
    // The API refuses workloads whose desired messages could not be published at all.
    const maxDesiredMessageBytes = Math.min(
      config.streams.desired.maxMsgSize,
      nc.info?.max_payload ?? Number.POSITIVE_INFINITY,
    );
    if (nc.info && nc.info.max_payload < config.streams.desired.maxMsgSize) {
      logger.warn(
        { maxPayload: nc.info.max_payload, desiredMaxMsgSize: config.streams.desired.maxMsgSize },
        "nats-server's max_payload is below the desired stream's message size: the largest manifests cannot be published",
      );
    }
    const js = jetstream(nc);

    const syncCredentials = createCredentialSync(db, options.issuer ?? (await issuerFor(config)));
    await syncCredentials();
    const agentConsumers = createAgentConsumers({ jsm, logger: logger.child({ component: 'consumers' }), metrics });
    const link = createLinkReconciler({
      consumers: agentConsumers,
      acceptedClusters: () => acceptedClusterNames(db),
      syncCredentials: () => syncCredentials(),
      logger: logger.child({ component: 'consumers' }),
      intervalMs: config.natsReconcileMs,
    });
    // Before the API serves: durables of accepted clusters exist, stale and drifted ones are gone.
    await link.pass().catch((err: unknown) => logger.warn({ err }, 'first NATS link reconcile failed; retrying'));
    link.start();
    cleanup.push(() => link.stop());

    const relay = createOutboxRelay({
      db,
      nc,
      logger: logger.child({ component: 'relay' }),
      metrics,
      intervalMs: config.relayIntervalMs,
      retentionSeconds: config.outboxRetentionSeconds ?? 3600,
    });
    if (options.relay !== false) {
      relay.start();
      cleanup.push(() => relay.stop());
      // Rows committed by other replicas (or by this one while another relay held the lock).
      const listener = listenOutbox({
        connectionString: config.databaseUrl,
        logger: logger.child({ component: 'relay' }),
        onNotify: () => relay.kick(),
        ownSessionName: sessionName,
        onConnectionLost: () => metrics.dbConnectionsLost.inc(),
      });
      cleanup.push(() => listener.stop());
    } else {
      cleanup.push(() => relay.stop());
    }

    // Committed outbox rows go straight to this process's relay; the table stays the fallback.
    const handOff = (written?: readonly OutboxRecord[]): void => {
      if (options.relay === false) return; // a hub that never publishes keeps nothing for it
      if (written) relay.handoff(written);
      else relay.kick();
    };
    // A round trip, not isClosed(): a frozen nats-server keeps the connection "open" (checks.ts).
    const natsAnswers = natsProbe(nc, config.faults.readyTimeoutMs);
    const hearing = createNatsHearing({
      probe: natsAnswers,
      intervalMs: config.faults.natsProbeIntervalMs,
      logger: logger.child({ component: 'nats' }),
    });
    hearing.start();
    cleanup.push(() => Promise.resolve(hearing.stop()));
    const rolloutNotifier = createRolloutNotifier();
    const scheduler = createRolloutScheduler({
      db,
      pool,
      logger: logger.child({ component: 'rollouts' }),
      heartbeatTimeoutMs: config.heartbeatTimeoutMs,
      tickMs: config.rolloutTickMs ?? 1000,
      onDesiredChange: handOff,
      notifier: rolloutNotifier,
      metrics,
      freshnessMs: config.faults.statusFreshnessMs,
      hearing: () => hearing.state(),
    });
    if (options.rolloutScheduler !== false) scheduler.start();
    cleanup.push(() => scheduler.stop());

    let desiredWatch: DesiredWatch | undefined;
    if (options.desiredWatch !== false) {
      desiredWatch = createDesiredWatch({
        db,
        js,
        jsm,
        logger: logger.child({ component: 'desired-watch' }),
        metrics,
        onRepaired: () => handOff(),
        // Room for the largest desired message twice over, and never less than 8 MiB.
        batchBytes: Math.max(8 * 1024 * 1024, 2 * config.streams.desired.maxMsgSize),
      });
      await desiredWatch.start();
      cleanup.push(() => desiredWatch!.stop());
    }

    let ingest: StatusIngest | undefined;
    if (options.statusIngest !== false) {
      ingest = createStatusIngest({
        db,
        js,
        logger: logger.child({ component: 'status' }),
        metrics,
        clockSkewMs: config.faults.statusClockSkewMs,
        linkRepublishIntervalMs: config.faults.linkRepublishIntervalMs,
        onStored: () => scheduler.kick(),
        onRepublished: () => relay.kick(),
      });
      await ingest.start();
      cleanup.push(() => ingest!.stop());
    }

    const sampler = setInterval(() => {
      countUnsent(db).then(
        (n) => metrics.outboxPending.set(n),
        () => undefined,
      );
    }, 5000);
    sampler.unref();
    cleanup.push(() => Promise.resolve(clearInterval(sampler)));

    const app = await buildApp({
      db,
      logger,
      metrics,
      validate: options.validate ?? kruiseSpecValidator,
      syncCredentials,
      agentConsumers,
      onLinkChange: () => link.kick(),
      onDesiredChange: handOff,
      rolloutNotifier,
      onRolloutChange: () => scheduler.kick(),
      ready: allReady([databaseProbe(pool, config.faults.readyTimeoutMs), natsAnswers]),
      options: {
        bodyLimitBytes: config.http.bodyLimitBytes,
        heartbeatTimeoutMs: config.heartbeatTimeoutMs,
        natsPublicUrls: config.nats.publicUrls,
        bcryptCost: config.natsAuth?.bcryptCost ?? 10,
        ...(config.limits ? { limits: config.limits } : {}),
        ...(config.workloadPolicy ? { workloadPolicy: config.workloadPolicy } : {}),
        maxDesiredMessageBytes,
      },
    });
    cleanup.push(() => app.close());
    let url: string | undefined;
    if (options.listen !== false) {
      url = await app.listen({ host: config.http.host, port: config.http.port });
    }
    return { app, url, db, pool, nc, js, metrics, relay, ingest, scheduler, link, desiredWatch, close: closeAll };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
