/**
 * The informers whose caches the webhook's handlers read, registered on the manager of every
 * replica: SidecarSets, Namespaces (their labels), the SidecarSets' revisions, the
 * patchPodMetadata whitelist ConfigMap, WorkloadSpreads and PodUnavailableBudgets.
 */
import {
  KRUISE_SYSTEM_NAMESPACE,
  LABEL_SIDECARSET_NAME,
  type PodUnavailableBudget,
  type SidecarSet,
  type WorkloadSpread,
} from '@flotilla/api';
import { sidecarSetInformer } from '../kube/sidecarset-informer.js';
import type { ControllerRevision, Namespace } from '../kube/types.js';
import type { ComponentRegistrar } from '../runtime/component.js';
import type { Informer } from '../runtime/informer.js';
import { Resources } from '../runtime/resource.js';
import type { WebhookConfig } from './config.js';
import type { ConfigMapLike, WebhookStores } from './handlers.js';

/** The stores of WebhookStores, as informers (which can also wait for their sync). */
export interface WebhookInformers extends WebhookStores {
  sidecarSets: Informer<SidecarSet>;
  namespaces: Informer<Namespace>;
  revisions: Informer<ControllerRevision>;
  configMaps: Informer<ConfigMapLike>;
  workloadSpreads: Informer<WorkloadSpread>;
  podUnavailableBudgets: Informer<PodUnavailableBudget>;
}

/** The namespace SidecarSet revisions live in (OpenKruise: the manager's, kruise-system by default). */
export function revisionNamespace(config: WebhookConfig): string {
  return config.namespace || KRUISE_SYSTEM_NAMESPACE;
}

export function webhookInformers(manager: ComponentRegistrar, config: WebhookConfig): WebhookInformers {
  return {
    sidecarSets: sidecarSetInformer(manager),
    namespaces: manager.informer<Namespace>({ resource: Resources.namespaces }),
    revisions: manager.informer<ControllerRevision>({
      resource: Resources.controllerRevisions,
      namespace: revisionNamespace(config),
      labelSelector: LABEL_SIDECARSET_NAME,
    }),
    configMaps: manager.informer<ConfigMapLike>({
      resource: Resources.configMaps,
      namespace: config.namespace,
      fieldSelector: `metadata.name=${config.whitelistConfigMap}`,
    }),
    workloadSpreads: manager.informer<WorkloadSpread>({ resource: Resources.workloadSpreads }),
    podUnavailableBudgets: manager.informer<PodUnavailableBudget>({ resource: Resources.podUnavailableBudgets }),
  };
}
