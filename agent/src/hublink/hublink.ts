/**
 * The agent's link to the hub: connects to NATS with the cluster's own identity (and inbox
 * prefix), consumes and applies desired state, reports status and heartbeats. NATS outages are
 * ridden out by the client's endless reconnects; the durable consumer resumes where it stopped.
 * Objects it applied that are changed or deleted in the cluster are re-applied (drift.ts).
 *
 *   const link = createHubLink({ nats: { connect }, kube: createKubeApplier(rest), clusterName,
 *                                credentials, logger, metrics: createHubLinkMetrics(registry),
 *                                agentVersion });
 *   await link.start(); … await link.stop();
 */
import { randomUUID } from 'node:crypto';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import { jwtAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { startDesiredConsumer, type DesiredConsumer } from './desired-consumer.js';
import { createDriftGuard, createSerial } from './drift.js';
import { startHeartbeat, type Heartbeat } from './heartbeat.js';
import { createStatusReporter, type StatusReporter } from './status-reporter.js';
import { DEFAULT_HUBLINK_OPTIONS, type HubLinkDeps } from './types.js';

export interface HubLink {
  /** Resolves once connected and consuming (waits for NATS if it is down). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Sends a heartbeat now (after start). */
  heartbeat(): Promise<void>;
}

export function createHubLink(deps: HubLinkDeps): HubLink {
  const options = { ...DEFAULT_HUBLINK_OPTIONS, ...deps.options };
  const logger = deps.logger.child({ component: 'hublink', cluster: deps.clusterName });
  let nc: NatsConnection | undefined;
  let js: JetStreamClient | undefined;
  let consumer: DesiredConsumer | undefined;
  let heartbeat: Heartbeat | undefined;
  let stopped = false;
  const serial = createSerial();
  const guard = createDriftGuard({ kube: deps.kube, serial, logger, metrics: deps.metrics });
  const status = createStatusReporter({
    cluster: deps.clusterName,
    kube: deps.kube,
    logger,
    metrics: deps.metrics,
    js: () => js,
    intervalMs: options.statusIntervalMs,
    resyncMs: options.statusResyncMs,
    onListed: (kind, objects) => guard.check(kind, objects),
  });

  return {
    async start() {
      // 1. connect (waiting for NATS as long as it takes) and follow the connection's state;
      nc = await connectToHub(deps);
      deps.metrics.connected.set(1);
      void followConnection(nc, deps, logger).catch(() => undefined);
      js = jetstream(nc, { checkAPI: false, apiPrefix: deps.credentials.apiPrefix });
      // 2. consume desired state once the hub has created this cluster's durable consumer;
      consumer = startDesiredConsumer(nc, {
        cluster: deps.clusterName,
        credentials: deps.credentials,
        kube: deps.kube,
        logger,
        metrics: deps.metrics,
        status,
        retryDelayMs: options.retryDelayMs,
        guard,
        serial,
      });
      await consumer.ready;
      // Stopped while waiting for the hub to create the durable: start nothing more.
      if (stopped) return;
      // 3. report status, and heartbeats from now on.
      status.start();
      heartbeat = startLinkHeartbeat(deps, options.heartbeatIntervalMs, status, () => js, logger);
      await heartbeat.beat().catch((err: unknown) => logger.warn({ err }, 'first heartbeat failed'));
    },
    async stop() {
      stopped = true;
      heartbeat?.stop();
      await consumer?.stop();
      await status.stop();
      await nc?.drain().catch(() => undefined);
      deps.metrics.connected.set(0);
    },
    heartbeat: () => heartbeat?.beat() ?? Promise.resolve(),
  };
}

/** Connects with the cluster's own identity and inbox prefix; reconnects forever. */
function connectToHub(deps: HubLinkDeps): Promise<NatsConnection> {
  const { credentials } = deps;
  return deps.nats.connect({
    servers: credentials.servers,
    // Read on every (re)connect: a renewed JWT replaces the expired one without a new link.
    authenticator: jwtAuthenticator(
      () => credentials.jwt,
      () => new TextEncoder().encode(credentials.seed),
    ),
    inboxPrefix: credentials.inboxPrefix,
    name: `flotilla-agent-${deps.clusterName}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1000,
    waitOnFirstConnect: true,
  });
}

const AUTH_EXPIRED = /authentication expired/i;

/**
 * Keeps the `connected` gauge and the log in step with disconnects and reconnects, and reports an
 * expired user JWT (the server's `User Authentication Expired`) so that it is renewed at once.
 */
async function followConnection(
  conn: NatsConnection,
  deps: Pick<HubLinkDeps, 'metrics' | 'onAuthExpired'>,
  logger: Logger,
): Promise<void> {
  for await (const s of conn.status()) {
    if (s.type === 'disconnect') deps.metrics.connected.set(0);
    if (s.type === 'reconnect') deps.metrics.connected.set(1);
    if (s.type === 'disconnect' || s.type === 'reconnect') logger.info({ event: s.type }, 'NATS connection');
    if (s.type === 'error' && AUTH_EXPIRED.test(String(s.error))) deps.onAuthExpired?.();
  }
}

function startLinkHeartbeat(
  deps: HubLinkDeps,
  intervalMs: number,
  status: StatusReporter,
  js: () => JetStreamClient | undefined,
  logger: Logger,
): Heartbeat {
  return startHeartbeat({
    cluster: deps.clusterName,
    // A new id per start: the hub republishes this cluster's desired objects, which refills
    // the drift guard's memory of what was applied (lost with the previous process or term).
    linkId: randomUUID(),
    agentVersion: deps.agentVersion,
    kubernetesVersion: () => deps.kube.serverVersion(),
    managedObjects: () => status.managedCount(),
    js,
    logger,
    intervalMs,
  });
}
