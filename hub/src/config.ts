/**
 * The hub's configuration, read from the environment once at start and validated here; every
 * other module receives the typed result. Errors name the variable that is wrong.
 */
import { HubError } from './errors.js';
import type { AgentDurableSetup } from './domain/agent-consumer-plan.js';
import type { NatsAuthFiles } from './nats/auth/keys.js';

export interface HubConfig {
  databaseUrl: string;
  http: {
    host: string;
    port: number;
    bodyLimitBytes: number;
    /** Serve HTTPS with this certificate and key (PEM files); plain HTTP when absent. */
    tls: { certFile: string; keyFile: string } | undefined;
  };
  logLevel: string;
  nats: {
    /** The servers the hub connects to (NATS_URL, comma-separated). */
    servers: string[];
    /** CA (PEM file) that verifies the servers' certificates; the system's CAs when absent. */
    caFile: string | undefined;
    user: string | undefined;
    password: string | undefined;
    /** URLs handed to agents in their credentials (the hub may reach NATS differently). */
    publicUrls: string[];
    /** Stream replicas (1 for a single server, 3 for a NATS cluster). */
    replicas: number;
    /** How long the start waits for JetStream to answer (a cluster electing its leader). */
    startTimeoutMs: number;
    /** How agents' durables keep their state (domain/agent-consumer-plan.ts). */
    agentDurables: AgentDurableSetup;
    /** How the hub's status durable keeps its state (nats/status-consumer.ts). */
    statusDurable: AgentDurableSetup;
  };
  /**
   * Operator mode (docs/adr/0012): the hub's creds and signing-key files, read and checked at
   * start (nats/auth/keys.ts). Absent: the hub connects with NATS_USER/NATS_PASSWORD and issues
   * no agent credentials.
   */
  natsAuth: NatsAuthFiles | undefined;
  /** Seeded on start (hashed) so a fresh hub can be administered; optional. */
  seedTokens: { admin: string | undefined; bootstrap: string | undefined };
  heartbeatTimeoutMs: number;
  relayIntervalMs: number;
  /** How long sent outbox rows are kept before the relay deletes them (default 1 hour). */
  outboxRetentionSeconds?: number;
  /** How often the rollout scheduler steps active rollouts (default 1000). */
  rolloutTickMs?: number;
  /** Where the analysis runner reads Prometheus bearer tokens by reference (docs/adr/0017). */
  prometheusSecretsDir?: string | undefined;
  /** Readiness, hearing NATS and what status the hub believes (docs/adr/0007-faults-and-status.md). */
  faults: FaultConfig;
  /** Size limits of the DESIRED and STATUS streams (applied to existing streams at start). */
  streams: { desired: StreamLimits; status: StreamLimits };
  /** How often agent identities and durables are brought in line with Postgres (default 30 s). */
  natsReconcileMs: number;
  /** REST limits (default DEFAULT_REST_LIMITS). */
  limits?: RestLimits;
  /** Workload admission policy (default: DEFAULT_SYSTEM_NAMESPACES). */
  workloadPolicy?: WorkloadPolicyConfig;
}

/**
 * Limits of the REST API. Every refusal is counted in flotilla_hub_refusals_total{reason}. The
 * counters behind the rate and stream limits live in each hub process (per replica); the
 * registration limits are counted in Postgres (fleet-wide).
 */
export interface RestLimits {
  /** Token bucket per API token (bootstrap tokens: per token and client address). */
  requestsPerSecond: number;
  requestBurst: number;
  /** Token bucket per client address for requests without a valid token. */
  anonymousRequestsPerSecond: number;
  anonymousRequestBurst: number;
  /** Open server-sent event streams per token and in total. */
  streamsPerToken: number;
  streamsTotal: number;
  /** Registrations one bootstrap token may make per minute. */
  registrationsPerMinute: number;
  /** Pending (not yet accepted) clusters one bootstrap token may have, and all tokens together. */
  pendingClustersPerToken: number;
  pendingClustersTotal: number;
  /** A cluster pending longer than this is removed; its agent registers again. */
  pendingClusterTtlSeconds: number;
  /** Deepest nesting of objects and arrays accepted in a request body. */
  maxJsonDepth: number;
}

export const DEFAULT_REST_LIMITS: RestLimits = {
  requestsPerSecond: 50,
  requestBurst: 200,
  anonymousRequestsPerSecond: 5,
  anonymousRequestBurst: 20,
  streamsPerToken: 20,
  streamsTotal: 500,
  registrationsPerMinute: 30,
  pendingClustersPerToken: 50,
  pendingClustersTotal: 500,
  pendingClusterTtlSeconds: 86_400,
  maxJsonDepth: 64,
};

/** The workload admission policy's settings (docs/workload-policy.md). */
export interface WorkloadPolicyConfig {
  /** Namespaces no workload may use without an exception (the agent's own included). */
  systemNamespaces: string[];
}

export const DEFAULT_SYSTEM_NAMESPACES = ['kube-system', 'kube-public', 'kube-node-lease', 'flotilla-system'];

export interface FaultConfig {
  /** /readyz: the deadline of each dependency check (a Postgres query, a NATS round trip). */
  readyTimeoutMs: number;
  /** How often the hub checks it can hear NATS; the rollout scheduler holds while it cannot. */
  natsProbeIntervalMs: number;
  /** How far a status report's reportedAt may lie ahead of when JetStream stored it. */
  statusClockSkewMs: number;
  /** Each cluster's budget of status reports; beyond it they are dropped until it refills. */
  statusRatePerCluster: { perSecond: number; burst: number };
  /** Soak and canary pauses count only while the hub heard the cluster within this long. */
  statusFreshnessMs: number;
  /** At most one republish of a cluster's desired objects per this long (agent link restarts). */
  linkRepublishIntervalMs: number;
}

type Env = Readonly<Record<string, string | undefined>>;

function required(env: Env, key: string): string {
  const v = env[key];
  if (v === undefined || v.trim() === '') throw new HubError('HUB_ERR_CONFIG', `${key} must be set`);
  return v.trim();
}

function optional(env: Env, key: string): string | undefined {
  const v = env[key]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

function integer(env: Env, key: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, key);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new HubError(
      'HUB_ERR_CONFIG',
      `${key} must be an integer between ${min} and ${max}, got ${JSON.stringify(raw)}`,
    );
  }
  return n;
}

function urlList(env: Env, key: string, fallback: string[]): string[] {
  const raw = optional(env, key);
  if (raw === undefined) return fallback;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function namespaceList(env: Env, key: string, fallback: string[]): string[] {
  const list = urlList(env, key, fallback);
  const bad = list.find((ns) => ns.length > 63 || !DNS_LABEL.test(ns));
  if (bad !== undefined) {
    throw new HubError('HUB_ERR_CONFIG', `${key} must list namespace names, got ${JSON.stringify(bad)}`);
  }
  return list;
}

function restLimits(env: Env): RestLimits {
  const d = DEFAULT_REST_LIMITS;
  const limit = (key: string, fallback: number, max: number): number => integer(env, key, fallback, 1, max);
  return {
    requestsPerSecond: limit('FLOTILLA_RATE_LIMIT_PER_SECOND', d.requestsPerSecond, 100_000),
    requestBurst: limit('FLOTILLA_RATE_LIMIT_BURST', d.requestBurst, 1_000_000),
    anonymousRequestsPerSecond: limit(
      'FLOTILLA_RATE_LIMIT_ANONYMOUS_PER_SECOND',
      d.anonymousRequestsPerSecond,
      100_000,
    ),
    anonymousRequestBurst: limit('FLOTILLA_RATE_LIMIT_ANONYMOUS_BURST', d.anonymousRequestBurst, 1_000_000),
    streamsPerToken: limit('FLOTILLA_SSE_STREAMS_PER_TOKEN', d.streamsPerToken, 100_000),
    streamsTotal: limit('FLOTILLA_SSE_STREAMS_TOTAL', d.streamsTotal, 100_000),
    registrationsPerMinute: limit('FLOTILLA_REGISTRATIONS_PER_MINUTE', d.registrationsPerMinute, 100_000),
    pendingClustersPerToken: limit('FLOTILLA_PENDING_CLUSTERS_PER_TOKEN', d.pendingClustersPerToken, 1_000_000),
    pendingClustersTotal: limit('FLOTILLA_PENDING_CLUSTERS_TOTAL', d.pendingClustersTotal, 1_000_000),
    pendingClusterTtlSeconds: limit('FLOTILLA_PENDING_CLUSTER_TTL_SECONDS', d.pendingClusterTtlSeconds, 365 * 86_400),
    maxJsonDepth: limit('FLOTILLA_HUB_MAX_JSON_DEPTH', d.maxJsonDepth, 1000),
  };
}

/** What one JetStream stream may hold: totals, and the largest single message. */
export interface StreamLimits {
  maxBytes: number;
  maxMsgs: number;
  maxMsgSize: number;
}

const KIB = 1024;
const MIB = 1024 * KIB;
/** Room around a manifest in a desired message: the envelope and the labels the hub stamps on. */
const DESIRED_ENVELOPE_BYTES = 64 * KIB;
/** The least envelope room FLOTILLA_DESIRED_STREAM_MAX_MSG_SIZE may leave. */
const MIN_DESIRED_ENVELOPE_BYTES = 4 * KIB;

/** The DESIRED stream's default largest message: the REST body limit plus the envelope. */
export function defaultDesiredMaxMsgSize(bodyLimitBytes: number): number {
  return bodyLimitBytes + DESIRED_ENVELOPE_BYTES;
}

/** Reads `<prefix>_MAX_BYTES`, `_MAX_MSGS` and `_MAX_MSG_SIZE`; a stream must fit its largest message. */
function streamLimits(env: Env, prefix: string, fallback: StreamLimits): StreamLimits {
  const limits = {
    maxBytes: integer(env, `${prefix}_MAX_BYTES`, fallback.maxBytes, MIB, 1024 * 1024 * MIB),
    maxMsgs: integer(env, `${prefix}_MAX_MSGS`, fallback.maxMsgs, 100, 1_000_000_000),
    maxMsgSize: integer(env, `${prefix}_MAX_MSG_SIZE`, fallback.maxMsgSize, KIB, 64 * MIB),
  };
  if (limits.maxBytes < limits.maxMsgSize) {
    throw new HubError('HUB_ERR_CONFIG', `${prefix}_MAX_BYTES must be at least ${prefix}_MAX_MSG_SIZE`);
  }
  return limits;
}

/**
 * DESIRED holds one message per object and cluster, each up to the largest manifest the REST API
 * accepts (its body limit) plus the envelope; STATUS holds one small report per object and cluster
 * and a heartbeat per cluster.
 */
function natsStreamLimits(env: Env, bodyLimitBytes: number): HubConfig['streams'] {
  const desired = streamLimits(env, 'FLOTILLA_DESIRED_STREAM', {
    maxBytes: 1024 * MIB,
    maxMsgs: 1_000_000,
    maxMsgSize: defaultDesiredMaxMsgSize(bodyLimitBytes),
  });
  if (desired.maxMsgSize < bodyLimitBytes + MIN_DESIRED_ENVELOPE_BYTES) {
    throw new HubError(
      'HUB_ERR_CONFIG',
      `FLOTILLA_DESIRED_STREAM_MAX_MSG_SIZE must be at least FLOTILLA_HUB_BODY_LIMIT_BYTES + ${MIN_DESIRED_ENVELOPE_BYTES} (${bodyLimitBytes + MIN_DESIRED_ENVELOPE_BYTES}): a manifest the API accepts must fit`,
    );
  }
  const status = streamLimits(env, 'FLOTILLA_STATUS_STREAM', {
    maxBytes: 256 * MIB,
    maxMsgs: 1_000_000,
    maxMsgSize: 8 * KIB,
  });
  return { desired, status };
}

const bodyLimit = (env: Env): number =>
  integer(env, 'FLOTILLA_HUB_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024);

/**
 * Defaults follow the agent's heartbeat interval (10 s): status counts as fresh for one and a
 * half intervals, so one late heartbeat does not pause a soak but a silent cluster soon does.
 */
function faultConfig(env: Env): FaultConfig {
  return {
    readyTimeoutMs: integer(env, 'FLOTILLA_READY_TIMEOUT_MS', 2000, 100, 60_000),
    natsProbeIntervalMs: integer(env, 'FLOTILLA_NATS_PROBE_INTERVAL_MS', 1000, 100, 60_000),
    statusClockSkewMs: integer(env, 'FLOTILLA_STATUS_CLOCK_SKEW_SECONDS', 60, 0, 3600) * 1000,
    statusRatePerCluster: {
      perSecond: integer(env, 'FLOTILLA_STATUS_REPORTS_PER_SECOND', 2000, 1, 1_000_000),
      burst: integer(env, 'FLOTILLA_STATUS_REPORTS_BURST', 20_000, 1, 10_000_000),
    },
    statusFreshnessMs: integer(env, 'FLOTILLA_STATUS_FRESHNESS_SECONDS', 15, 1, 3600) * 1000,
    linkRepublishIntervalMs: integer(env, 'FLOTILLA_LINK_REPUBLISH_INTERVAL_SECONDS', 120, 0, 86_400) * 1000,
  };
}

const NATS_AUTH_FILES = {
  credsFile: 'FLOTILLA_NATS_CREDS_FILE',
  systemCredsFile: 'FLOTILLA_NATS_SYSTEM_CREDS_FILE',
  operatorSigningKeyFile: 'FLOTILLA_NATS_OPERATOR_SIGNING_KEY_FILE',
  accountSigningKeyFile: 'FLOTILLA_NATS_ACCOUNT_SIGNING_KEY_FILE',
} as const;

/** The four operator-mode files: all or none. */
function natsAuthFiles(env: Env): HubConfig['natsAuth'] {
  const entries = Object.entries(NATS_AUTH_FILES).map(([field, key]) => [field, key, optional(env, key)] as const);
  const given = entries.filter(([, , v]) => v !== undefined);
  if (given.length === 0) return undefined;
  const missing = entries.find(([, , v]) => v === undefined);
  if (missing)
    throw new HubError('HUB_ERR_CONFIG', `${missing[1]} must be set too: operator mode needs all four files`);
  return {
    ...(Object.fromEntries(entries.map(([field, , v]) => [field, v])) as Omit<NatsAuthFiles, 'credentialTtlSeconds'>),
    // Below a few minutes only for tests (link-faults.test.ts renews every 20 s). Not below 30 s:
    // each expiry reconnects the agent, and its pull requests (10 s) left on the old connection
    // take desired messages until they expire; reconnects faster than that would starve it.
    credentialTtlSeconds: integer(env, 'FLOTILLA_AGENT_CREDENTIAL_TTL_SECONDS', 86_400, 30, 30 * 86_400),
  };
}

/** Certificate and key for HTTPS: both or neither. */
function httpTls(env: Env): HubConfig['http']['tls'] {
  const certFile = optional(env, 'FLOTILLA_TLS_CERT_FILE');
  const keyFile = optional(env, 'FLOTILLA_TLS_KEY_FILE');
  if (certFile === undefined && keyFile === undefined) return undefined;
  if (certFile === undefined || keyFile === undefined) {
    const missing = certFile === undefined ? 'FLOTILLA_TLS_CERT_FILE' : 'FLOTILLA_TLS_KEY_FILE';
    throw new HubError('HUB_ERR_CONFIG', `${missing} must be set too: HTTPS needs a certificate and its key`);
  }
  return { certFile, keyFile };
}

/**
 * `<prefix>_STORAGE` (file | memory, default memory: test/bench/hub/README.md) and
 * `<prefix>_REPLICAS` (1 to the stream's replicas, default the stream's), for the agents' durables
 * (FLOTILLA_NATS_AGENT_DURABLE) and the hub's status durable (FLOTILLA_NATS_STATUS_DURABLE).
 */
function durableSetup(env: Env, prefix: string, streamReplicas: number): AgentDurableSetup {
  const storage = optional(env, `${prefix}_STORAGE`) ?? 'memory';
  if (storage !== 'file' && storage !== 'memory') {
    throw new HubError('HUB_ERR_CONFIG', `${prefix}_STORAGE must be file or memory, not "${storage}"`);
  }
  return {
    memory: storage === 'memory',
    replicas: integer(env, `${prefix}_REPLICAS`, streamReplicas, 1, streamReplicas),
  };
}

/** Validates the environment; throws HubError(HUB_ERR_CONFIG) naming the offending variable. */
export function loadConfig(env: Env): HubConfig {
  const natsServers = urlList(env, 'NATS_URL', ['nats://127.0.0.1:4222']);
  const adminToken = optional(env, 'FLOTILLA_ADMIN_TOKEN');
  const bootstrapToken = optional(env, 'FLOTILLA_BOOTSTRAP_TOKEN');
  for (const [key, token] of [
    ['FLOTILLA_ADMIN_TOKEN', adminToken],
    ['FLOTILLA_BOOTSTRAP_TOKEN', bootstrapToken],
  ] as const) {
    if (token !== undefined && token.length < 16) {
      throw new HubError('HUB_ERR_CONFIG', `${key} must be at least 16 characters long`);
    }
  }
  const streamReplicas = integer(env, 'FLOTILLA_NATS_REPLICAS', 1, 1, 5);
  return {
    databaseUrl: required(env, 'DATABASE_URL'),
    http: {
      host: optional(env, 'FLOTILLA_HUB_HOST') ?? '0.0.0.0',
      port: integer(env, 'FLOTILLA_HUB_PORT', 8080, 0, 65535),
      bodyLimitBytes: bodyLimit(env),
      tls: httpTls(env),
    },
    logLevel: optional(env, 'LOG_LEVEL') ?? 'info',
    nats: {
      servers: natsServers,
      caFile: optional(env, 'FLOTILLA_NATS_CA_FILE'),
      user: optional(env, 'NATS_USER'),
      password: optional(env, 'NATS_PASSWORD'),
      publicUrls: urlList(env, 'FLOTILLA_NATS_PUBLIC_URLS', natsServers),
      replicas: streamReplicas,
      startTimeoutMs: integer(env, 'FLOTILLA_NATS_START_TIMEOUT_SECONDS', 120, 1, 3600) * 1000,
      agentDurables: durableSetup(env, 'FLOTILLA_NATS_AGENT_DURABLE', streamReplicas),
      statusDurable: durableSetup(env, 'FLOTILLA_NATS_STATUS_DURABLE', streamReplicas),
    },
    natsAuth: natsAuthFiles(env),
    seedTokens: { admin: adminToken, bootstrap: bootstrapToken },
    heartbeatTimeoutMs: integer(env, 'FLOTILLA_HEARTBEAT_TIMEOUT_SECONDS', 30, 1, 86_400) * 1000,
    relayIntervalMs: integer(env, 'FLOTILLA_RELAY_INTERVAL_MS', 250, 10, 60_000),
    outboxRetentionSeconds: integer(env, 'FLOTILLA_OUTBOX_RETENTION_SECONDS', 3600, 1, 30 * 86_400),
    rolloutTickMs: integer(env, 'FLOTILLA_ROLLOUT_TICK_MS', 1000, 10, 60_000),
    faults: faultConfig(env),
    prometheusSecretsDir: optional(env, 'FLOTILLA_PROMETHEUS_SECRETS_DIR'),
    streams: natsStreamLimits(env, bodyLimit(env)),
    natsReconcileMs: integer(env, 'FLOTILLA_NATS_RECONCILE_SECONDS', 30, 1, 3600) * 1000,
    limits: restLimits(env),
    workloadPolicy: {
      systemNamespaces: namespaceList(env, 'FLOTILLA_POLICY_SYSTEM_NAMESPACES', DEFAULT_SYSTEM_NAMESPACES),
    },
  };
}
