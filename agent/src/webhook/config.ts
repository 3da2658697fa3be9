/**
 * The webhook's settings, read once at startup from `agent manager` flags with FLOTILLA_*
 * variables as fallback (OpenKruise's chart sets the equivalent WEBHOOK_* variables). Called by
 * the agent's loadConfig, which reports the problems.
 */
import type { Command } from 'commander';
import type { LabelSelector } from '../runtime/label-selector.js';

export interface WebhookConfig {
  /**
   * Serve admissions from a worker thread of their own (default), so the controllers sharing the
   * main thread's event loop never delay a pod create; false serves them from the main thread.
   */
  thread: boolean;
  /**
   * With the admission thread: the nice value (1-19) the main thread, where the controllers and
   * informers run, lowers itself to once the thread is started, so admissions get the agent's CPU
   * first (Linux; 0 leaves priorities alone). The Helm chart sets 10.
   */
  controllersNice: number;
  /** Listen address and port of the HTTPS server. */
  host: string;
  port: number;
  /** The agent's namespace: certificate Secret, revisions, whitelist ConfigMap; never intercepted. */
  namespace: string;
  secretName: string;
  /** Service in front of the replicas (service mode), or a base URL the apiserver calls (URL mode). */
  serviceName: string;
  servicePort: number;
  url: string | undefined;
  /**
   * True: the agent creates and owns both webhook configurations (server-side apply of the whole
   * object). False: an installer (the Helm chart) owns them, and the agent only writes the CA
   * bundle into them (FLOTILLA_WEBHOOK_MANAGE_CONFIGURATIONS=false); timeoutSeconds, failurePolicy
   * and the selectors below are then the installer's business.
   */
  manageConfigurations: boolean;
  mutatingConfigurationName: string;
  validatingConfigurationName: string;
  timeoutSeconds: number;
  failurePolicy: 'Fail' | 'Ignore';
  caValidityMs: number;
  servingValidityMs: number;
  /** Renew a certificate when less than this fraction of its lifetime is left. */
  renewFraction: number;
  propagationMs: number;
  syncIntervalMs: number;
  /** Where the patchPodMetadata whitelist lives (OpenKruise: kruise-configuration). */
  whitelistConfigMap: string;
  /** Allow any patchPodMetadata key when there is no whitelist (SidecarSetPatchPodMetadataDefaultsAllowed). */
  patchMetadataDefaultsAllowed: boolean;
  /** Narrow the covered namespaces / cluster-scoped objects (tests; multi-tenant clusters). */
  namespaceSelector?: LabelSelector;
  clusterScopedObjectSelector?: LabelSelector;
}

const YEAR_MS = 365 * 24 * 3600_000;

/** Defaults, for the given agent namespace. */
export function defaultWebhookConfig(namespace: string): WebhookConfig {
  return {
    thread: true,
    controllersNice: 0,
    host: '0.0.0.0',
    port: 9876,
    namespace,
    secretName: 'flotilla-webhook-certs',
    serviceName: 'flotilla-webhook-service',
    servicePort: 443,
    url: undefined,
    manageConfigurations: true,
    mutatingConfigurationName: 'flotilla-mutating-webhook-configuration',
    validatingConfigurationName: 'flotilla-validating-webhook-configuration',
    timeoutSeconds: 30,
    failurePolicy: 'Fail',
    caValidityMs: 10 * YEAR_MS,
    servingValidityMs: YEAR_MS,
    renewFraction: 1 / 3,
    propagationMs: 10_000,
    syncIntervalMs: 60_000,
    whitelistConfigMap: 'kruise-configuration',
    patchMetadataDefaultsAllowed: false,
  };
}

/** How one setting is read: a string, an integer in a range, true|false, or one of some words. */
type Kind =
  | { type: 'string'; pattern?: RegExp; expect?: string }
  | { type: 'int'; min: number; max: number }
  | { type: 'bool' }
  | { type: 'enum'; values: readonly string[] };

interface Setting {
  /** `agent manager` flag, without the leading dashes. */
  flag: string;
  /** Environment variable read when the flag is not given (the Helm chart sets these). */
  env: string;
  key: keyof WebhookConfig;
  kind: Kind;
  help: string;
}

const DNS_NAME = { pattern: /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/, expect: 'a DNS name' };

/**
 * Every webhook setting, as `agent manager --<flag>` with the FLOTILLA_* variable as fallback.
 * One table serves the CLI (addWebhookOptions) and validation (webhookConfigFromFlags), so the two
 * never disagree; the variable names are stable (the Helm chart sets them).
 */
export const WEBHOOK_SETTINGS: readonly Setting[] = [
  {
    flag: 'webhook-thread',
    env: 'FLOTILLA_WEBHOOK_THREAD',
    key: 'thread',
    kind: { type: 'bool' },
    help: 'serve admissions from a worker thread of their own, apart from the controllers (default true)',
  },
  {
    flag: 'webhook-controllers-nice',
    env: 'FLOTILLA_WEBHOOK_CONTROLLERS_NICE',
    key: 'controllersNice',
    kind: { type: 'int', min: 0, max: 19 },
    help: "with the admission thread, lower the controllers' thread to this nice value so admissions get the CPU first (Linux; default 0: off)",
  },
  {
    flag: 'webhook-host',
    env: 'FLOTILLA_WEBHOOK_HOST',
    key: 'host',
    kind: { type: 'string' },
    help: 'listen address of the HTTPS server (default 0.0.0.0)',
  },
  {
    flag: 'webhook-port',
    env: 'FLOTILLA_WEBHOOK_PORT',
    key: 'port',
    kind: { type: 'int', min: 1, max: 65535 },
    help: 'port of the HTTPS server (default 9876)',
  },
  {
    flag: 'webhook-timeout-seconds',
    env: 'FLOTILLA_WEBHOOK_TIMEOUT_SECONDS',
    key: 'timeoutSeconds',
    kind: { type: 'int', min: 1, max: 30 },
    help: "the apiserver's timeout per admission call (default 30)",
  },
  {
    flag: 'webhook-failure-policy',
    env: 'FLOTILLA_WEBHOOK_FAILURE_POLICY',
    key: 'failurePolicy',
    kind: { type: 'enum', values: ['Fail', 'Ignore'] },
    help: 'Fail (default, as OpenKruise) or Ignore when the webhook cannot be reached',
  },
  {
    flag: 'webhook-url',
    env: 'FLOTILLA_WEBHOOK_URL',
    key: 'url',
    kind: { type: 'string', pattern: /^https:\/\/[^/?#]+$/, expect: 'https://host[:port] without a path' },
    help: 'base URL the apiserver calls instead of the Service (URL mode)',
  },
  {
    flag: 'webhook-service-name',
    env: 'FLOTILLA_WEBHOOK_SERVICE_NAME',
    key: 'serviceName',
    kind: { type: 'string', ...DNS_NAME },
    help: 'Service in front of the agent replicas (default flotilla-webhook-service)',
  },
  {
    flag: 'webhook-service-port',
    env: 'FLOTILLA_WEBHOOK_SERVICE_PORT',
    key: 'servicePort',
    kind: { type: 'int', min: 1, max: 65535 },
    help: 'port of that Service (default 443)',
  },
  {
    flag: 'webhook-secret-name',
    env: 'FLOTILLA_WEBHOOK_SECRET_NAME',
    key: 'secretName',
    kind: { type: 'string', ...DNS_NAME },
    help: 'Secret holding the CA and serving certificate (default flotilla-webhook-certs)',
  },
  {
    flag: 'webhook-manage-configurations',
    env: 'FLOTILLA_WEBHOOK_MANAGE_CONFIGURATIONS',
    key: 'manageConfigurations',
    kind: { type: 'bool' },
    help: 'create and own the webhook configurations (default true); false: only write the CA bundle into those an installer made',
  },
  {
    flag: 'webhook-mutating-configuration',
    env: 'FLOTILLA_WEBHOOK_MUTATING_CONFIGURATION',
    key: 'mutatingConfigurationName',
    kind: { type: 'string', ...DNS_NAME },
    help: 'name of the MutatingWebhookConfiguration',
  },
  {
    flag: 'webhook-validating-configuration',
    env: 'FLOTILLA_WEBHOOK_VALIDATING_CONFIGURATION',
    key: 'validatingConfigurationName',
    kind: { type: 'string', ...DNS_NAME },
    help: 'name of the ValidatingWebhookConfiguration',
  },
  {
    flag: 'sidecarset-whitelist-configmap',
    env: 'FLOTILLA_SIDECARSET_WHITELIST_CONFIGMAP',
    key: 'whitelistConfigMap',
    kind: { type: 'string', ...DNS_NAME },
    help: "ConfigMap in the agent's namespace with the patchPodMetadata whitelist (default kruise-configuration)",
  },
  {
    flag: 'sidecarset-patch-metadata-defaults-allowed',
    env: 'FLOTILLA_SIDECARSET_PATCH_METADATA_DEFAULTS_ALLOWED',
    key: 'patchMetadataDefaultsAllowed',
    kind: { type: 'bool' },
    help: 'allow any patchPodMetadata key when there is no whitelist (default false)',
  },
];

/** `agent manager` webhook flags as commander hands them over (camelCase of the flag names). */
export type WebhookFlags = Partial<Record<string, string | boolean | undefined>>;

const camel = (flag: string): string => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/** The value of one setting, or undefined (then the default stays); problems name flag and variable. */
function read(setting: Setting, raw: string, problems: string[]): unknown {
  const where = `--${setting.flag} (${setting.env})`;
  const k = setting.kind;
  switch (k.type) {
    case 'int': {
      const n = Number(raw);
      if (/^\d+$/.test(raw) && n >= k.min && n <= k.max) return n;
      problems.push(`${where}: must be an integer ${k.min}-${k.max}, got "${raw}"`);
      return undefined;
    }
    case 'bool':
      if (raw === 'true' || raw === 'false') return raw === 'true';
      problems.push(`${where}: must be true or false, got "${raw}"`);
      return undefined;
    case 'enum':
      if (k.values.includes(raw)) return raw;
      problems.push(`${where}: must be ${k.values.join(' or ')}, got "${raw}"`);
      return undefined;
    default:
      if (!k.pattern || k.pattern.test(raw)) return raw;
      problems.push(`${where}: must be ${k.expect}, got "${raw}"`);
      return undefined;
  }
}

/**
 * The webhook settings: each flag, else its FLOTILLA_* variable, else the default. Problems are
 * pushed to `problems` (the agent reports them all at once), each naming the flag and variable.
 */
export function webhookConfigFromFlags(
  flags: WebhookFlags,
  env: Readonly<Record<string, string | undefined>>,
  namespace: string,
  problems: string[],
): WebhookConfig {
  const c = defaultWebhookConfig(namespace) as unknown as Record<string, unknown>;
  for (const setting of WEBHOOK_SETTINGS) {
    const given = flags[camel(setting.flag)];
    const raw = (given === undefined ? env[setting.env] : String(given))?.trim();
    if (raw === undefined || raw === '') continue;
    const value = read(setting, raw, problems);
    if (value !== undefined) c[setting.key] = value;
  }
  const config = c as unknown as WebhookConfig;
  // Without the thread, admissions are served by the main thread: lowering it would lower them.
  if (config.controllersNice > 0 && !config.thread) {
    problems.push(
      '--webhook-controllers-nice (FLOTILLA_WEBHOOK_CONTROLLERS_NICE): needs the admission thread (--webhook-thread=true); without it admissions run on the thread it would slow down',
    );
  }
  return config;
}

/** Registers the webhook flags on `agent manager`; returns the command for chaining. */
export function addWebhookOptions(command: Command): Command {
  for (const s of WEBHOOK_SETTINGS) {
    const arg = s.kind.type === 'bool' ? '<true|false>' : s.kind.type === 'int' ? '<n>' : '<value>';
    command.option(`--${s.flag} ${arg}`, `${s.help} ($${s.env})`);
  }
  return command;
}

/** DNS names and IPs the serving certificate must cover for this configuration. */
export function servingHosts(config: WebhookConfig): string[] {
  if (config.url !== undefined) return [new URL(config.url).hostname.replace(/^\[|\]$/g, '')];
  const svc = `${config.serviceName}.${config.namespace}`;
  return [`${svc}.svc`, svc, `${svc}.svc.cluster.local`];
}
