/**
 * Keeps the agent's NATS user JWT valid (docs/adr/0012): renews it at 2/3 of its lifetime, and
 * soon when NATS refuses the connection's authentication (the JWT expired, or the key was revoked),
 * with a request signed by the cluster's key (no bootstrap token needed). A JWT that expired
 * already (the agent was down longer than its lifetime) is renewed the same way: the key, not the
 * JWT, is the identity. The renewed JWT is saved in the join Secret and replaces the old one in
 * place, so every later (re)connect uses it. A renewal the hub refuses (the key was revoked or the
 * cluster removed) is logged with what to do, counted, and makes the agent not ready; a hub whose
 * certificate does not verify is reported to the link's TLS health; every failure is retried with
 * backoff, never a crash.
 */
import type { AgentCredentials } from '@flotilla/api';
import type { Logger } from 'pino';
import { backoffDelay, type BackoffOptions } from '../runtime/backoff.js';
import { errorText } from './error-text.js';
import type { HubFetch } from './hub-fetch.js';
import type { HubLinkMetrics } from './metrics.js';
import { postToHub, type CredentialStore } from './registration.js';
import type { LinkTlsHealth } from './tls.js';
import type { HubLinkCredentials } from './types.js';

const RETRY: BackoffOptions = { initialMs: 1000, maxMs: 5 * 60_000 };
/** Never wait longer than this between looks (a timer's range, and a clock that jumped). */
const MAX_WAIT_MS = 6 * 3600_000;
/** NATS refusals ask for a renewal at most this often (a refused key keeps its backoff). */
const MIN_GAP_MS = 5000;

/** What /readyz shows while the hub refuses the cluster's key. */
export const KEY_REFUSED =
  "the hub refused this cluster's key (revoked by an operator, or the cluster removed): register the cluster again";

/** Pure: how long until the JWT should be renewed (2/3 of its lifetime after it was issued). */
export function renewalDelayMs(jwt: string, nowMs: number): number {
  const body = jwt.split('.')[1];
  if (!body) return 0;
  const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { iat?: number; exp?: number };
  if (claims.iat === undefined || claims.exp === undefined) return MAX_WAIT_MS;
  const renewAtMs = (claims.iat + ((claims.exp - claims.iat) * 2) / 3) * 1000;
  return Math.min(MAX_WAIT_MS, Math.max(0, renewAtMs - nowMs));
}

export interface CredentialRenewalDeps {
  hubUrl: string;
  fetch: HubFetch;
  clusterName: string;
  store: CredentialStore;
  /** The link's credentials: `jwt` is replaced in place after a renewal. */
  credentials: HubLinkCredentials;
  logger: Logger;
  metrics: Pick<HubLinkMetrics, 'credentialRenewals'>;
  /** Certificate failures towards the hub are reported here (logged, counted, /readyz). */
  tls?: Pick<LinkTlsHealth, 'observe'>;
  /** Where the join state lives, for the log line that says how to register again. */
  secretName?: string;
  now?: () => number;
}

export interface CredentialRenewal {
  start(): void;
  /**
   * NATS refused the connection's authentication: renews soon (at most once per 5 s), unless the
   * hub refused the key last time (then its backoff stands: NATS refusing is what revoked means).
   * `expired`: the server cut a connection whose JWT ran out; nothing to do when the JWT in hand
   * is not due yet (it was renewed at 2/3, and the reconnect uses it).
   */
  renewNow(why: 'expired' | 'refused'): void;
  /** False while the hub refuses the cluster's key. */
  ready(): boolean;
  stop(): void;
}

type Outcome = 'renewed' | 'refused' | 'failed';

async function renewOnce(deps: CredentialRenewalDeps): Promise<Outcome> {
  const reply = await postToHub(
    { hubUrl: deps.hubUrl, fetch: deps.fetch, seed: deps.credentials.seed },
    `/clusters/${deps.clusterName}/credentials/renew`,
    {},
  ).catch((err: unknown) => {
    // A certificate failure is said (and counted) by the TLS health; anything else is the network.
    if (!deps.tls?.observe('hub', err)) {
      deps.logger.warn({ error: errorText(err) }, 'renewing the NATS credentials failed; retrying');
    }
    return undefined;
  });
  if (!reply) return 'failed';
  deps.tls?.observe('hub', undefined);
  if (reply.status === 403) return 'refused';
  if (reply.status !== 200) {
    deps.logger.warn({ status: reply.status, hubCode: reply.code }, 'renewing the NATS credentials failed; retrying');
    return 'failed';
  }
  const renewed = reply.body as AgentCredentials;
  const state = (await deps.store.load()) ?? {};
  await deps.store.save({ ...state, credentials: renewed });
  deps.credentials.jwt = renewed.nats.jwt;
  deps.logger.info({ expiresAt: renewed.nats.expiresAt }, 'renewed the NATS credentials');
  return 'renewed';
}

/** Whether the current leadership term's renewal (if any) has the hub's acceptance: /readyz. */
export interface CredentialHealth {
  track(renewal: CredentialRenewal | undefined): void;
  ready(): boolean;
  /** The readiness check: throws the reason (shown by /readyz) while not ready. */
  check(): boolean;
}

export function createCredentialHealth(): CredentialHealth {
  let current: CredentialRenewal | undefined;
  const ready = (): boolean => current?.ready() ?? true;
  return {
    track: (r) => void (current = r),
    ready,
    check() {
      if (!ready()) throw new Error(KEY_REFUSED);
      return true;
    },
  };
}

export function createCredentialRenewal(deps: CredentialRenewalDeps): CredentialRenewal {
  const now = deps.now ?? Date.now;
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  let refused = false;
  let failures = 0;
  let running = false;
  let lastAttemptMs = Number.NEGATIVE_INFINITY;

  const schedule = (ms: number): void => {
    if (stopped) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => void run(), ms);
  };

  async function run(): Promise<void> {
    if (running || stopped) return;
    running = true;
    lastAttemptMs = now();
    const outcome = await renewOnce(deps).catch((err: unknown): Outcome => {
      deps.logger.warn({ error: errorText(err) }, 'renewing the NATS credentials failed; retrying');
      return 'failed';
    });
    running = false;
    deps.metrics.credentialRenewals.inc({ result: outcome });
    if (outcome === 'refused' && !refused) {
      deps.logger.error(
        { cluster: deps.clusterName, secret: deps.secretName },
        `${KEY_REFUSED}: delete the join Secret and restart the agent with a bootstrap token; retrying with backoff`,
      );
    }
    // An unreachable hub says nothing new about the key: a refusal stands until a renewal succeeds.
    if (outcome !== 'failed') refused = outcome === 'refused';
    failures = outcome === 'renewed' ? 0 : failures + 1;
    schedule(outcome === 'renewed' ? renewalDelayMs(deps.credentials.jwt, now()) : backoffDelay(failures, RETRY));
  }

  return {
    start() {
      if (!stopped) return;
      stopped = false;
      schedule(renewalDelayMs(deps.credentials.jwt, now()));
    },
    renewNow(why) {
      if (stopped || refused || running) return;
      if (why === 'expired' && renewalDelayMs(deps.credentials.jwt, now()) > 0) return;
      schedule(Math.max(0, lastAttemptMs + MIN_GAP_MS - now()));
    },
    ready: () => !refused,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
