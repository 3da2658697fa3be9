/**
 * WorkloadSpread (apps.kruise.io/v1alpha1, namespaced): spreads the pods of one workload over
 * subsets of nodes, field for field as OpenKruise v1.9 defines it in
 * apis/apps/v1alpha1/workloadspread_types.go (served and stored as v1alpha1 only).
 */
import Type, { type Static } from 'typebox';
import type { KRUISE_API_VERSION, KruiseKind } from '../constants.js';
import { int32, int64, intOrString, mapOf, opaqueObject, strictObject, stringList, time } from '../common/markers.js';
import { LabelSelectorSchema, ObjectMetaSchema } from '../common/meta.js';

/** The workload whose pods are spread. */
export const WorkloadSpreadTargetRefSchema = strictObject({
  apiVersion: Type.String({ description: 'API version of the workload, e.g. apps.kruise.io/v1alpha1.' }),
  kind: Type.String({ description: 'CloneSet, Deployment, ReplicaSet, Job or StatefulSet.' }),
  name: Type.String({ description: 'Name of the workload, in the WorkloadSpread’s namespace.' }),
});
export type WorkloadSpreadTargetRef = Static<typeof WorkloadSpreadTargetRefSchema>;

/** Only some of the workload's pods: those the selector picks, counted by the listed replica fields. */
export const WorkloadSpreadTargetFilterSchema = strictObject({
  selector: Type.Optional(LabelSelectorSchema),
  replicasPathList: Type.Optional(
    stringList({ description: 'Dotted paths to replica counts in the workload; their sum is the total.' }),
  ),
});
export type WorkloadSpreadTargetFilter = Static<typeof WorkloadSpreadTargetFilterSchema>;

/** corev1.NodeSelectorRequirement. */
export const NodeSelectorRequirementSchema = strictObject({
  key: Type.String(),
  operator: Type.String({ description: 'In, NotIn, Exists, DoesNotExist, Gt or Lt.' }),
  values: Type.Optional(stringList()),
});
export type NodeSelectorRequirement = Static<typeof NodeSelectorRequirementSchema>;

/** corev1.NodeSelectorTerm: every requirement must hold. */
export const NodeSelectorTermSchema = strictObject(
  {
    matchExpressions: Type.Optional(Type.Array(NodeSelectorRequirementSchema)),
    matchFields: Type.Optional(Type.Array(NodeSelectorRequirementSchema)),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type NodeSelectorTerm = Static<typeof NodeSelectorTermSchema>;

/** corev1.PreferredSchedulingTerm. */
export const PreferredSchedulingTermSchema = strictObject({
  weight: int32({ minimum: -2147483648, description: 'Weight 1-100.' }),
  preference: NodeSelectorTermSchema,
});
export type PreferredSchedulingTerm = Static<typeof PreferredSchedulingTermSchema>;

/** corev1.Toleration. */
export const TolerationSchema = strictObject({
  key: Type.Optional(Type.String()),
  operator: Type.Optional(Type.String({ description: 'Exists or Equal (the default).' })),
  value: Type.Optional(Type.String()),
  effect: Type.Optional(Type.String({ description: 'NoSchedule, PreferNoSchedule or NoExecute; empty for all.' })),
  tolerationSeconds: Type.Optional(int64({ minimum: Number.MIN_SAFE_INTEGER })),
});
export type Toleration = Static<typeof TolerationSchema>;

/** One group of nodes and how many pods it takes. */
export const WorkloadSpreadSubsetSchema = strictObject({
  name: Type.String({ description: 'Unique within the WorkloadSpread.' }),
  requiredNodeSelectorTerm: Type.Optional(NodeSelectorTermSchema),
  preferredNodeSelectorTerms: Type.Optional(Type.Array(PreferredSchedulingTermSchema)),
  tolerations: Type.Optional(Type.Array(TolerationSchema)),
  maxReplicas: Type.Optional(
    intOrString({ description: 'Most pods in this subset: a count or a percentage of the workload. Unset: no limit.' }),
  ),
  patch: Type.Optional(
    opaqueObject({}, { description: 'Strategic merge patch applied to the pods of this subset (metadata, spec).' }),
  ),
});
export type WorkloadSpreadSubset = Static<typeof WorkloadSpreadSubsetSchema>;

export const AdaptiveWorkloadSpreadStrategySchema = strictObject({
  disableSimulationSchedule: Type.Optional(Type.Boolean()),
  rescheduleCriticalSeconds: Type.Optional(
    int32({ minimum: -2147483648, description: 'Seconds a pod may stay unschedulable before it is rescheduled.' }),
  ),
});

export const WorkloadSpreadScheduleStrategySchema = strictObject({
  type: Type.Optional(Type.String({ description: 'Fixed (default) or Adaptive.' })),
  adaptive: Type.Optional(AdaptiveWorkloadSpreadStrategySchema),
});
export type WorkloadSpreadScheduleStrategy = Static<typeof WorkloadSpreadScheduleStrategySchema>;

export const WorkloadSpreadSpecSchema = strictObject(
  {
    targetRef: WorkloadSpreadTargetRefSchema,
    targetFilter: Type.Optional(WorkloadSpreadTargetFilterSchema),
    subsets: Type.Array(WorkloadSpreadSubsetSchema),
    scheduleStrategy: Type.Optional(WorkloadSpreadScheduleStrategySchema),
  },
  { description: 'Desired state of a WorkloadSpread.' },
);
export type WorkloadSpreadSpec = Static<typeof WorkloadSpreadSpecSchema>;

/** A subset condition; OpenKruise has one type, Schedulable. */
export const WorkloadSpreadSubsetConditionSchema = strictObject({
  type: Type.String(),
  status: Type.String(),
  lastTransitionTime: Type.Optional(time()),
  reason: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});
export type WorkloadSpreadSubsetCondition = Static<typeof WorkloadSpreadSubsetConditionSchema>;

export const WorkloadSpreadSubsetStatusSchema = strictObject({
  name: Type.String(),
  replicas: int32({ description: 'Active pods in the subset.' }),
  conditions: Type.Optional(Type.Array(WorkloadSpreadSubsetConditionSchema)),
  missingReplicas: int32({
    minimum: -1,
    description: 'Pods the subset still takes; -1 when it has no limit.',
  }),
  creatingPods: Type.Optional(
    mapOf(time(), { description: 'Pods admitted into the subset but not yet seen by the controller, with when.' }),
  ),
  deletingPods: Type.Optional(
    mapOf(time(), { description: 'Pods whose deletion was admitted but not yet seen by the controller, with when.' }),
  ),
});
export type WorkloadSpreadSubsetStatus = Static<typeof WorkloadSpreadSubsetStatusSchema>;

/**
 * A condition of the WorkloadSpread itself. OpenKruise v1.9 has none; Flotilla adds
 * TargetFound so that a missing workload is visible on the object.
 */
export const WorkloadSpreadConditionSchema = strictObject({
  type: Type.String(),
  status: Type.String(),
  lastTransitionTime: Type.Optional(time()),
  reason: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});
export type WorkloadSpreadCondition = Static<typeof WorkloadSpreadConditionSchema>;

export const WorkloadSpreadStatusSchema = strictObject(
  {
    observedGeneration: Type.Optional(int64()),
    subsetStatuses: Type.Optional(Type.Array(WorkloadSpreadSubsetStatusSchema)),
    versionedSubsetStatuses: Type.Optional(
      mapOf(Type.Array(WorkloadSpreadSubsetStatusSchema), {
        description:
          'Subset statuses per pod version (Deployment, ReplicaSet and CloneSet targets), so rolling updates keep the spread.',
      }),
    ),
    conditions: Type.Optional(Type.Array(WorkloadSpreadConditionSchema)),
  },
  { description: 'Observed state of a WorkloadSpread.' },
);
export type WorkloadSpreadStatus = Static<typeof WorkloadSpreadStatusSchema>;

export const WorkloadSpreadSchema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: WorkloadSpreadSpecSchema,
  status: Type.Optional(WorkloadSpreadStatusSchema),
});

export type WorkloadSpread = Omit<Static<typeof WorkloadSpreadSchema>, 'apiVersion' | 'kind'> & {
  apiVersion: typeof KRUISE_API_VERSION;
  kind: typeof KruiseKind.WorkloadSpread;
};
