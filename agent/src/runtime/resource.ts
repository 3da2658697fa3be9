/**
 * The agent's resource table: the built-in Kubernetes resources it reads and writes, and the
 * Kruise kinds from api's resource table (derived from the CRD definitions, so their group,
 * version, plural and scope are declared there only). Every request path starts here.
 */
import { CRD_DEFINITIONS, KruiseResources, resourceOf, type ResourceRef, storageVersionOf } from '@flotilla/api';

export type { ResourceRef } from '@flotilla/api';

const core = (plural: string, kind: string, namespaced: boolean): ResourceRef => ({
  group: '',
  version: 'v1',
  plural,
  kind,
  namespaced,
});

const admission = (plural: string, kind: string): ResourceRef => ({
  group: 'admissionregistration.k8s.io',
  version: 'v1',
  plural,
  kind,
  namespaced: false,
});

function storedResourceOf(kind: string): ResourceRef {
  const definition = CRD_DEFINITIONS.find((d) => d.kind === kind)!;
  return resourceOf(definition, storageVersionOf(definition));
}

/** The resources the runtime itself and the built-in components use. */
export const Resources = {
  pods: core('pods', 'Pod', true),
  configMaps: core('configmaps', 'ConfigMap', true),
  secrets: core('secrets', 'Secret', true),
  events: core('events', 'Event', true),
  namespaces: core('namespaces', 'Namespace', false),
  nodes: core('nodes', 'Node', false),
  persistentVolumeClaims: core('persistentvolumeclaims', 'PersistentVolumeClaim', true),
  leases: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true },
  controllerRevisions: {
    group: 'apps',
    version: 'v1',
    plural: 'controllerrevisions',
    kind: 'ControllerRevision',
    namespaced: true,
  },
  mutatingWebhookConfigurations: admission('mutatingwebhookconfigurations', 'MutatingWebhookConfiguration'),
  validatingWebhookConfigurations: admission('validatingwebhookconfigurations', 'ValidatingWebhookConfiguration'),
  cloneSets: KruiseResources.CloneSet,
  sidecarSets: KruiseResources.SidecarSet,
  /**
   * SidecarSets at their storage version: read there (and converted in process) so that the
   * agent's own caches never wait for the conversion webhook the agent itself serves.
   */
  sidecarSetsStored: storedResourceOf('SidecarSet'),
  customResourceDefinitions: {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
  },
  imagePullJobs: KruiseResources.ImagePullJob,
  nodeImages: KruiseResources.NodeImage,
  broadcastJobs: KruiseResources.BroadcastJob,
  workloadSpreads: KruiseResources.WorkloadSpread,
  /** Advanced StatefulSets at their storage version (v1beta1), which their controller reads and writes. */
  statefulSets: storedResourceOf('StatefulSet'),
  /** Advanced DaemonSets at their storage version (v1beta1), which their controller reads and writes. */
  daemonSets: storedResourceOf('DaemonSet'),
  containerRecreateRequests: KruiseResources.ContainerRecreateRequest,
  podUnavailableBudgets: KruiseResources.PodUnavailableBudget,
} as const satisfies Record<string, ResourceRef>;

/** `v1` for the core group, `group/version` otherwise. */
export function apiVersionOf(ref: ResourceRef): string {
  return ref.group ? `${ref.group}/${ref.version}` : ref.version;
}

/**
 * The REST path of a collection (no name) or an object, optionally of a subresource such as
 * `status`. `namespace` is ignored for cluster-scoped resources; leaving it out for a namespaced
 * resource addresses all namespaces (list and watch only).
 */
export function resourcePath(ref: ResourceRef, namespace?: string, name?: string, subresource?: string): string {
  const root = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
  const ns = ref.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const obj = name ? `/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}` : '';
  return `${root}${ns}/${ref.plural}${obj}`;
}
