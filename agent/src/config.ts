import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { pullSecretNamespacesFromEnv } from './controllers/imagepulljob/config.js';
import { AgentError } from './errors.js';
import { webhookConfigFromFlags, type WebhookConfig, type WebhookFlags } from './webhook/config.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

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
   * namespace (FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES; see controllers/imagepulljob/config.ts).
   */
  pullSecretNamespaces?: string[];
  /**
   * Admission webhook settings (--webhook-* flags, FLOTILLA_WEBHOOK_* variables; see
   * webhook/config.ts). loadConfig always sets them; configurations built by hand (tests)
   * without them get the defaults.
   */
  webhook?: WebhookConfig;
  /**
   * The agent's own namespace (join Secret, webhook certificates, default Lease namespace):
   * --namespace, FLOTILLA_NAMESPACE, POD_NAMESPACE, else flotilla-system. loadConfig always sets
   * it; configurations built by hand (tests) without it use the Lease namespace.
   */
  namespace?: string;
  /** The link to the fleet's hub; absent (no --hub-url) means standalone. */
  hub?: HubConfig;
}

/** How `agent manager` joins the fleet and reaches the hub. */
export interface HubConfig {
  /** Base URL of the hub's REST API, e.g. https://hub.example:8080. */
  url: string;
  /**
   * Presented once to register; not needed after the join Secret holds credentials. Never
   * logged: the config object is never logged as a whole.
   */
  bootstrapToken: string | undefined;
  /** Labels the cluster registers with (placement selects on them). */
  labels: Record<string, string>;
  /** Secret in `namespace` that holds the join state (registration secret, NATS credentials). */
  joinSecret: string;
  /** Overrides the NATS servers from the credentials (a hub behind another address). */
  natsUrl: string | undefined;
}

/** `agent manager` flags as commander hands them over (all strings until validated). */
export interface ManagerFlags extends WebhookFlags {
  kubeconfig?: string;
  clusterName?: string;
  identity?: string;
  logLevel?: string;
  healthHost?: string;
  healthPort?: string;
  leaderElect?: boolean;
  /** false with --no-kube-api-http2. */
  kubeApiHttp2?: boolean;
  leaseNamespace?: string;
  leaseName?: string;
  leaseDuration?: string;
  renewDeadline?: string;
  retryPeriod?: string;
  shutdownTimeout?: string;
  cacheSyncTimeout?: string;
  components?: string;
  namespace?: string;
  hubUrl?: string;
  bootstrapToken?: string;
  bootstrapTokenFile?: string;
  clusterLabels?: string;
  joinSecret?: string;
  natsUrl?: string;
}

/** What loadConfig reads from the machine, injectable for tests. */
export interface ConfigHost {
  hostname(): string;
  fileExists(path: string): boolean;
  readFile(path: string): string;
}

const realHost: ConfigHost = { hostname, fileExists: existsSync, readFile: (p) => readFileSync(p, 'utf8') };

/**
 * Builds the configuration from flags, falling back to environment variables, then defaults.
 * Every problem is collected and reported at once in an AGENT_ERR_CONFIG error that names the
 * flag and its variable.
 */
export function loadConfig(
  flags: ManagerFlags,
  env: Readonly<Record<string, string | undefined>>,
  host: ConfigHost = realHost,
): AgentConfig {
  const problems: string[] = [];
  const opt = (flag: string, variable: string | undefined, value: string | undefined): Option => ({
    name: variable ? `--${flag} (${variable})` : `--${flag}`,
    value: value ?? (variable ? env[variable] : undefined),
    problems,
  });

  const kubeconfig = opt('kubeconfig', 'KUBECONFIG', flags.kubeconfig);
  const inCluster = Boolean(env.KUBERNETES_SERVICE_HOST);
  if (kubeconfig.value === undefined && !inCluster) {
    problems.push(`${kubeconfig.name}: required outside a cluster (no KUBERNETES_SERVICE_HOST)`);
  } else if (kubeconfig.value !== undefined && !host.fileExists(kubeconfig.value)) {
    problems.push(`${kubeconfig.name}: file ${kubeconfig.value} does not exist`);
  }

  const leaseDurationMs = duration(opt('lease-duration', undefined, flags.leaseDuration), 15_000);
  const renewDeadlineMs = duration(opt('renew-deadline', undefined, flags.renewDeadline), 10_000);
  const retryPeriodMs = duration(opt('retry-period', undefined, flags.retryPeriod), 2_000);
  if (leaseDurationMs <= renewDeadlineMs) problems.push('--lease-duration: must be longer than --renew-deadline');
  // Renewals are retried every retryPeriod plus up to 20 % jitter; several must fit in the deadline.
  if (renewDeadlineMs <= retryPeriodMs * 1.2)
    problems.push('--renew-deadline: must be longer than 1.2 × --retry-period');

  const namespace =
    dnsLabelOrUndefined(opt('namespace', 'FLOTILLA_NAMESPACE', flags.namespace)) ??
    nonEmpty(opt('namespace', 'POD_NAMESPACE', undefined)) ??
    'flotilla-system';
  const config: AgentConfig = {
    kubeconfig: kubeconfig.value,
    clusterName: dnsLabel(opt('cluster-name', 'FLOTILLA_CLUSTER_NAME', flags.clusterName)),
    identity: nonEmpty(opt('identity', 'POD_NAME', flags.identity)) ?? `${host.hostname()}_${randomUUID().slice(0, 8)}`,
    logLevel: oneOf(opt('log-level', 'FLOTILLA_LOG_LEVEL', flags.logLevel), LOG_LEVELS, 'info'),
    health: {
      host: nonEmpty(opt('health-host', undefined, flags.healthHost)) ?? '0.0.0.0',
      port: port(opt('health-port', 'FLOTILLA_HEALTH_PORT', flags.healthPort), 8080),
    },
    leaderElection: {
      enabled: flags.leaderElect ?? true,
      namespace: nonEmpty(opt('lease-namespace', undefined, flags.leaseNamespace)) ?? namespace,
      leaseName: nonEmpty(opt('lease-name', undefined, flags.leaseName)) ?? 'flotilla-agent',
      leaseDurationMs,
      renewDeadlineMs,
      retryPeriodMs,
    },
    shutdownTimeoutMs: duration(opt('shutdown-timeout', undefined, flags.shutdownTimeout), 30_000),
    cacheSyncTimeoutMs: duration(opt('cache-sync-timeout', undefined, flags.cacheSyncTimeout), 120_000),
    // --no-kube-api-http2 wins; commander's default (true) leaves the variable to decide.
    kubeApiHttp2:
      flags.kubeApiHttp2 !== false && bool(opt('kube-api-http2', 'FLOTILLA_KUBE_API_HTTP2', undefined), true),
    components: (opt('components', 'FLOTILLA_COMPONENTS', flags.components).value ?? '*')
      .split(',')
      .map((c) => c.trim())
      .filter((c) => c !== ''),
    webhook: webhookConfigFromFlags(flags, env, namespace, problems),
    namespace,
    hub: hubConfig(flags, opt, host),
    pullSecretNamespaces: pullSecretNamespacesFromEnv(env, problems),
  };
  for (const [variable, instead] of Object.entries(RETIRED_VARIABLES)) {
    if (env[variable] !== undefined) problems.push(`${variable}: no longer read; ${instead}`);
  }
  if (problems.length > 0) throw new AgentError('AGENT_ERR_CONFIG', `invalid configuration: ${problems.join('; ')}`);
  return config;
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

/** The agent's own namespace; configurations built by hand (tests) without one use the Lease's. */
export function agentNamespace(config: Pick<AgentConfig, 'namespace' | 'leaderElection'>): string {
  return config.namespace ?? config.leaderElection.namespace;
}

type OptionOf = (flag: string, variable: string | undefined, value: string | undefined) => Option;

/** The hub link settings; undefined without --hub-url (a standalone agent). */
function hubConfig(flags: ManagerFlags, opt: OptionOf, host: ConfigHost): HubConfig | undefined {
  const urlOpt = opt('hub-url', 'FLOTILLA_HUB_URL', flags.hubUrl);
  if (nonEmpty(urlOpt) === undefined) return undefined;
  // An invalid URL still has the other hub options checked, so every problem is named at once.
  const url = httpUrl(urlOpt) ?? '';
  const tokenOpt = opt('bootstrap-token', 'FLOTILLA_BOOTSTRAP_TOKEN', flags.bootstrapToken);
  const fileOpt = opt('bootstrap-token-file', 'FLOTILLA_BOOTSTRAP_TOKEN_FILE', flags.bootstrapTokenFile);
  let bootstrapToken = nonEmpty(tokenOpt);
  const file = nonEmpty(fileOpt);
  if (bootstrapToken !== undefined && file !== undefined) {
    fileOpt.problems.push(`${fileOpt.name}: give either ${tokenOpt.name} or a file, not both`);
  } else if (file !== undefined) {
    // Read once here, so a missing or empty file fails at startup rather than at join time.
    try {
      bootstrapToken = host.readFile(file).trim();
      if (bootstrapToken === '') fileOpt.problems.push(`${fileOpt.name}: file ${file} is empty`);
    } catch {
      fileOpt.problems.push(`${fileOpt.name}: cannot read file ${file}`);
    }
  }
  const natsOpt = opt('nats-url', 'FLOTILLA_NATS_URL', flags.natsUrl);
  const natsUrl = nonEmpty(natsOpt);
  if (natsUrl !== undefined && !/^(nats|tls|wss?):\/\/[^\s/]+\/?$/.test(natsUrl)) {
    natsOpt.problems.push(`${natsOpt.name}: must be nats://host:port (or tls://, ws://, wss://), got "${natsUrl}"`);
  }
  return {
    url,
    bootstrapToken: bootstrapToken === '' ? undefined : bootstrapToken,
    labels: labelList(opt('cluster-labels', 'FLOTILLA_CLUSTER_LABELS', flags.clusterLabels)),
    joinSecret: dnsSubdomain(opt('join-secret', 'FLOTILLA_JOIN_SECRET', flags.joinSecret)) ?? 'flotilla-agent-join',
    natsUrl,
  };
}

function httpUrl(o: Option): string | undefined {
  const v = nonEmpty(o);
  if (v === undefined) return undefined;
  try {
    const u = new URL(v);
    if ((u.protocol === 'http:' || u.protocol === 'https:') && u.username === '' && u.password === '') {
      return v.replace(/\/+$/, '');
    }
  } catch {
    // reported below
  }
  o.problems.push(`${o.name}: must be an http(s) URL without credentials, got "${v}"`);
  return undefined;
}

const LABEL_KEY =
  /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const LABEL_VALUE = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$/;

/** `k=v,k=v` with Kubernetes label syntax. */
function labelList(o: Option): Record<string, string> {
  const labels: Record<string, string> = {};
  const v = nonEmpty(o);
  if (v === undefined) return labels;
  for (const pair of v.split(',').map((p) => p.trim())) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq).trim();
    const value = eq < 0 ? '' : pair.slice(eq + 1).trim();
    if (eq < 0 || !LABEL_KEY.test(key) || key.length > 316 || !LABEL_VALUE.test(value)) {
      o.problems.push(`${o.name}: "${pair}" is not a label key=value`);
    } else if (key in labels) {
      o.problems.push(`${o.name}: label ${key} given twice`);
    } else {
      labels[key] = value;
    }
  }
  return labels;
}

function dnsLabelOrUndefined(o: Option): string | undefined {
  return nonEmpty(o) === undefined ? undefined : dnsLabel(o);
}

function dnsSubdomain(o: Option): string | undefined {
  const v = nonEmpty(o);
  if (v === undefined) return undefined;
  if (v.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(v)) return v;
  o.problems.push(`${o.name}: must be a DNS subdomain (a Secret name), got "${v}"`);
  return undefined;
}

interface Option {
  name: string;
  value: string | undefined;
  problems: string[];
}

function nonEmpty(o: Option): string | undefined {
  return o.value === undefined || o.value.trim() === '' ? undefined : o.value.trim();
}

function dnsLabel(o: Option): string {
  const v = nonEmpty(o);
  if (v === undefined) o.problems.push(`${o.name}: required`);
  else if (!/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(v)) {
    o.problems.push(`${o.name}: must be a DNS label (lower-case letters, digits, '-'), got "${v}"`);
  }
  return v ?? '';
}

function oneOf<T extends string>(o: Option, allowed: readonly T[], fallback: T): T {
  const v = nonEmpty(o);
  if (v === undefined) return fallback;
  if ((allowed as readonly string[]).includes(v)) return v as T;
  o.problems.push(`${o.name}: must be one of ${allowed.join(', ')}, got "${v}"`);
  return fallback;
}

/** `true` or `false`. */
function bool(o: Option, fallback: boolean): boolean {
  const v = nonEmpty(o);
  if (v === undefined) return fallback;
  if (v === 'true' || v === 'false') return v === 'true';
  o.problems.push(`${o.name}: must be true or false, got "${v}"`);
  return fallback;
}

function port(o: Option, fallback: number): number {
  const v = nonEmpty(o);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (Number.isInteger(n) && n >= 0 && n <= 65535) return n;
  o.problems.push(`${o.name}: must be a port number 0-65535, got "${v}"`);
  return fallback;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `500ms`, `15s`, `2m`, `1h`; a bare number means seconds. */
function duration(o: Option, fallback: number): number {
  const v = nonEmpty(o);
  if (v === undefined) return fallback;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v);
  if (m && Number(m[1]) > 0) return Math.round(Number(m[1]) * UNITS[m[2] ?? 's']!);
  o.problems.push(`${o.name}: must be a positive duration like 500ms, 15s or 2m, got "${v}"`);
  return fallback;
}
