/**
 * Advanced DaemonSet (apps.kruise.io, namespaced), field for field as OpenKruise v1.9 defines it in
 * apis/apps/v1beta1/daemonset_types.go (the storage version) and apis/apps/v1alpha1/daemonset_types.go.
 * The versions differ in three places: v1alpha1 also takes the deprecated rollingUpdateType
 * `Surging`, only v1beta1 has `spec.scaleStrategy` (v1alpha1 says it with an annotation), and the
 * update revision is `status.daemonSetHash` at v1alpha1, `status.updateRevision` at v1beta1.
 */
import Type, { type Static, type TProperties } from 'typebox';
import type { KRUISE_API_VERSION, KRUISE_V1BETA1_API_VERSION, KruiseKind } from '../constants.js';
import { int32, int64, intOrString, strictObject, time } from '../common/markers.js';
import { LabelSelectorSchema, ObjectMetaSchema } from '../common/meta.js';
import { PodTemplateSpecSchema, type PodTemplateSpec } from '../common/pod.js';
import { LifecycleSchema } from '../common/strategy.js';

export const DaemonSetRollingUpdateSchema = strictObject({
  rollingUpdateType: Type.Optional(
    Type.String({
      description:
        'Standard (default): delete and recreate; InPlaceIfPossible: update images in place when the pod has the InPlaceUpdateReady gate. v1alpha1 also takes the deprecated Surging.',
    }),
  ),
  maxUnavailable: Type.Optional(
    intOrString({ description: 'Most nodes whose pod is unavailable during the update: a count or a percentage.' }),
  ),
  maxSurge: Type.Optional(
    intOrString({ description: 'Most nodes running an extra new pod next to the old one during the update.' }),
  ),
  selector: Type.Optional(LabelSelectorSchema),
  partition: Type.Optional(
    intOrString({ description: 'Nodes (count or percentage of desired, rounded down) kept on the old revision.' }),
  ),
  paused: Type.Optional(Type.Boolean({ description: 'Stop updating pods; creating and deleting goes on.' })),
});
export type DaemonSetRollingUpdate = Static<typeof DaemonSetRollingUpdateSchema>;

export const DaemonSetUpdateStrategySchema = strictObject({
  type: Type.Optional(Type.String({ description: 'RollingUpdate (default) or OnDelete.' })),
  rollingUpdate: Type.Optional(DaemonSetRollingUpdateSchema),
});
export type DaemonSetUpdateStrategy = Static<typeof DaemonSetUpdateStrategySchema>;

export const DaemonSetScaleStrategySchema = strictObject({
  partitionedScaling: Type.Optional(
    Type.Boolean({ description: 'With a partition, create pods on new nodes only up to desired minus partition.' }),
  ),
});

const specProperties = {
  selector: LabelSelectorSchema,
  template: PodTemplateSpecSchema,
  updateStrategy: Type.Optional(DaemonSetUpdateStrategySchema),
  minReadySeconds: Type.Optional(int32({ description: 'Seconds a pod must be ready to count as available.' })),
  burstReplicas: Type.Optional(intOrString({ description: 'Most pods created or deleted in one sync. Default 250.' })),
  revisionHistoryLimit: Type.Optional(int32({ description: 'Old revisions kept. Default 10.' })),
  lifecycle: Type.Optional(LifecycleSchema),
} satisfies TProperties;

export const DaemonSetSpecSchema = strictObject(specProperties, { description: 'Desired state of a DaemonSet.' });
export const DaemonSetV1beta1SpecSchema = strictObject(
  { ...specProperties, scaleStrategy: Type.Optional(DaemonSetScaleStrategySchema) },
  { description: 'Desired state of a DaemonSet.' },
);

/** A condition of apps/v1 DaemonSetCondition's shape. */
export const DaemonSetConditionSchema = strictObject({
  type: Type.String(),
  status: Type.String(),
  lastTransitionTime: Type.Optional(time()),
  reason: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});
export type DaemonSetCondition = Static<typeof DaemonSetConditionSchema>;

const statusProperties = {
  currentNumberScheduled: int32({ description: 'Nodes running at least one daemon pod that should.' }),
  numberMisscheduled: int32({ description: 'Nodes running a daemon pod that should not.' }),
  desiredNumberScheduled: int32({ description: 'Nodes that should run the daemon pod.' }),
  numberReady: int32({ description: 'Nodes whose daemon pod is ready.' }),
  observedGeneration: Type.Optional(int64()),
  updatedNumberScheduled: int32({ description: 'Nodes running the updated daemon pod.' }),
  numberAvailable: Type.Optional(int32({ description: 'Nodes whose daemon pod is available.' })),
  numberUnavailable: Type.Optional(int32({ description: 'Nodes that should run an available pod and do not.' })),
  collisionCount: Type.Optional(int32()),
  conditions: Type.Optional(Type.Array(DaemonSetConditionSchema)),
} satisfies TProperties;

export const DaemonSetStatusSchema = strictObject(
  { ...statusProperties, daemonSetHash: Type.Optional(Type.String({ description: 'The update revision hash.' })) },
  { description: 'Observed state of a DaemonSet.' },
);
export const DaemonSetV1beta1StatusSchema = strictObject(
  { ...statusProperties, updateRevision: Type.Optional(Type.String({ description: 'The update revision hash.' })) },
  { description: 'Observed state of a DaemonSet.' },
);
export type DaemonSetV1beta1Status = Static<typeof DaemonSetV1beta1StatusSchema>;

export const DaemonSetSchema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: DaemonSetSpecSchema,
  status: Type.Optional(DaemonSetStatusSchema),
});

export const DaemonSetV1beta1Schema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: DaemonSetV1beta1SpecSchema,
  status: Type.Optional(DaemonSetV1beta1StatusSchema),
});

export type DaemonSetSpec = Omit<Static<typeof DaemonSetSpecSchema>, 'template'> & { template: PodTemplateSpec };
export type DaemonSetV1beta1Spec = Omit<Static<typeof DaemonSetV1beta1SpecSchema>, 'template'> & {
  template: PodTemplateSpec;
};

/** A v1alpha1 DaemonSet: what validation and defaulting read (v1beta1 input is converted first). */
export type DaemonSet = Omit<Static<typeof DaemonSetSchema>, 'apiVersion' | 'kind' | 'spec'> & {
  apiVersion: typeof KRUISE_API_VERSION;
  kind: typeof KruiseKind.DaemonSet;
  spec: DaemonSetSpec;
};

/** A v1beta1 DaemonSet: the storage version, and what the agent's controller reads and writes. */
export type DaemonSetV1beta1 = Omit<Static<typeof DaemonSetV1beta1Schema>, 'apiVersion' | 'kind' | 'spec'> & {
  apiVersion: typeof KRUISE_V1BETA1_API_VERSION;
  kind: typeof KruiseKind.DaemonSet;
  spec: DaemonSetV1beta1Spec;
};
