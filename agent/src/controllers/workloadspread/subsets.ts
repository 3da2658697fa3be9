/**
 * Subset arithmetic shared by the pod webhook and the controller, as OpenKruise v1.9 does it
 * (pkg/util/workloadspread, pkg/controller/workloadspread): a subset's limit from maxReplicas and
 * the workload's replicas, the status a version starts from, and the subset a new pod goes to.
 * Pure: plain values in, plain values out.
 */
import {
  ANNOTATION_MATCHED_WORKLOADSPREAD,
  WORKLOADSPREAD_SUBSET_SCHEDULABLE,
  WORKLOADSPREAD_VERSION_IGNORED,
  type WorkloadSpread,
  type WorkloadSpreadSubset,
  type WorkloadSpreadSubsetStatus,
} from '@flotilla/api';
import { scaledValue } from '@flotilla/api';

/** What a pod's matched-workloadspread annotation says. */
export interface MatchedSubset {
  name: string;
  subset: string;
  /** Set when the pod had no name at admission: the key its creation was recorded under. */
  uid?: string;
}

/** The pod fields the subset logic reads. */
export interface SpreadPod {
  metadata: {
    name: string;
    namespace?: string;
    generateName?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    creationTimestamp?: string;
    ownerReferences?: { apiVersion: string; kind: string; name: string; uid?: string; controller?: boolean }[];
  };
  spec?: { nodeName?: string };
  status?: {
    phase?: string;
    conditions?: { type: string; status: string; reason?: string; lastTransitionTime?: string }[];
  };
}

/** Deployment's pod-template-hash and the controller revision hash, the labels versions come from. */
const LABEL_POD_TEMPLATE_HASH = 'pod-template-hash';
const LABEL_CONTROLLER_REVISION_HASH = 'controller-revision-hash';

/** Not being deleted and not finished (kubecontroller.IsPodActive). */
export function isPodActive(pod: SpreadPod): boolean {
  return !pod.metadata.deletionTimestamp && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

/** The pod's subset annotation, or undefined when absent or unreadable. */
export function matchedSubsetOf(pod: SpreadPod): MatchedSubset | undefined {
  const text = pod.metadata.annotations?.[ANNOTATION_MATCHED_WORKLOADSPREAD];
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<MatchedSubset> | null;
    if (!parsed || typeof parsed.name !== 'string' || typeof parsed.subset !== 'string') return undefined;
    return { name: parsed.name, subset: parsed.subset, ...(parsed.uid ? { uid: parsed.uid } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * The subset's limit against `replicas`: -1 for no limit; a percentage rounded up (v1.9's
 * GetScaledValueFromIntOrPercent with roundUp). Undefined when maxReplicas cannot be read.
 */
export function subsetLimit(subset: WorkloadSpreadSubset, replicas: number): number | undefined {
  if (subset.maxReplicas === undefined) return -1;
  const value = scaledValue(subset.maxReplicas, replicas, true);
  return value === undefined || value < 0 ? undefined : value;
}

/** Whether any subset's maxReplicas is a percentage (only then do replicas matter). */
export function hasPercentSubset(ws: WorkloadSpread): boolean {
  return ws.spec.subsets.some((s) => typeof s.maxReplicas === 'string');
}

/** Owner kinds whose pods get versioned statuses (v1.9's --ws-enabled-versioned-status, plus CloneSet). */
const VERSIONED_OWNERS = new Set(['ReplicaSet', 'Deployment', 'CloneSet']);

/** The short hash of a revision name: the text after its last '-'. */
export function shortHash(revision: string): string {
  return revision.slice(revision.lastIndexOf('-') + 1);
}

/**
 * Versioned statuses (OpenKruise's v1.6 fix for rolling updates): each pod version gets its own
 * subset statuses, so the new pods of a rolling update (surge pods included) are spread afresh
 * instead of landing wherever the old pods left room. v1.9 does this by default for Deployments
 * and ReplicaSets (pod-template-hash); Flotilla also turns it on for CloneSets (the short
 * controller-revision-hash, as v1.9 does when the flag names cloneset). Other workloads use one
 * version, "versionIgnored".
 */
export function podVersion(pod: SpreadPod): string {
  const owner = pod.metadata.ownerReferences?.find((r) => r.controller);
  if (!owner || !VERSIONED_OWNERS.has(owner.kind)) return WORKLOADSPREAD_VERSION_IGNORED;
  const labels = pod.metadata.labels ?? {};
  if (labels[LABEL_POD_TEMPLATE_HASH]) return labels[LABEL_POD_TEMPLATE_HASH];
  const revision = labels[LABEL_CONTROLLER_REVISION_HASH];
  return revision ? shortHash(revision) : WORKLOADSPREAD_VERSION_IGNORED;
}

/** The statuses a version starts from: every subset with its whole limit missing. */
export function initialSubsetStatuses(ws: WorkloadSpread, replicas: number): WorkloadSpreadSubsetStatus[] {
  return ws.spec.subsets.map((subset) => ({
    name: subset.name,
    replicas: 0,
    missingReplicas: subsetLimit(subset, replicas) ?? 0,
  }));
}

function schedulable(status: WorkloadSpreadSubsetStatus): boolean {
  return !(status.conditions ?? []).some((c) => c.type === WORKLOADSPREAD_SUBSET_SCHEDULABLE && c.status === 'False');
}

/** The first schedulable subset still missing pods (or unlimited), in spec order. */
export function suitableSubset(
  statuses: readonly WorkloadSpreadSubsetStatus[],
): WorkloadSpreadSubsetStatus | undefined {
  return statuses.find((s) => schedulable(s) && (s.missingReplicas > 0 || s.missingReplicas === -1));
}

/** Whether a pod (by name or creation key) is already recorded as creating or deleting. */
export function recordedSubset(
  statuses: readonly WorkloadSpreadSubsetStatus[],
  key: string,
): WorkloadSpreadSubsetStatus | undefined {
  return statuses.find((s) => Object.hasOwn(s.creatingPods ?? {}, key) || Object.hasOwn(s.deletingPods ?? {}, key));
}
