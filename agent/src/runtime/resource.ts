/** Where a resource lives in the API: enough to build its REST paths. */
export interface ResourceRef {
  /** API group; `` for the core group. */
  group: string;
  version: string;
  /** Lower-case plural used in paths, e.g. `pods`. */
  plural: string;
  kind: string;
  namespaced: boolean;
}

/** The resources the runtime itself and the built-in controllers use. */
export const Resources = {
  pods: { group: '', version: 'v1', plural: 'pods', kind: 'Pod', namespaced: true },
  configMaps: { group: '', version: 'v1', plural: 'configmaps', kind: 'ConfigMap', namespaced: true },
  events: { group: '', version: 'v1', plural: 'events', kind: 'Event', namespaced: true },
  nodes: { group: '', version: 'v1', plural: 'nodes', kind: 'Node', namespaced: false },
  persistentVolumeClaims: {
    group: '',
    version: 'v1',
    plural: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
  },
  leases: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', kind: 'Lease', namespaced: true },
  controllerRevisions: {
    group: 'apps',
    version: 'v1',
    plural: 'controllerrevisions',
    kind: 'ControllerRevision',
    namespaced: true,
  },
  cloneSets: { group: 'apps.kruise.io', version: 'v1alpha1', plural: 'clonesets', kind: 'CloneSet', namespaced: true },
  sidecarSets: {
    group: 'apps.kruise.io',
    version: 'v1alpha1',
    plural: 'sidecarsets',
    kind: 'SidecarSet',
    namespaced: false,
  },
  imagePullJobs: {
    group: 'apps.kruise.io',
    version: 'v1alpha1',
    plural: 'imagepulljobs',
    kind: 'ImagePullJob',
    namespaced: true,
  },
  nodeImages: {
    group: 'apps.kruise.io',
    version: 'v1alpha1',
    plural: 'nodeimages',
    kind: 'NodeImage',
    namespaced: false,
  },
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
