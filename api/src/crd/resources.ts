/**
 * The resource table: where each kind Flotilla serves lives in the Kubernetes API, derived from
 * the CRD definitions so that a group, version, plural or scope is declared once. Clients (the
 * agent's runtime, the hub link, tests) build their request paths from these entries.
 */
import { KRUISE_VERSION, type KruiseKindName } from '../kruise/constants.js';
import { CRD_DEFINITIONS, type CrdDefinition } from './definitions.js';

/** Where a resource lives in the API: enough to build its REST paths. */
export interface ResourceRef {
  /** API group; `` for the core group. */
  readonly group: string;
  readonly version: string;
  /** Lower-case plural used in paths, e.g. `pods`. */
  readonly plural: string;
  readonly kind: string;
  readonly namespaced: boolean;
}

/**
 * A CRD's resource at `version`; by default v1alpha1, the version the schemas and types in kruise/
 * describe and every Flotilla client (hub, hub link, controllers) reads and writes. Kinds OpenKruise
 * v1.9 stores as v1beta1 are converted by the apiserver (and the agent's conversion webhook).
 */
export function resourceOf(definition: CrdDefinition, version: string = KRUISE_VERSION): ResourceRef {
  if (!definition.versions.some((v) => v.name === version && v.served)) {
    throw new Error(`CRD ${definition.plural}.${definition.group} does not serve ${version}`);
  }
  return {
    group: definition.group,
    version,
    plural: definition.plural,
    kind: definition.kind,
    namespaced: definition.scope === 'Namespaced',
  };
}

/** The version the apiserver stores objects of this CRD as. */
export function storageVersionOf(definition: CrdDefinition): string {
  const stored = definition.versions.filter((v) => v.storage);
  if (stored.length !== 1) {
    throw new Error(`CRD ${definition.plural}.${definition.group} must have exactly one storage version`);
  }
  return stored[0]!.name;
}

/** Every kind Flotilla serves, by kind name. */
export const KruiseResources = Object.fromEntries(CRD_DEFINITIONS.map((d) => [d.kind, resourceOf(d)])) as Readonly<
  Record<KruiseKindName, ResourceRef>
>;

/**
 * The v1alpha1 apiVersion of a kind, the version the hub stores and the agents apply:
 * `apps.kruise.io/v1alpha1`, or `policy.kruise.io/v1alpha1` for PodUnavailableBudget.
 */
export function v1alpha1ApiVersionOf(kind: KruiseKindName): string {
  return `${KruiseResources[kind].group}/${KRUISE_VERSION}`;
}
