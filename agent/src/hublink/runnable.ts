/**
 * The hub link as a runnable of `agent manager`: joins the fleet (registration, acceptance,
 * one-time claim, with the join state kept in a Secret), then consumes and applies desired
 * state, reports status and heartbeats.
 *
 * It runs only while this replica holds the leader Lease. Two replicas must not both consume
 * the cluster's one durable consumer (they would split the messages between them) nor both report
 * status and heartbeats, so a standby replica stays silent towards the hub; on a handover the new
 * leader resumes from the durable consumer's position and re-reports every managed object.
 */
import { sleep, untilAborted } from '@flotilla/api';
import type { Logger } from 'pino';
import type { HubConfig } from './config.js';
import { AgentError } from '../errors.js';
import type { ComponentRunnable } from '../runtime/component.js';
import type { KubeRest } from '../runtime/rest.js';
import { createCredentialRenewal, type CredentialHealth, type CredentialRenewal } from './credential-renewal.js';
import { errorText } from './error-text.js';
import { configMapRunStore, FINISHED_JOBS_CONFIGMAP } from './finished-job-store.js';
import { createHubLink, isAuthRefusal, type HubLink } from './hublink.js';
import { createKubeApplier } from './kube-applier.js';
import type { HubLinkMetrics } from './metrics.js';
import { probeNatsTls, watchNatsTls } from './nats-tls-probe.js';
import { joinFleet, type CredentialStore } from './registration.js';
import { secretCredentialStore } from './secret-store.js';
import { hubFetch } from './hub-fetch.js';
import { natsConnector, type LinkTlsHealth } from './tls.js';
import type { HubLinkCredentials, HubLinkOptions, KubeApplier } from './types.js';

export interface HubLinkRunnableDeps {
  hub: HubConfig;
  clusterName: string;
  /** Namespace of the join Secret (the agent's own). */
  namespace: string;
  rest: KubeRest;
  logger: Logger;
  /** Created once per process: a runnable restarted by a new leadership term reuses them. */
  metrics: HubLinkMetrics;
  agentVersion: string;
  options?: Partial<HubLinkOptions>;
  /** Pause between failed join attempts grows from this to 30 s; default 1 s. */
  joinRetryMs?: number;
  /** Certificate failures towards the hub and NATS (logged, counted, /readyz). */
  tls: LinkTlsHealth;
  /** Whether the hub still renews the cluster's credentials (/readyz). */
  credentials?: CredentialHealth;
}

const MAX_JOIN_RETRY_MS = 30_000;

/**
 * Joins the fleet, retrying every failure with backoff: the hub may be unreachable, or the cluster
 * not accepted yet, or the bootstrap token missing until someone provides the join Secret.
 * Resolves undefined when aborted.
 */
async function joinUntilDone(
  deps: HubLinkRunnableDeps,
  kube: KubeApplier,
  store: CredentialStore,
  signal: AbortSignal,
): Promise<HubLinkCredentials | undefined> {
  const log = linkLogger(deps);
  let delay = deps.joinRetryMs ?? 1000;
  while (!signal.aborted) {
    try {
      const state = await store.load();
      if (!state?.credentials && deps.hub.bootstrapToken === undefined) {
        throw new AgentError(
          'AGENT_ERR_HUB_JOIN',
          `no bootstrap token (--bootstrap-token) and no credentials in Secret ${deps.namespace}/${deps.hub.joinSecret}`,
        );
      }
      const creds = await joinFleet({
        hubUrl: deps.hub.url,
        bootstrapToken: deps.hub.bootstrapToken ?? '',
        clusterName: deps.clusterName,
        labels: deps.hub.labels,
        agentVersion: deps.agentVersion,
        kubernetesVersion: await kube.serverVersion(),
        store,
        // joinFleet names the cluster itself.
        logger: deps.logger.child({ component: 'hublink' }),
        signal,
        fetch: hubFetch(deps.hub),
        ...(deps.joinRetryMs === undefined ? {} : { pollIntervalMs: deps.joinRetryMs }),
      });
      deps.tls.observe('hub', undefined);
      log.info({ credentialExpiresAt: creds.nats.expiresAt }, 'joined the fleet');
      const nats = { ...creds.nats, seed: creds.seed };
      return deps.hub.natsUrl ? { ...nats, servers: [deps.hub.natsUrl] } : nats;
    } catch (err) {
      if (signal.aborted) break;
      const { code, hubCode } = err as { code?: unknown; hubCode?: unknown };
      deps.tls.observe('hub', err);
      log.error({ code, hubCode, error: errorText(err), retryInMs: delay }, 'joining the fleet failed; retrying');
      await sleep(delay, { signal });
      delay = Math.min(MAX_JOIN_RETRY_MS, delay * 2);
    }
  }
  return undefined;
}

const linkLogger = (deps: HubLinkRunnableDeps): Logger =>
  deps.logger.child({ component: 'hublink', cluster: deps.clusterName });

/**
 * Runs one link until aborted (resolves undefined) or until its start fails or its connection
 * closes by itself (resolves the error). start() waits for NATS as long as it takes; an abort
 * meanwhile must still stop the link.
 */
async function runLink(
  link: HubLink,
  signal: AbortSignal,
  deps: { log: Logger; servers: string[]; tls: LinkTlsHealth },
): Promise<unknown> {
  const aborted = untilAborted(signal).then(() => undefined);
  const startFailure = link.start().then(
    () => {
      deps.tls.observe('nats', undefined);
      deps.log.info({ servers: deps.servers }, 'hub link started');
      const closed = link.closed().then((err) => err ?? new Error('the NATS connection closed'));
      return Promise.race([aborted, closed]);
    },
    (err: unknown) => err ?? new Error('hub link start failed'),
  );
  const failure = await Promise.race([startFailure, aborted]);
  await link.stop();
  return failure;
}

/** Renews the credentials while this term runs (credential-renewal.ts); readiness follows it. */
function startRenewal(
  deps: HubLinkRunnableDeps,
  store: CredentialStore,
  credentials: HubLinkCredentials,
  log: Logger,
): CredentialRenewal {
  const renewal = createCredentialRenewal({
    hubUrl: deps.hub.url,
    fetch: hubFetch(deps.hub),
    clusterName: deps.clusterName,
    store,
    credentials,
    logger: log,
    metrics: deps.metrics,
    tls: deps.tls,
    secretName: `${deps.namespace}/${deps.hub.joinSecret}`,
  });
  renewal.start();
  deps.credentials?.track(renewal);
  return renewal;
}

/** The hub link runnable; its component runs it on the leader only (see the file comment). */
export function hubLinkRunnable(deps: HubLinkRunnableDeps): ComponentRunnable {
  return {
    name: 'hub-link',
    async start(signal) {
      const kube = createKubeApplier(deps.rest);
      const store = secretCredentialStore(deps.rest, deps.namespace, deps.hub.joinSecret);
      const log = linkLogger(deps);
      log.info({ hub: deps.hub.url, secret: `${deps.namespace}/${deps.hub.joinSecret}` }, 'joining the fleet');
      const credentials = await joinUntilDone(deps, kube, store, signal);
      if (!credentials) return;
      const renewal = startRenewal(deps, store, credentials, log);
      // A failed start is retried with backoff rather than failing the manager: right after a
      // claim nats-server may not have loaded the new user yet, and NATS may be down for a while.
      let delay = deps.joinRetryMs ?? 1000;
      while (!signal.aborted) {
        // Why reconnects fail, while they do: a certificate (TLS health) or the network (a log line).
        const watch = watchNatsTls({
          servers: credentials.servers,
          probe: (url) => probeNatsTls(url, deps.hub.natsCaPem),
          tls: deps.tls,
          logger: log,
        });
        const link = createHubLink({
          nats: natsConnector(deps.hub.natsCaPem),
          kube,
          clusterName: deps.clusterName,
          credentials,
          logger: deps.logger,
          metrics: deps.metrics,
          agentVersion: deps.agentVersion,
          finishedRuns: configMapRunStore(deps.rest, deps.namespace, FINISHED_JOBS_CONFIGMAP),
          ...(deps.options ? { options: deps.options } : {}),
          onAuthRefused: (why) => renewal.renewNow(why),
          onConnectionChange: (connected) => (connected ? watch.reconnected() : watch.disconnected()),
        });
        const failure = await runLink(link, signal, { log, servers: credentials.servers, tls: deps.tls });
        watch.stop();
        if (failure === undefined) break;
        // An expired or revoked JWT refused at connect: renew now (a revoked key shows as not ready).
        if (isAuthRefusal(failure)) renewal.renewNow('refused');
        deps.tls.observe('nats', failure);
        log.error({ error: errorText(failure), retryInMs: delay }, 'the hub link failed to start; retrying');
        await sleep(delay, { signal });
        delay = Math.min(MAX_JOIN_RETRY_MS, delay * 2);
      }
      renewal.stop();
      deps.credentials?.track(undefined);
      log.info('hub link stopped');
    },
  };
}
