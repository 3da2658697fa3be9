/**
 * The agent's link to the hub: connects to NATS with the cluster's own identity (and inbox
 * prefix), consumes and applies desired state, reports status and heartbeats. NATS outages are
 * ridden out by the client's endless reconnects, refused authentication included (a renewed JWT is
 * read on the next attempt); the durable consumer resumes where it stopped.
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
import { backoffDelay } from '../runtime/backoff.js';
import { startDesiredConsumer, type DesiredConsumer } from './desired-consumer.js';
import { createDriftGuard, createSerial } from './drift.js';
import { errorText } from './error-text.js';
import { createFinishedJobs, memoryRunStore } from './finished-job-store.js';
import { startHeartbeat, type Heartbeat } from './heartbeat.js';
import { createStatusReporter, type StatusReporter } from './status-reporter.js';
import { DEFAULT_HUBLINK_OPTIONS, type HubLinkDeps } from './types.js';

export interface HubLink {
  /** Resolves once connected and consuming (waits for NATS if it is down). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Sends a heartbeat now (after start). */
  heartbeat(): Promise<void>;
  /**
   * Resolves when the NATS connection closed by itself (not by stop()), with its error if any; the
   * runnable then starts a new link. Never resolves before start().
   */
  closed(): Promise<Error | undefined>;
}

export function createHubLink(deps: HubLinkDeps): HubLink {
  const options = { ...DEFAULT_HUBLINK_OPTIONS, ...deps.options };
  const logger = deps.logger.child({ component: 'hublink', cluster: deps.clusterName });
  let nc: NatsConnection | undefined;
  let js: JetStreamClient | undefined;
  let consumer: DesiredConsumer | undefined;
  let heartbeat: Heartbeat | undefined;
  let stopped = false;
  let closed: Promise<Error | undefined> = new Promise(() => undefined);
  // Authentication refusals since the last connect (reconnects back off while NATS refuses us),
  // and whether the connection is up (one that is not would never drain).
  const auth: LinkState = { refusals: 0, up: false };
  const serial = createSerial();
  const finished = createFinishedJobs({
    cluster: deps.clusterName,
    store: deps.finishedRuns ?? memoryRunStore(),
    logger,
  });
  const guard = createDriftGuard({
    kube: deps.kube,
    serial,
    logger,
    metrics: deps.metrics,
    finished: (ref) => finished.get(ref),
  });
  const status = createStatusReporter({
    cluster: deps.clusterName,
    kube: deps.kube,
    logger,
    metrics: deps.metrics,
    js: () => js,
    intervalMs: options.statusIntervalMs,
    resyncMs: options.statusResyncMs,
    standing: (now) => finished.reports(now),
    onListed: async (kind, objects) => {
      // Before drift repair: a job seen finished is not re-created once its TTL removed it.
      if (kind === 'BroadcastJob') await finished.observe(objects, new Date());
      await guard.check(kind, objects);
    },
  });

  return {
    async start() {
      // 1. connect (waiting for NATS as long as it takes) and follow the connection's state;
      nc = await connectToHub(deps, auth);
      auth.up = true;
      deps.metrics.connected.set(1);
      const conn = nc;
      closed = conn.closed().then((err) => (stopped ? new Promise<never>(() => undefined) : (err ?? undefined)));
      void followConnection(conn, deps, logger, auth).catch(() => undefined);
      js = jetstream(nc, { checkAPI: false, apiPrefix: deps.credentials.apiPrefix });
      // 2. recall the finished runs (the hub republishes every desired object to a new link),
      //    then consume desired state once the hub has created this cluster's durable consumer;
      await finished
        .load()
        .catch((err: unknown) =>
          logger.warn({ error: errorText(err) }, 'reading the finished jobs failed; they may run again'),
        );
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
        finished,
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
      // Disconnected (credentials refused, NATS away): close first, so that nothing waits on a
      // connection that may never come back.
      if (nc && !auth.up) await nc.close().catch(() => undefined);
      await consumer?.stop();
      await status.stop();
      await nc?.drain().catch(() => undefined);
      deps.metrics.connected.set(0);
    },
    heartbeat: () => heartbeat?.beat() ?? Promise.resolve(),
    closed: () => closed,
  };
}

const AUTH_BACKOFF = { initialMs: 1000, maxMs: 30_000 };

interface LinkState {
  refusals: number;
  up: boolean;
}

/**
 * Connects with the cluster's own identity and inbox prefix; reconnects forever. nats.js gives up
 * after two authentication errors in a row unless told not to; the JWT it reads is renewed in
 * place, so the next attempt may well succeed. While NATS refuses us, the attempts back off.
 */
function connectToHub(deps: HubLinkDeps, auth: LinkState): Promise<NatsConnection> {
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
    reconnectDelayHandler: () => (auth.refusals === 0 ? 1000 : backoffDelay(auth.refusals, AUTH_BACKOFF)),
    ignoreAuthErrorAbort: true,
    waitOnFirstConnect: true,
  });
}

/**
 * The server refused the connection's authentication: `User Authentication Expired` (the JWT ran
 * out), `User Authentication Revoked` (the key was revoked in the account) or `Authorization
 * Violation` (a reconnect with an expired or revoked JWT).
 */
const AUTH_REFUSED = /authentication expired|authentication revoked|authorization violation/i;
const AUTH_EXPIRED = /authentication expired/i;

/** Whether a NATS error (of a status event or a failed first connect) is a refused authentication. */
export function isAuthRefusal(err: unknown): boolean {
  return AUTH_REFUSED.test(err instanceof Error ? `${err.name}: ${err.message}` : String(err));
}

/**
 * Keeps the `connected` gauge and the log in step with disconnects and reconnects, tells the
 * runnable about both (it classifies failing reconnects), and reports a refused authentication so
 * that the credentials are renewed (credential-renewal.ts).
 */
async function followConnection(
  conn: NatsConnection,
  deps: Pick<HubLinkDeps, 'metrics' | 'onAuthRefused' | 'onConnectionChange'>,
  logger: Logger,
  auth: LinkState,
): Promise<void> {
  for await (const s of conn.status()) {
    if (s.type === 'disconnect') {
      deps.metrics.connected.set(0);
      auth.up = false;
    }
    if (s.type === 'reconnect') {
      deps.metrics.connected.set(1);
      auth.refusals = 0;
      auth.up = true;
    }
    if (s.type === 'disconnect' || s.type === 'reconnect') {
      logger.info({ event: s.type }, 'NATS connection');
      deps.onConnectionChange?.(s.type === 'reconnect');
    }
    if (s.type === 'error' && isAuthRefusal(s.error)) {
      auth.refusals++;
      const why = AUTH_EXPIRED.test(String(s.error)) ? 'expired' : 'refused';
      // An expired JWT is routine (the connection outlived it; the renewed one is in hand).
      if (why === 'expired') logger.info('the connection’s NATS JWT expired; reconnecting with the current one');
      else logger.warn({ error: String(s.error) }, 'NATS refused the credentials; renewing them');
      deps.onAuthRefused?.(why);
    }
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
