/**
 * The resource table: where each kind Flotilla serves lives in the Kubernetes API, derived from
 * the CRD definitions so that a group, version, plural or scope is declared once. Clients (the
 * agent's runtime, the hub link, tests) build their request paths from these entries.
 */
import type { KruiseKindName } from '../kruise/constants.js';
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

/** A CRD's resource at its storage version, the one the schemas in kruise/ describe. */
export function resourceOf(definition: CrdDefinition): ResourceRef {
  const stored = definition.versions.find((v) => v.storage);
  if (!stored) throw new Error(`CRD ${definition.plural}.${definition.group} has no storage version`);
  return {
    group: definition.group,
    version: stored.name,
    plural: definition.plural,
    kind: definition.kind,
    namespaced: definition.scope === 'Namespaced',
  };
}

/** Every kind Flotilla serves, by kind name. */
export const KruiseResources = Object.fromEntries(CRD_DEFINITIONS.map((d) => [d.kind, resourceOf(d)])) as Readonly<
  Record<KruiseKindName, ResourceRef>
>;
