/** Names OpenKruise v1.9 uses for WorkloadSpread on pods and in status; Flotilla writes the same. */

/** On a pod: JSON {name, subset, uid?} of the WorkloadSpread subset it was placed in. */
export const ANNOTATION_MATCHED_WORKLOADSPREAD = 'apps.kruise.io/matched-workloadspread';
/** On a WorkloadSpread: "true" stops the controller from patching subset metadata onto existing pods. */
export const ANNOTATION_WORKLOADSPREAD_IGNORE_PATCH_EXISTING =
  'workloadspread.kruise.io/ignore-patch-existing-pods-metadata';
/** Deletion cost steps: a subset's in-limit pods get +100 × (subsets − index), its surplus −100 × (index + 1). */
export const WORKLOADSPREAD_DELETION_COST_STEP = 100;
/** The version key of pods whose workload keeps no versioned status (all but Deployment, ReplicaSet, CloneSet). */
export const WORKLOADSPREAD_VERSION_IGNORED = 'versionIgnored';
/** Status key for pods that match no subset. */
export const WORKLOADSPREAD_FAKE_SUBSET = 'kruise.io/workloadspread-fake-subset-name';
/** Subset condition type for Adaptive scheduling. */
export const WORKLOADSPREAD_SUBSET_SCHEDULABLE = 'Schedulable';
/** Flotilla's WorkloadSpread condition: whether the target workload exists. */
export const WORKLOADSPREAD_CONDITION_TARGET_FOUND = 'TargetFound';
/** How long an admitted creation / deletion waits to be seen before it is dropped (v1.9's timeouts). */
export const WORKLOADSPREAD_CREATE_TIMEOUT_MS = 30_000;
export const WORKLOADSPREAD_DELETE_TIMEOUT_MS = 15_000;
/** Upper bound of the Adaptive reschedule window across subsets (v1.9: 300 s minus 5). */
export const WORKLOADSPREAD_MAX_SCHEDULE_FAILED_SECONDS = 295;
export const WORKLOADSPREAD_SCHEDULE_TYPES = ['Fixed', 'Adaptive'] as const;

/** A target kind and the API groups it may come from. */
export interface WorkloadSpreadTargetKind {
  readonly kind: string;
  readonly groups: readonly string[];
}

/** The workload kinds v1.9 spreads (without a custom white list). */
export const WORKLOADSPREAD_TARGET_KINDS: readonly WorkloadSpreadTargetKind[] = [
  { kind: 'CloneSet', groups: ['apps.kruise.io'] },
  { kind: 'Deployment', groups: ['apps'] },
  { kind: 'ReplicaSet', groups: ['apps'] },
  { kind: 'Job', groups: ['batch'] },
  { kind: 'StatefulSet', groups: ['apps', 'apps.kruise.io'] },
];

/** The group of an apiVersion: the part before '/', or '' for the core group. */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}
