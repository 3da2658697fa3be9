/**
 * Renders the object a cluster receives: the revision's spec with that cluster's override merged
 * in, plus the labels and annotations that mark it as managed by the hub. The desired generation
 * is not part of the manifest (the agent stamps it), so an unchanged manifest hashes the same.
 */
import {
  CLUSTER_ANNOTATION,
  v1alpha1ApiVersionOf,
  MANAGED_BY_HUB,
  MANAGED_BY_LABEL,
  REVISION_ANNOTATION,
  WORKLOAD_ANNOTATION,
  type Overrides,
  type WorkloadKind,
  type WorkloadMetadata,
} from '@flotilla/api';
import { applyMergePatch } from './merge-patch.js';

export interface WorkloadIdentity {
  id: string;
  kind: WorkloadKind;
  name: string;
  /** '' for cluster-scoped kinds. */
  namespace: string;
}

export interface RevisionContent {
  revision: number;
  metadata: WorkloadMetadata;
  spec: Record<string, unknown>;
  overrides: Overrides;
}

/**
 * The spec a given cluster gets: the template with that cluster's merge patch applied. Only an
 * own key is an override: `overrides.constructor` of a cluster named "constructor" (a valid
 * name) would otherwise find Object.prototype's constructor and replace the spec with nothing.
 */
export function specForCluster(content: Pick<RevisionContent, 'spec' | 'overrides'>, cluster: string): unknown {
  return Object.hasOwn(content.overrides, cluster)
    ? applyMergePatch(content.spec, content.overrides[cluster])
    : content.spec;
}

/** Maps a field path on the spec to the same field in a cluster's override (`spec.x` → `overrides.c.x`). */
export function overrideFieldPath(cluster: string, path: string): string {
  const base = `overrides.${cluster}`;
  if (path === 'spec') return base;
  if (path.startsWith('spec.') || path.startsWith('spec[')) return `${base}${path.slice(4)}`;
  return `${base}.${path}`;
}

/** A Kruise object as the template describes it, before any hub markers (used for validation). */
export function templateObject(
  workload: Omit<WorkloadIdentity, 'id'>,
  metadata: WorkloadMetadata,
  spec: unknown,
): Record<string, unknown> {
  return {
    apiVersion: v1alpha1ApiVersionOf(workload.kind),
    kind: workload.kind,
    metadata: {
      name: workload.name,
      ...(workload.namespace ? { namespace: workload.namespace } : {}),
      ...(metadata.labels ? { labels: metadata.labels } : {}),
      ...(metadata.annotations ? { annotations: metadata.annotations } : {}),
    },
    spec,
  };
}

/** The full manifest for one cluster, stamped as managed by the hub. */
export function renderManifest(
  workload: WorkloadIdentity,
  content: RevisionContent,
  cluster: string,
): Record<string, unknown> {
  const metadata: Record<string, unknown> = {
    name: workload.name,
    ...(workload.namespace ? { namespace: workload.namespace } : {}),
    labels: { ...content.metadata.labels, [MANAGED_BY_LABEL]: MANAGED_BY_HUB },
    annotations: {
      ...content.metadata.annotations,
      [WORKLOAD_ANNOTATION]: workload.id,
      [REVISION_ANNOTATION]: String(content.revision),
      [CLUSTER_ANNOTATION]: cluster,
    },
  };
  return {
    apiVersion: v1alpha1ApiVersionOf(workload.kind),
    kind: workload.kind,
    metadata,
    spec: specForCluster(content, cluster),
  };
}
