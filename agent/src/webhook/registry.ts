/**
 * Every webhook the agent serves: its path (OpenKruise's paths), the name it has in the webhook
 * configuration, what it intercepts, and its handler. The server and the configurations are both
 * built from this one list, so a path is served exactly when it is registered.
 */
import { KRUISE_KINDS, KruiseResources, type KruiseKindName } from '@flotilla/api';
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

/** `/mutate-apps-kruise-io-v1alpha1-cloneset` and its validating twin. */
export function kruisePath(type: 'mutate' | 'validate', kind: KruiseKindName): string {
  const { group, version } = KruiseResources[kind];
  return `/${type}-${group.replace(/\./g, '-')}-${version}-${kind.toLowerCase()}`;
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
      apiVersions: [resource.version],
      resources: [resource.plural],
      operations: ['CREATE', 'UPDATE'] as Operation[],
    };
    const clusterScoped = !resource.namespaced;
    const lower = kind.toLowerCase();
    defs.push(
      {
        name: `m${lower}.kb.io`,
        type: 'mutating',
        path: kruisePath('mutate', kind),
        rule,
        clusterScoped,
        handler: kruiseDefaultingHandler(kind),
      },
      {
        name: `v${lower}.kb.io`,
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
