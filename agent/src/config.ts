/**
 * The configuration of `agent manager`, in the table form of settings/setting.ts: the manager
 * process's own settings and leader election's here, the webhook's, the hub link's and the
 * ImagePullJob controller's in their folders. loadConfig reads them all once at start; the CLI
 * generates the flags and --help from the same tables (MANAGER_SETTINGS_GROUPS).
 */
import { randomUUID } from 'node:crypto';
import { BROADCASTJOB_SETTINGS } from './controllers/broadcastjob/config.js';
import { CLONESET_SETTINGS } from './controllers/cloneset/config.js';
import { IMAGEPULLJOB_SETTINGS } from './controllers/imagepulljob/config.js';
import { HUB_SETTINGS, hubConfig, type HubConfig } from './hublink/config.js';
import type { LogLevel } from './logger.js';
import { bool, dnsLabel, dnsSubdomain, duration, list, port, text } from './settings/kinds.js';
import type { SettingsGroup } from './settings/options.js';
import { checkKubeconfig, PROCESS_SETTINGS } from './settings/process.js';
import { SettingsReader, realHost, type ConfigHost, type Env, type Flags } from './settings/reader.js';
import type { SettingsTable } from './settings/setting.js';
import { WEBHOOK_SETTINGS, webhookConfig, type WebhookConfig } from './webhook/config.js';

/** The agent manager's configuration, validated once at startup and injected everywhere. */
export interface AgentConfig {
  /** Path of a kubeconfig file; undefined means in-cluster service account credentials. */
  kubeconfig: string | undefined;
  clusterName: string;
  /** This replica's identity in leader election and event sources. */
  identity: string;
  logLevel: LogLevel;
  health: { host: string; port: number };
  leaderElection: {
    enabled: boolean;
    namespace: string;
    leaseName: string;
    leaseDurationMs: number;
    renewDeadlineMs: number;
    retryPeriodMs: number;
  };
  shutdownTimeoutMs: number;
  cacheSyncTimeoutMs: number;
  /**
   * Requests to the apiserver go over HTTP/2 when it offers it (one multiplexed connection, as
   * client-go); false keeps HTTP/1.1 keep-alive connections. Configurations built by hand
   * (tests) without it use HTTP/2.
   */
  kubeApiHttp2?: boolean;
  /**
   * Which components run (controllers, webhook, hub link; components.ts lists them): `*` for
   * all, names to pick, `-name` to leave one out (kube-controller-manager's --controllers syntax).
   * Checked against the list at start; configurations built by hand (tests) without it run all.
   */
  components?: string[];
  /**
   * Namespaces whose ImagePullJob pull secrets the agent may read; undefined means every
   * namespace (see controllers/imagepulljob/config.ts).
   */
  pullSecretNamespaces?: string[];
  /** Seconds added to the NodeImage tag TTL of Always ImagePullJobs; undefined: 300. */
  alwaysNodeImageTtlSeconds?: number;
  /** Gate InPlaceWorkloadVerticalScaling for CloneSets (controllers/cloneset/config.ts); undefined: off. */
  inPlaceWorkloadVerticalScaling?: boolean;
  /** BroadcastJob pods left to the scheduler (controllers/broadcastjob/config.ts); undefined: true. */
  assignBcjPodsByScheduler?: boolean;
  /**
   * Admission webhook settings (see webhook/config.ts). loadConfig always sets them;
   * configurations built by hand (tests) without them get the defaults.
   */
  webhook?: WebhookConfig;
  /**
   * The agent's own namespace (join Secret, webhook certificates, default Lease namespace).
   * loadConfig always sets it; configurations built by hand (tests) without it use the Lease
   * namespace.
   */
  namespace?: string;
  /** The link to the fleet's hub; absent (no --hub-url) means standalone (see hublink/config.ts). */
  hub?: HubConfig;
}

/** The manager process's own settings. */
export const MANAGER_SETTINGS = {
  ...PROCESS_SETTINGS,
  clusterName: {
    flag: 'cluster-name',
    env: ['FLOTILLA_CLUSTER_NAME'],
    kind: dnsLabel(),
    required: true,
    help: 'name of this cluster in the fleet',
  },
  identity: {
    flag: 'identity',
    env: ['POD_NAME'],
    kind: text('id'),
    defaultHelp: 'else hostname_random',
    help: 'leader election identity',
  },
  healthPort: {
    flag: 'health-port',
    env: ['FLOTILLA_HEALTH_PORT'],
    kind: port(),
    default: 8080,
    help: 'port of /healthz, /readyz and /metrics',
  },
  namespace: {
    flag: 'namespace',
    env: ['FLOTILLA_NAMESPACE', 'POD_NAMESPACE'],
    kind: dnsLabel('ns'),
    default: 'flotilla-system',
    help: "the agent's own namespace: join Secret, webhook certificates",
  },
  components: {
    flag: 'components',
    env: ['FLOTILLA_COMPONENTS'],
    kind: list(),
    default: ['*'],
    help: 'components to run (controllers, webhook, hublink): *, names, -name to leave one out; empty runs none',
  },
  kubeApiHttp2: {
    flag: 'kube-api-http2',
    negatable: true,
    env: ['FLOTILLA_KUBE_API_HTTP2'],
    kind: bool(),
    default: true,
    help: 'talk HTTP/1.1 to the apiserver instead of HTTP/2; watches always use HTTP/1.1',
  },
  shutdownTimeoutMs: {
    flag: 'shutdown-timeout',
    kind: duration(),
    default: 30_000,
    help: 'time for in-flight reconciles to finish on SIGTERM',
  },
  cacheSyncTimeoutMs: {
    flag: 'cache-sync-timeout',
    kind: duration(),
    default: 120_000,
    help: 'startup fails if caches have not synced by then',
  },
} satisfies SettingsTable;

export const LEADER_ELECTION_SETTINGS = {
  enabled: {
    flag: 'leader-elect',
    negatable: true,
    kind: bool(),
    default: true,
    help: 'run without leader election (a single replica only)',
  },
  namespace: {
    flag: 'lease-namespace',
    kind: dnsLabel('ns'),
    defaultHelp: 'default: --namespace',
    help: 'namespace of the leader election Lease',
  },
  leaseName: {
    flag: 'lease-name',
    kind: dnsSubdomain('a DNS subdomain (a Lease name)'),
    default: 'flotilla-agent',
    help: 'name of the leader election Lease',
  },
  leaseDurationMs: {
    flag: 'lease-duration',
    kind: duration(),
    default: 15_000,
    help: 'lease validity without renewal',
  },
  renewDeadlineMs: {
    flag: 'renew-deadline',
    kind: duration(),
    default: 10_000,
    help: 'the leader steps down if it cannot renew for this long',
  },
  retryPeriodMs: {
    flag: 'retry-period',
    kind: duration(),
    default: 2_000,
    help: 'pause between acquire/renew attempts',
  },
} satisfies SettingsTable;

/** Every setting of `agent manager`, by area, as its --help lists them; loadConfig reads each table. */
export const MANAGER_SETTINGS_GROUPS: readonly SettingsGroup[] = [
  { title: 'Manager', settings: MANAGER_SETTINGS },
  { title: 'Leader election', settings: LEADER_ELECTION_SETTINGS },
  { title: 'Webhook', settings: WEBHOOK_SETTINGS },
  { title: 'Hub link', settings: HUB_SETTINGS },
  { title: 'ImagePullJob', settings: IMAGEPULLJOB_SETTINGS },
  { title: 'CloneSet', settings: CLONESET_SETTINGS },
  { title: 'BroadcastJob', settings: BROADCASTJOB_SETTINGS },
];

/**
 * Builds the configuration from flags, falling back to environment variables, then defaults.
 * Every problem is collected and reported at once in an AGENT_ERR_CONFIG error that names the
 * flag and its variable.
 */
export function loadConfig(flags: Flags, env: Env, host: ConfigHost = realHost): AgentConfig {
  const read = new SettingsReader(flags, env, host);
  const { healthHost, healthPort, identity, ...manager } = read.read(MANAGER_SETTINGS);
  checkKubeconfig(read, manager.kubeconfig);
  const config: AgentConfig = {
    ...manager,
    identity: identity ?? `${host.hostname()}_${randomUUID().slice(0, 8)}`,
    health: { host: healthHost, port: healthPort },
    leaderElection: leaderElectionConfig(read, manager.namespace),
    webhook: webhookConfig(read, manager.namespace),
    hub: hubConfig(read),
    ...imagePullJobConfig(read),
    ...read.read(CLONESET_SETTINGS),
    ...read.read(BROADCASTJOB_SETTINGS),
  };
  refuseRetiredVariables(read);
  read.check('AGENT_ERR_CONFIG', 'invalid configuration: ');
  return config;
}

function imagePullJobConfig(
  read: SettingsReader,
): Pick<AgentConfig, 'pullSecretNamespaces' | 'alwaysNodeImageTtlSeconds'> {
  const { pullSecretNamespaces, alwaysNodeImageTtlSeconds } = read.read(IMAGEPULLJOB_SETTINGS);
  return { pullSecretNamespaces, alwaysNodeImageTtlSeconds };
}

/** The Lease settings, checked against each other; the Lease lives in the agent's namespace unless moved. */
function leaderElectionConfig(read: SettingsReader, namespace: string): AgentConfig['leaderElection'] {
  const le = read.read(LEADER_ELECTION_SETTINGS);
  if (le.leaseDurationMs <= le.renewDeadlineMs) {
    read.problem(LEADER_ELECTION_SETTINGS.leaseDurationMs, 'must be longer than --renew-deadline');
  }
  // Renewals are retried every retryPeriod plus up to 20 % jitter; several must fit in the deadline.
  if (le.renewDeadlineMs <= le.retryPeriodMs * 1.2) {
    read.problem(LEADER_ELECTION_SETTINGS.renewDeadlineMs, 'must be longer than 1.2 × --retry-period');
  }
  return { ...le, namespace: le.namespace ?? namespace };
}

/**
 * Variables that once switched components on and off. --components is the one switch now; a
 * leftover variable fails the start rather than being ignored, since ignoring it would turn on
 * what it turned off.
 */
const RETIRED_VARIABLES: Readonly<Record<string, string>> = {
  FLOTILLA_CONTROLLERS: 'use --components (FLOTILLA_COMPONENTS)',
  FLOTILLA_WEBHOOK_ENABLED: 'leave the webhook out with --components=*,-webhook (FLOTILLA_COMPONENTS)',
};

function refuseRetiredVariables(read: SettingsReader): void {
  for (const [variable, instead] of Object.entries(RETIRED_VARIABLES)) {
    if (read.variable(variable) !== undefined) read.problems.push(`${variable}: no longer read; ${instead}`);
  }
}

/** The agent's own namespace; configurations built by hand (tests) without one use the Lease's. */
export function agentNamespace(config: Pick<AgentConfig, 'namespace' | 'leaderElection'>): string {
  return config.namespace ?? config.leaderElection.namespace;
}
