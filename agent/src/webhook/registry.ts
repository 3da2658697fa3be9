/**
 * Every webhook the agent serves: its path (OpenKruise's paths), the name it has in the webhook
 * configuration, what it intercepts, and its handler. The server and the configurations are both
 * built from this one list, so a path is served exactly when it is registered.
 */
import { CRD_DEFINITIONS, KRUISE_KINDS, KruiseKind, KruiseResources, type KruiseKindName } from '@flotilla/api';
import type { LabelSelector } from '../runtime/label-selector.js';
import type { AdmissionHandler, Operation } from './admission/types.js';
import { kruiseDefaultingHandler } from './mutating/kruise-defaults.js';
import { crrDefaultingHandler, type CrrPodReader } from './mutating/crr-defaults.js';
import { podMutatingHandler, type PodMutationSources } from './mutating/pod.js';
import { deletionProtectionHandler, type DeletionInventory } from './validating/deletion-protection-handler.js';
import { LABEL_DELETE_PROTECTION, type ProtectedKind, type ProtectionGates } from './validating/deletion-protection.js';
import { kruiseValidatingHandler, type ExtraValidation } from './validating/kruise-validation.js';
import type { PubGates } from '../controllers/podunavailablebudget/decision.js';
import type { PubGuard } from '../controllers/podunavailablebudget/guard.js';
import { pubAdmissionHandler } from './validating/pub-handler.js';
import type { SpreadGuard } from '../controllers/workloadspread/admission.js';
import { inOrder, podSpreadHandler } from './validating/pod-spread-handler.js';
import { deny } from './admission/review.js';

export interface WebhookDefinition {
  /** Name in the configuration, e.g. `mpod.kb.io`. */
  name: string;
  type: 'mutating' | 'validating';
  path: string;
  rule: { apiGroups: string[]; apiVersions: string[]; resources: string[]; operations: Operation[] };
  /** Cluster-scoped resources are not filtered by namespaceSelector (Namespaces are, by their own labels). */
  clusterScoped: boolean;
  handler: AdmissionHandler;
  /** Overrides the configured failurePolicy (deletion protection: Ignore, as OpenKruise's chart). */
  failurePolicy?: 'Fail' | 'Ignore';
  /** Only objects matching it are sent (deletion protection: those carrying its label). */
  objectSelector?: LabelSelector;
}

export interface WebhookHandlerDeps {
  /** Reads a CRR's pod and node for the CRR defaulting webhook (CREATE). */
  crrPods?: CrrPodReader;
  pods: PodMutationSources;
  /** Cluster-dependent validation per kind (SidecarSet name clashes, patch whitelist). */
  extraValidation?: Partial<Record<KruiseKindName, ExtraValidation>>;
  /** Deletion protection, registered only while its gate is on (as OpenKruise registers it). */
  deletionProtection?: { gates: ProtectionGates; inventory: DeletionInventory };
  /** PodUnavailableBudget admission of pods; its webhooks exist only for the gates that are on. */
  podBudget?: { gates: PubGates; guard: PubGuard };
  /**
   * WorkloadSpread (OpenKruise's WorkloadSpread gate): with it, pod deletions and evictions are
   * recorded by `guard` (the pod DELETE and eviction webhooks exist for it, whatever the budget
   * gates); without it, WorkloadSpreads are refused. Undefined: on, with nothing recorded.
   */
  workloadSpread?: { enabled: boolean; guard?: SpreadGuard };
}

/** The API versions the kind's CRD serves; its webhooks take requests at every one of them. */
export function servedVersions(kind: KruiseKindName): string[] {
  const definition = CRD_DEFINITIONS.find((d) => d.kind === kind)!;
  return definition.versions.filter((v) => v.served).map((v) => v.name);
}

/**
 * OpenKruise v1.9's path: `/mutate-apps-kruise-io-v1alpha1-cloneset` for a kind served at one
 * version, `/mutate-apps-kruise-io-sidecarset` for the kinds served at both; validating alike.
 * PodUnavailableBudget, served at one version, has an unversioned path all the same
 * (`/validate-policy-kruise-io-podunavailablebudget`).
 */
export function kruisePath(type: 'mutate' | 'validate', kind: KruiseKindName): string {
  const { group } = KruiseResources[kind];
  const versions = servedVersions(kind);
  const versioned = versions.length === 1 && kind !== KruiseKind.PodUnavailableBudget;
  const version = versioned ? `${versions[0]}-` : '';
  return `/${type}-${group.replace(/\./g, '-')}-${version}${kind.toLowerCase()}`;
}

/** OpenKruise v1.9's configuration name: `mcloneset.kb.io`; ImagePullJob's end in `-v1beta1`. */
export function kruiseWebhookName(type: 'mutating' | 'validating', kind: KruiseKindName): string {
  const suffix = kind === KruiseKind.ImagePullJob ? '-v1beta1' : '';
  return `${type === 'mutating' ? 'm' : 'v'}${kind.toLowerCase()}${suffix}.kb.io`;
}

/** Kinds OpenKruise v1.9 only validates (it has no defaulting webhook for them). */
const VALIDATING_ONLY_KINDS: ReadonlySet<KruiseKindName> = new Set([
  KruiseKind.WorkloadSpread,
  KruiseKind.PodUnavailableBudget,
]);

/** The label objects must carry for a deletion-protection webhook to be called. */
const PROTECTED_OBJECTS: LabelSelector = {
  matchExpressions: [{ key: LABEL_DELETE_PROTECTION, operator: 'Exists' }],
};

/** Built-in kinds under deletion protection: OpenKruise v1.9's paths and names, DELETE only. */
const PROTECTED_BUILTINS: {
  name: string;
  path: string;
  group: string;
  resource: string;
  kind: ProtectedKind;
  clusterScoped: boolean;
}[] = [
  {
    name: 'vnamespace.kb.io',
    path: '/validate-namespace',
    group: '',
    resource: 'namespaces',
    kind: 'Namespace',
    clusterScoped: true,
  },
  {
    name: 'vcustomresourcedefinition.kb.io',
    path: '/validate-customresourcedefinition',
    group: 'apiextensions.k8s.io',
    resource: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    clusterScoped: true,
  },
  {
    name: 'vservice.kb.io',
    path: '/validate-service',
    group: '',
    resource: 'services',
    kind: 'Service',
    clusterScoped: false,
  },
  {
    name: 'vingress.kb.io',
    path: '/validate-ingress',
    group: 'networking.k8s.io',
    resource: 'ingresses',
    kind: 'Ingress',
    clusterScoped: false,
  },
  ...(['deployment', 'replicaset', 'statefulset'] as const).map((k) => ({
    name: `vbuiltin${k}.kb.io`,
    path: `/validate-apps-${k}`,
    group: 'apps',
    resource: `${k}s`,
    kind: 'Workload' as const,
    clusterScoped: false,
  })),
];

function protectionDefinitions(protection: NonNullable<WebhookHandlerDeps['deletionProtection']>): WebhookDefinition[] {
  return PROTECTED_BUILTINS.map((b) => ({
    name: b.name,
    type: 'validating',
    path: b.path,
    rule: { apiGroups: [b.group], apiVersions: ['v1'], resources: [b.resource], operations: ['DELETE'] },
    clusterScoped: b.clusterScoped,
    handler: deletionProtectionHandler(b.kind, protection.gates, protection.inventory),
    failurePolicy: 'Ignore',
    objectSelector: PROTECTED_OBJECTS,
  }));
}

/**
 * OpenKruise v1.9's pod webhooks, both at `/validate-pod`: vpod (pod DELETE with the budget delete
 * gate or WorkloadSpread, UPDATE with the budget update gate) and vpodeviction (pods/eviction
 * CREATE, the same as DELETE). Budgets decide first; WorkloadSpread records what they allowed.
 */
function podValidationDefinitions(deps: WebhookHandlerDeps): WebhookDefinition[] {
  const budget = deps.podBudget;
  const spread = deps.workloadSpread?.enabled ? deps.workloadSpread.guard : undefined;
  const handler = inOrder([
    ...(budget ? [pubAdmissionHandler(budget.gates, budget.guard)] : []),
    ...(spread ? [podSpreadHandler(spread)] : []),
  ]);
  const deleteGate = Boolean(budget?.gates.deleteGate) || spread !== undefined;
  const operations: Operation[] = [
    ...(budget?.gates.updateGate ? (['UPDATE'] as const) : []),
    ...(deleteGate ? (['DELETE'] as const) : []),
  ];
  const defs: WebhookDefinition[] = [];
  const base = { type: 'validating', path: '/validate-pod', clusterScoped: false, handler } as const;
  if (operations.length > 0) {
    defs.push({
      ...base,
      name: 'vpod.kb.io',
      rule: { apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations },
    });
  }
  if (deleteGate) {
    defs.push({
      ...base,
      name: 'vpodeviction.kb.io',
      rule: { apiGroups: [''], apiVersions: ['v1'], resources: ['pods/eviction'], operations: ['CREATE'] },
    });
  }
  return defs;
}

/** OpenKruise v1.9's refusal of a PodUnavailableBudget while neither PUB gate is on. */
export const PUB_GATES_OFF =
  'feature PodUnavailableBudget is invalid, please open via feature-gate(PodUnavailableBudgetDeleteGate, PodUnavailableBudgetUpdateGate)';

/** Whether a budget guards anything: one of the PUB gates is on (no PUB wiring: as OpenKruise's defaults, delete on). */
const pubGateOn = (budget: WebhookHandlerDeps['podBudget']): boolean =>
  !budget || budget.gates.deleteGate || budget.gates.updateGate;

/**
 * The Kruise kind's validating handler; CloneSet's also takes DELETE for deletion protection, as
 * OpenKruise's (under the CloneSet webhook's own failurePolicy, with no label selector).
 */
function kruiseValidation(kind: KruiseKindName, deps: WebhookHandlerDeps): { handler: AdmissionHandler; del: boolean } {
  if (kind === KruiseKind.WorkloadSpread && deps.workloadSpread?.enabled === false) {
    // As OpenKruise's WorkloadSpread webhook answers with its gate off.
    return { handler: () => deny('feature-gate WorkloadSpread is not enabled'), del: false };
  }
  if (kind === KruiseKind.PodUnavailableBudget && !pubGateOn(deps.podBudget)) {
    // As OpenKruise's PodUnavailableBudget webhook answers with both of its gates off.
    return { handler: () => deny(PUB_GATES_OFF, 400, 'BadRequest'), del: false };
  }
  const validate = kruiseValidatingHandler(kind, deps.extraValidation?.[kind]);
  const protection = deps.deletionProtection;
  if (kind !== KruiseKind.CloneSet || !protection) return { handler: validate, del: false };
  const protect = deletionProtectionHandler('Workload', protection.gates, protection.inventory);
  return { handler: (request) => (request.operation === 'DELETE' ? protect(request) : validate(request)), del: true };
}

/** The Kruise kind's defaulting handler; CRRs also take what their pod says, when it can be read. */
function kruiseMutation(kind: KruiseKindName, deps: WebhookHandlerDeps): AdmissionHandler {
  const defaults = kruiseDefaultingHandler(kind);
  return kind === KruiseKind.ContainerRecreateRequest && deps.crrPods
    ? crrDefaultingHandler(deps.crrPods, defaults)
    : defaults;
}

export function webhookDefinitions(deps: WebhookHandlerDeps): WebhookDefinition[] {
  const defs: WebhookDefinition[] = [
    {
      name: 'mpod.kb.io',
      type: 'mutating',
      path: '/mutate-pod',
      rule: { apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'] },
      clusterScoped: false,
      handler: podMutatingHandler(deps.pods),
    },
  ];
  for (const kind of KRUISE_KINDS) {
    const resource = KruiseResources[kind];
    const rule = {
      apiGroups: [resource.group],
      apiVersions: servedVersions(kind),
      resources: [resource.plural],
      operations: ['CREATE', 'UPDATE'] as Operation[],
    };
    const clusterScoped = !resource.namespaced;
    const validation = kruiseValidation(kind, deps);
    if (!VALIDATING_ONLY_KINDS.has(kind)) {
      defs.push({
        name: kruiseWebhookName('mutating', kind),
        type: 'mutating',
        path: kruisePath('mutate', kind),
        rule,
        clusterScoped,
        handler: kruiseMutation(kind, deps),
      });
    }
    defs.push({
      name: kruiseWebhookName('validating', kind),
      type: 'validating',
      path: kruisePath('validate', kind),
      rule: validation.del ? { ...rule, operations: [...rule.operations, 'DELETE'] } : rule,
      clusterScoped,
      handler: validation.handler,
    });
  }
  if (deps.deletionProtection) defs.push(...protectionDefinitions(deps.deletionProtection));
  defs.push(...podValidationDefinitions(deps));
  return defs;
}
