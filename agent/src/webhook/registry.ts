/**
 * Every webhook the agent serves: its path (OpenKruise's paths), the name it has in the webhook
 * configuration, what it intercepts, and its handler. The server and the configurations are both
 * built from this one list, so a path is served exactly when it is registered.
 */
import { CRD_DEFINITIONS, KRUISE_KINDS, KruiseKind, KruiseResources, type KruiseKindName } from '@flotilla/api';
import type { AdmissionHandler, Operation } from './admission/types.js';
import { kruiseDefaultingHandler } from './mutating/kruise-defaults.js';
import { podMutatingHandler, type PodMutationSources } from './mutating/pod.js';
import { kruiseValidatingHandler, type ExtraValidation } from './validating/kruise-validation.js';

export interface WebhookDefinition {
  /** Name in the configuration, e.g. `mpod.kb.io`. */
  name: string;
  type: 'mutating' | 'validating';
  path: string;
  rule: { apiGroups: string[]; apiVersions: string[]; resources: string[]; operations: Operation[] };
  /** Cluster-scoped resources are not filtered by namespaceSelector. */
  clusterScoped: boolean;
  handler: AdmissionHandler;
}

export interface WebhookHandlerDeps {
  pods: PodMutationSources;
  /** Cluster-dependent validation per kind (SidecarSet name clashes, patch whitelist). */
  extraValidation?: Partial<Record<KruiseKindName, ExtraValidation>>;
}

/** The API versions the kind's CRD serves; its webhooks take requests at every one of them. */
export function servedVersions(kind: KruiseKindName): string[] {
  const definition = CRD_DEFINITIONS.find((d) => d.kind === kind)!;
  return definition.versions.filter((v) => v.served).map((v) => v.name);
}

/**
 * OpenKruise v1.9's path: `/mutate-apps-kruise-io-v1alpha1-cloneset` for a kind served at one
 * version, `/mutate-apps-kruise-io-sidecarset` for the kinds served at both; validating alike.
 */
export function kruisePath(type: 'mutate' | 'validate', kind: KruiseKindName): string {
  const { group } = KruiseResources[kind];
  const versions = servedVersions(kind);
  const version = versions.length === 1 ? `${versions[0]}-` : '';
  return `/${type}-${group.replace(/\./g, '-')}-${version}${kind.toLowerCase()}`;
}

/** OpenKruise v1.9's configuration name: `mcloneset.kb.io`; ImagePullJob's end in `-v1beta1`. */
export function kruiseWebhookName(type: 'mutating' | 'validating', kind: KruiseKindName): string {
  const suffix = kind === KruiseKind.ImagePullJob ? '-v1beta1' : '';
  return `${type === 'mutating' ? 'm' : 'v'}${kind.toLowerCase()}${suffix}.kb.io`;
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
    defs.push(
      {
        name: kruiseWebhookName('mutating', kind),
        type: 'mutating',
        path: kruisePath('mutate', kind),
        rule,
        clusterScoped,
        handler: kruiseDefaultingHandler(kind),
      },
      {
        name: kruiseWebhookName('validating', kind),
        type: 'validating',
        path: kruisePath('validate', kind),
        rule,
        clusterScoped,
        handler: kruiseValidatingHandler(kind, deps.extraValidation?.[kind]),
      },
    );
  }
  return defs;
}
