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

/**
 * Versioned statuses apply to Deployment and ReplicaSet pods (v1.9's default for
 * ws-enabled-versioned-status): each pod-template-hash gets its own subset statuses, so a rolling
 * update spreads its new pods afresh. Other workloads use one version, "versionIgnored".
 */
export function podVersion(pod: SpreadPod): string {
  const owner = pod.metadata.ownerReferences?.find((r) => r.controller);
  const versioned = owner?.kind === 'ReplicaSet' || owner?.kind === 'Deployment';
  if (!versioned) return WORKLOADSPREAD_VERSION_IGNORED;
  return pod.metadata.labels?.[LABEL_POD_TEMPLATE_HASH] ?? WORKLOADSPREAD_VERSION_IGNORED;
}

/** Whether the WorkloadSpread's target keeps versioned statuses. */
export function targetIsVersioned(ws: WorkloadSpread): boolean {
  const kind = ws.spec.targetRef.kind;
  return kind === 'Deployment' || kind === 'ReplicaSet';
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
