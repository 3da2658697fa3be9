/**
 * The webhook's settings, read once at startup from `agent manager` flags with FLOTILLA_*
 * variables as fallback (OpenKruise's chart sets the equivalent WEBHOOK_* variables), in the
 * table form of settings/setting.ts. Read by the agent's loadConfig, which reports the problems.
 */
import type { LabelSelector } from '../runtime/label-selector.js';
import { bool, dnsSubdomain, int, matching, oneOf, text } from '../settings/kinds.js';
import type { SettingsReader } from '../settings/reader.js';
import { defaultsOf, type Kind, type SettingsTable } from '../settings/setting.js';

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
  /**
   * Point the CRDs converted by webhook (SidecarSet) at this agent's `/convert` and write the CA
   * bundle there (only the bundle when an installer owns the configurations). False leaves their
   * conversion `clientConfig` to someone else (a test harness serving conversions for a shared
   * cluster); with it, nothing keeps that CRD's bundle current.
   */
  publishConversion: boolean;
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
  /** Sort injected sidecar containers by name (OpenKruise v1.9's EnableSortSidecarContainerByName, alpha). */
  sortSidecarContainersByName: boolean;
  /**
   * Deletion protection (`policy.kruise.io/delete-protection`), OpenKruise's ResourcesDeletionProtection
   * gate (off by default there too); adds the DELETE webhooks of Namespaces, CRDs, workloads,
   * Services and Ingresses.
   */
  resourcesDeletionProtection: boolean;
  /**
   * Cascading on CRDs counts their custom resources (OpenKruise's DeletionProtectionForCRDCascadingGate);
   * off, a Cascading CRD is never deleted. Off whenever resourcesDeletionProtection is.
   */
  crdCascadingDeletionProtection: boolean;
  /**
   * PodUnavailableBudgets guard pod deletions and evictions (OpenKruise's
   * PodUnavailableBudgetDeleteGate, on by default there too): adds the pod DELETE and
   * pods/eviction webhooks.
   */
  pubDeleteGate: boolean;
  /** PodUnavailableBudgets guard pod updates and resizes (PodUnavailableBudgetUpdateGate, alpha, off). */
  pubUpdateGate: boolean;
  /**
   * WorkloadSpread (OpenKruise's WorkloadSpread gate, on by default there too): new pods are placed
   * into subsets, pod deletions and evictions are recorded in them (the pod DELETE and pods/eviction
   * webhooks), the controller runs; off, WorkloadSpreads are refused at the webhook.
   */
  workloadSpreadGate: boolean;
  /**
   * Pods resize in place (OpenKruise v1.9's InPlacePodVerticalScaling gate, off): a budget guarding
   * UPDATE then no longer guards RESIZE unless its annotation lists it.
   */
  inPlacePodVerticalScaling: boolean;
  /** Narrow the covered namespaces / cluster-scoped objects (tests; multi-tenant clusters). */
  namespaceSelector?: LabelSelector;
  clusterScopedObjectSelector?: LabelSelector;
}

const YEAR_MS = 365 * 24 * 3600_000;

/** A Kubernetes object name. */
const objectName = (): Kind<string> => dnsSubdomain('a DNS name');

/**
 * Every webhook setting, as `agent manager --<flag>` with the FLOTILLA_* variable as fallback;
 * the variable names are stable (the Helm chart sets them).
 */
export const WEBHOOK_SETTINGS = {
  thread: {
    flag: 'webhook-thread',
    env: ['FLOTILLA_WEBHOOK_THREAD'],
    kind: bool(),
    default: true,
    help: 'serve admissions from a worker thread of their own, apart from the controllers',
  },
  controllersNice: {
    flag: 'webhook-controllers-nice',
    env: ['FLOTILLA_WEBHOOK_CONTROLLERS_NICE'],
    kind: int(0, 19),
    default: 0,
    help: "with the admission thread, lower the controllers' thread to this nice value so admissions get the CPU first, on Linux; 0 is off",
  },
  host: {
    flag: 'webhook-host',
    env: ['FLOTILLA_WEBHOOK_HOST'],
    kind: text('host'),
    default: '0.0.0.0',
    help: 'listen address of the HTTPS server',
  },
  port: {
    flag: 'webhook-port',
    env: ['FLOTILLA_WEBHOOK_PORT'],
    kind: int(1, 65535),
    default: 9876,
    help: 'port of the HTTPS server',
  },
  timeoutSeconds: {
    flag: 'webhook-timeout-seconds',
    env: ['FLOTILLA_WEBHOOK_TIMEOUT_SECONDS'],
    kind: int(1, 30),
    default: 30,
    help: "the apiserver's timeout per admission call",
  },
  failurePolicy: {
    flag: 'webhook-failure-policy',
    env: ['FLOTILLA_WEBHOOK_FAILURE_POLICY'],
    kind: oneOf(['Fail', 'Ignore'] as const),
    default: 'Fail',
    help: 'what the apiserver does when it cannot reach the webhook',
  },
  url: {
    flag: 'webhook-url',
    env: ['FLOTILLA_WEBHOOK_URL'],
    kind: matching(/^https:\/\/[^/?#]+$/, 'https://host[:port] without a path', 'url'),
    help: 'base URL the apiserver calls instead of the Service (URL mode)',
  },
  serviceName: {
    flag: 'webhook-service-name',
    env: ['FLOTILLA_WEBHOOK_SERVICE_NAME'],
    kind: objectName(),
    default: 'flotilla-webhook-service',
    help: 'Service in front of the agent replicas',
  },
  servicePort: {
    flag: 'webhook-service-port',
    env: ['FLOTILLA_WEBHOOK_SERVICE_PORT'],
    kind: int(1, 65535),
    default: 443,
    help: 'port of that Service',
  },
  secretName: {
    flag: 'webhook-secret-name',
    env: ['FLOTILLA_WEBHOOK_SECRET_NAME'],
    kind: objectName(),
    default: 'flotilla-webhook-certs',
    help: 'Secret holding the CA and serving certificate',
  },
  manageConfigurations: {
    flag: 'webhook-manage-configurations',
    env: ['FLOTILLA_WEBHOOK_MANAGE_CONFIGURATIONS'],
    kind: bool(),
    default: true,
    help: 'create and own the webhook configurations; false: only write the CA bundle into those an installer made',
  },
  publishConversion: {
    flag: 'webhook-publish-conversion',
    env: ['FLOTILLA_WEBHOOK_PUBLISH_CONVERSION'],
    kind: bool(),
    default: true,
    help: 'point the CRDs converted by webhook (SidecarSet) at this agent and keep their CA bundle current',
  },
  mutatingConfigurationName: {
    flag: 'webhook-mutating-configuration',
    env: ['FLOTILLA_WEBHOOK_MUTATING_CONFIGURATION'],
    kind: objectName(),
    default: 'flotilla-mutating-webhook-configuration',
    help: 'name of the MutatingWebhookConfiguration',
  },
  validatingConfigurationName: {
    flag: 'webhook-validating-configuration',
    env: ['FLOTILLA_WEBHOOK_VALIDATING_CONFIGURATION'],
    kind: objectName(),
    default: 'flotilla-validating-webhook-configuration',
    help: 'name of the ValidatingWebhookConfiguration',
  },
  whitelistConfigMap: {
    flag: 'sidecarset-whitelist-configmap',
    env: ['FLOTILLA_SIDECARSET_WHITELIST_CONFIGMAP'],
    kind: objectName(),
    default: 'kruise-configuration',
    help: "ConfigMap in the agent's namespace with the patchPodMetadata whitelist",
  },
  patchMetadataDefaultsAllowed: {
    flag: 'sidecarset-patch-metadata-defaults-allowed',
    env: ['FLOTILLA_SIDECARSET_PATCH_METADATA_DEFAULTS_ALLOWED'],
    kind: bool(),
    default: false,
    help: 'allow any patchPodMetadata key when there is no whitelist',
  },
  sortSidecarContainersByName: {
    flag: 'sidecarset-sort-containers-by-name',
    env: ['FLOTILLA_SIDECARSET_SORT_CONTAINERS_BY_NAME'],
    kind: bool(),
    default: false,
    help: "inject SidecarSet containers sorted by name (OpenKruise's EnableSortSidecarContainerByName gate)",
  },
  resourcesDeletionProtection: {
    flag: 'deletion-protection',
    env: ['FLOTILLA_DELETION_PROTECTION'],
    kind: bool(),
    default: false,
    help: "refuse deleting objects labelled policy.kruise.io/delete-protection (OpenKruise's ResourcesDeletionProtection gate)",
  },
  crdCascadingDeletionProtection: {
    flag: 'deletion-protection-crd-cascading',
    env: ['FLOTILLA_DELETION_PROTECTION_CRD_CASCADING'],
    kind: bool(),
    default: false,
    help: "Cascading on a CRD refuses only while it has custom resources (OpenKruise's DeletionProtectionForCRDCascadingGate); off: always",
  },
  pubDeleteGate: {
    flag: 'pub-delete-gate',
    env: ['FLOTILLA_PUB_DELETE_GATE'],
    kind: bool(),
    default: true,
    help: "PodUnavailableBudgets guard pod deletions and evictions (OpenKruise's PodUnavailableBudgetDeleteGate)",
  },
  pubUpdateGate: {
    flag: 'pub-update-gate',
    env: ['FLOTILLA_PUB_UPDATE_GATE'],
    kind: bool(),
    default: false,
    help: "PodUnavailableBudgets guard pod updates and resizes (OpenKruise's PodUnavailableBudgetUpdateGate)",
  },
  workloadSpreadGate: {
    flag: 'workloadspread-gate',
    env: ['FLOTILLA_WORKLOADSPREAD_GATE'],
    kind: bool(),
    default: true,
    help: "WorkloadSpreads place new pods and count deletions and evictions, and their controller runs (OpenKruise's WorkloadSpread gate)",
  },
  inPlacePodVerticalScaling: {
    flag: 'in-place-pod-vertical-scaling',
    env: ['FLOTILLA_IN_PLACE_POD_VERTICAL_SCALING'],
    kind: bool(),
    default: false,
    help: "pods resize in place, so budgets guarding UPDATE leave resizes alone (OpenKruise's InPlacePodVerticalScaling)",
  },
} satisfies SettingsTable;

/** Settings that are no flags: certificate lifetimes and the sync cadence. */
const FIXED = {
  caValidityMs: 10 * YEAR_MS,
  servingValidityMs: YEAR_MS,
  renewFraction: 1 / 3,
  propagationMs: 10_000,
  syncIntervalMs: 60_000,
};

/** Defaults, for the given agent namespace. */
export function defaultWebhookConfig(namespace: string): WebhookConfig {
  return { ...defaultsOf(WEBHOOK_SETTINGS), ...FIXED, namespace };
}

/**
 * The webhook settings: each flag, else its FLOTILLA_* variable, else the default. Problems go to
 * the reader (the agent reports them all at once), each naming the flag and variable.
 */
export function webhookConfig(read: SettingsReader, namespace: string): WebhookConfig {
  const config: WebhookConfig = { ...read.read(WEBHOOK_SETTINGS), ...FIXED, namespace };
  // As OpenKruise derives its gates: no deletion protection, no CRD cascading either.
  config.crdCascadingDeletionProtection &&= config.resourcesDeletionProtection;
  // Without the thread, admissions are served by the main thread: lowering it would lower them.
  if (config.controllersNice > 0 && !config.thread) {
    read.problem(
      WEBHOOK_SETTINGS.controllersNice,
      'needs the admission thread (--webhook-thread=true); without it admissions run on the thread it would slow down',
    );
  }
  return config;
}

/** DNS names and IPs the serving certificate must cover for this configuration. */
export function servingHosts(config: WebhookConfig): string[] {
  if (config.url !== undefined) return [new URL(config.url).hostname.replace(/^\[|\]$/g, '')];
  const svc = `${config.serviceName}.${config.namespace}`;
  return [`${svc}.svc`, svc, `${svc}.svc.cluster.local`];
}
