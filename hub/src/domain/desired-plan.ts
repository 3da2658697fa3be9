/**
 * Decides which per-cluster desired rows change when a workload, its placement or a cluster's
 * labels/state change. Pure: the caller loads the inputs inside a transaction and writes the
 * result (plus one outbox row per change) in the same transaction.
 */
import { scaledValue, type LabelSelector } from '@flotilla/api';
import { contentHash } from './canonical-json.js';
import { matchesSelector, type Labels } from './label-selector.js';
import { renderManifest, type RevisionContent, type WorkloadIdentity } from './manifest.js';

export interface ClusterView {
  name: string;
  labels: Labels;
  /** Only accepted clusters receive workloads. */
  accepted: boolean;
}

/** The current desired row of the workload's object in one cluster. */
export interface CurrentDesired {
  generation: number;
  deleted: boolean;
  manifestHash: string;
}

/** What one cluster is pinned to by a rollout: a revision and an optional partition (withPartition). */
export interface PinnedContent {
  content: RevisionContent;
  /** The partition of an in-cluster canary step; absent for a full update. */
  partition?: number | string;
}

export interface LiveWorkload {
  identity: WorkloadIdentity;
  /** The revision every targeted cluster gets unless `pinned` names it. */
  content: RevisionContent;
  selector: LabelSelector;
  /** Clusters a rollout holds at another revision (or partition), by name. */
  pinned?: ReadonlyMap<string, PinnedContent>;
}

export interface DesiredChange {
  cluster: string;
  /** Previous generation + 1: the per-object sequence agents and status reports order by. */
  generation: number;
  revision: number;
  deleted: boolean;
  manifest: Record<string, unknown> | null;
  manifestHash: string;
}

export interface PlanInput {
  /** Identity of the object (always known, also for a deleted workload). */
  identity: WorkloadIdentity;
  /** undefined when the workload is deleted: every live row becomes a tombstone. */
  live: LiveWorkload | undefined;
  /** Clusters in scope: a workload change passes all, a cluster change passes that one. */
  clusters: readonly ClusterView[];
  /** Current rows of this object, by cluster name (only clusters in scope matter). */
  current: ReadonlyMap<string, CurrentDesired>;
  /** Revision stamped on tombstones, so a report about them sorts after the last live one. */
  lastRevision: number;
}

export const TOMBSTONE_HASH = 'tombstone';

function targets(live: LiveWorkload | undefined, cluster: ClusterView): boolean {
  return live !== undefined && cluster.accepted && matchesSelector(cluster.labels, live.selector);
}

/** The kinds whose partition an in-cluster canary step sets (withPartition); others have none. */
export const PARTITIONED_KINDS: ReadonlySet<string> = new Set(['CloneSet', 'StatefulSet', 'DaemonSet']);

/**
 * Sets the partition of an in-cluster canary step: spec.updateStrategy.partition of a CloneSet,
 * spec.updateStrategy.rollingUpdate.partition of an Advanced StatefulSet (a count there, so a
 * percentage is resolved against spec.replicas, rounded up as CloneSet's is) and of an Advanced
 * DaemonSet (an int-or-percent there, so it goes as it is; the controller takes a percentage of
 * the nodes that should run the pod, rounded down).
 */
function withPartition(
  manifest: Record<string, unknown>,
  partition: number | string | undefined,
): Record<string, unknown> {
  if (partition === undefined) return manifest;
  const spec = (manifest.spec ?? {}) as Record<string, unknown>;
  const strategy = (spec.updateStrategy ?? {}) as Record<string, unknown>;
  if (manifest.kind === 'CloneSet') {
    return { ...manifest, spec: { ...spec, updateStrategy: { ...strategy, partition } } };
  }
  if (manifest.kind === 'DaemonSet') {
    const rollingUpdate = { ...((strategy.rollingUpdate ?? {}) as Record<string, unknown>), partition };
    return { ...manifest, spec: { ...spec, updateStrategy: { ...strategy, rollingUpdate } } };
  }
  if (manifest.kind !== 'StatefulSet') return manifest;
  const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
  const count = scaledValue(partition, replicas, true) ?? 0;
  const rollingUpdate = { ...((strategy.rollingUpdate ?? {}) as Record<string, unknown>), partition: count };
  return { ...manifest, spec: { ...spec, updateStrategy: { ...strategy, rollingUpdate } } };
}

/** Returns the changes in cluster-name order (a stable order keeps outbox ids predictable). */
export function planDesired(input: PlanInput): DesiredChange[] {
  const sorted = [...input.clusters].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return sorted.flatMap((cluster) => {
    const current = input.current.get(cluster.name);
    const change =
      input.live && targets(input.live, cluster)
        ? liveChange(input.live, cluster.name, current)
        : tombstoneChange(input, cluster.name, current);
    return change ? [change] : [];
  });
}

/** The cluster's manifest as it should be now; undefined when the current row already has it. */
function liveChange(
  live: LiveWorkload,
  cluster: string,
  current: CurrentDesired | undefined,
): DesiredChange | undefined {
  const pin = live.pinned?.get(cluster);
  const content = pin?.content ?? live.content;
  const manifest = withPartition(renderManifest(live.identity, content, cluster), pin?.partition);
  const manifestHash = contentHash(manifest);
  if (current && !current.deleted && current.manifestHash === manifestHash) return undefined;
  return {
    cluster,
    generation: (current?.generation ?? 0) + 1,
    revision: content.revision,
    deleted: false,
    manifest,
    manifestHash,
  };
}

/** A tombstone for a cluster no longer targeted; undefined when it has no live row. */
function tombstoneChange(
  input: PlanInput,
  cluster: string,
  current: CurrentDesired | undefined,
): DesiredChange | undefined {
  if (!current || current.deleted) return undefined;
  return {
    cluster,
    generation: current.generation + 1,
    revision: input.live?.content.revision ?? input.lastRevision,
    deleted: true,
    manifest: null,
    manifestHash: TOMBSTONE_HASH,
  };
}
