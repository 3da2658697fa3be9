/**
 * What the pod webhook records in a WorkloadSpread's status, as OpenKruise v1.9's
 * updateSubsetForPod: on CREATE the pod takes the first subset still missing pods and is listed
 * under creatingPods (missingReplicas one lower); on DELETE/eviction it is listed under
 * deletingPods of its subset (missingReplicas one higher). Statuses are kept per pod version
 * (versionedSubsetStatuses) and a version without statuses starts from the spec's limits. Pure:
 * the caller reads the WorkloadSpread, applies the returned status and retries on conflicts.
 */
import type { WorkloadSpread, WorkloadSpreadStatus, WorkloadSpreadSubsetStatus } from '@flotilla/api';
import {
  initialSubsetStatuses,
  type MatchedSubset,
  podVersion,
  recordedSubset,
  type SpreadPod,
  suitableSubset,
} from './subsets.js';

export interface Admitted {
  /** The subset the pod goes to (CREATE) or leaves (DELETE); undefined when none fits. */
  subset?: string;
  /** The status to write; undefined when nothing changes. */
  status?: WorkloadSpreadStatus;
}

function withVersion(
  ws: WorkloadSpread,
  version: string,
  replicas: number,
): { status: WorkloadSpreadStatus; statuses: WorkloadSpreadSubsetStatus[] } {
  const status = structuredClone(ws.status ?? {});
  const versioned = (status.versionedSubsetStatuses ??= {});
  let statuses = versioned[version];
  if (!statuses || statuses.length === 0) {
    statuses = initialSubsetStatuses(ws, replicas);
    versioned[version] = statuses;
  }
  return { status, statuses };
}

/**
 * A pod being created: its subset and the status recording it. `key` is the pod's name, or, for a
 * pod with only generateName, a fresh uid the caller also writes into the pod's annotation.
 * `replicas` matters only when a subset's maxReplicas is a percentage.
 */
export function admitCreation(
  ws: WorkloadSpread,
  pod: SpreadPod,
  key: string,
  replicas: number,
  now: string,
): Admitted {
  const subsets = ws.spec.subsets;
  if (subsets.length === 1 && subsets[0]!.maxReplicas === undefined) return { subset: subsets[0]!.name };
  const { status, statuses } = withVersion(ws, podVersion(pod), replicas);
  if (pod.metadata.name) {
    const recorded = recordedSubset(statuses, pod.metadata.name);
    if (recorded) return { subset: recorded.name };
  }
  const chosen = suitableSubset(statuses);
  if (!chosen) return {};
  if (chosen.missingReplicas === -1) return { subset: chosen.name };
  chosen.creatingPods = { ...chosen.creatingPods, [key]: now };
  if (chosen.missingReplicas > 0) chosen.missingReplicas--;
  return { subset: chosen.name, status };
}

/**
 * A pod of `matched` subset being deleted or evicted: the status recording it. A pod whose
 * creation is still recorded (the controller has not counted it yet) gives its slot back by
 * dropping that record instead: were it also listed as deleting, the controller, which drops
 * creation records only for pods it lists, would hold its slot until the creation expired.
 */
export function admitDeletion(
  ws: WorkloadSpread,
  pod: SpreadPod,
  matched: MatchedSubset,
  replicas: number,
  now: string,
): Admitted {
  const { status, statuses } = withVersion(ws, podVersion(pod), replicas);
  const name = pod.metadata.name;
  const subset = statuses.find((s) => s.name === matched.subset);
  if (!subset || Object.hasOwn(subset.deletingPods ?? {}, name)) return {};
  if (subset.missingReplicas === -1) return { subset: subset.name };
  const creation = matched.uid || name;
  if (Object.hasOwn(subset.creatingPods ?? {}, creation)) {
    const { [creation]: _dropped, ...creating } = subset.creatingPods!;
    if (Object.keys(creating).length > 0) subset.creatingPods = creating;
    else delete subset.creatingPods;
  } else {
    subset.deletingPods = { ...subset.deletingPods, [name]: now };
  }
  subset.missingReplicas++;
  return { subset: subset.name, status };
}
