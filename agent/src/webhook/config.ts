/**
 * The webhook's settings, read from the environment once at startup (OpenKruise's chart sets the
 * equivalent WEBHOOK_* variables). Called by the agent's loadConfig, which reports the problems.
 */
import type { LabelSelector } from '../runtime/label-selector.js';

export interface WebhookConfig {
  enabled: boolean;
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
    enabled: true,
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

/**
 * The webhook settings from FLOTILLA_WEBHOOK_* variables over the defaults; problems are pushed
 * to `problems` (the agent reports them all at once).
 */
export function webhookConfigFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  namespace: string,
  problems: string[],
): WebhookConfig {
  const c = defaultWebhookConfig(namespace);
  const str = (name: string): string | undefined => {
    const v = env[name]?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const v = str(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (Number.isInteger(n) && n >= min && n <= max) return n;
    problems.push(`${name}: must be an integer ${min}-${max}, got "${v}"`);
    return fallback;
  };
  const enabled = str('FLOTILLA_WEBHOOK_ENABLED');
  c.enabled = enabled === undefined ? true : enabled !== 'false';
  c.port = int('FLOTILLA_WEBHOOK_PORT', c.port, 1, 65535);
  c.timeoutSeconds = int('FLOTILLA_WEBHOOK_TIMEOUT_SECONDS', c.timeoutSeconds, 1, 30);
  const policy = str('FLOTILLA_WEBHOOK_FAILURE_POLICY');
  if (policy === 'Fail' || policy === 'Ignore') c.failurePolicy = policy;
  else if (policy !== undefined)
    problems.push(`FLOTILLA_WEBHOOK_FAILURE_POLICY: must be Fail or Ignore, got "${policy}"`);
  c.url = str('FLOTILLA_WEBHOOK_URL');
  if (c.url !== undefined && !/^https:\/\/[^/?#]+$/.test(c.url)) {
    problems.push(`FLOTILLA_WEBHOOK_URL: must be https://host[:port] without a path, got "${c.url}"`);
  }
  c.serviceName = str('FLOTILLA_WEBHOOK_SERVICE_NAME') ?? c.serviceName;
  c.manageConfigurations = str('FLOTILLA_WEBHOOK_MANAGE_CONFIGURATIONS') !== 'false';
  c.mutatingConfigurationName = str('FLOTILLA_WEBHOOK_MUTATING_CONFIGURATION') ?? c.mutatingConfigurationName;
  c.validatingConfigurationName = str('FLOTILLA_WEBHOOK_VALIDATING_CONFIGURATION') ?? c.validatingConfigurationName;
  c.secretName = str('FLOTILLA_WEBHOOK_SECRET_NAME') ?? c.secretName;
  c.patchMetadataDefaultsAllowed = str('FLOTILLA_SIDECARSET_PATCH_METADATA_DEFAULTS_ALLOWED') === 'true';
  return c;
}

/** DNS names and IPs the serving certificate must cover for this configuration. */
export function servingHosts(config: WebhookConfig): string[] {
  if (config.url !== undefined) return [new URL(config.url).hostname.replace(/^\[|\]$/g, '')];
  const svc = `${config.serviceName}.${config.namespace}`;
  return [`${svc}.svc`, svc, `${svc}.svc.cluster.local`];
}
