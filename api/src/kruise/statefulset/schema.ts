/**
 * Advanced StatefulSet (apps.kruise.io, namespaced), field for field as OpenKruise v1.9 defines it
 * in apis/apps/v1beta1/statefulset_types.go (storage version) and apis/apps/v1alpha1 (served,
 * converted through the webhook). v1alpha1 is v1beta1 without reserveOrdinals, lifecycle,
 * scaleStrategy, persistentVolumeClaimRetentionPolicy, ordinals, volumeClaimUpdateStrategy and a
 * few status counters, so the v1alpha1 schema is declared from the same pieces.
 */
import Type, { type Static } from 'typebox';
import type { KRUISE_V1BETA1_API_VERSION, KruiseKind } from '../constants.js';
import { int32, int64, intOrString, strictObject, time } from '../common/markers.js';
import { LabelSelectorSchema, ObjectMetaSchema } from '../common/meta.js';
import {
  PersistentVolumeClaimTemplateSchema,
  PodTemplateSpecSchema,
  type PersistentVolumeClaimTemplate,
  type PodTemplateSpec,
} from '../common/pod.js';
import { InPlaceUpdateStrategySchema, LifecycleSchema, UpdatePriorityStrategySchema } from '../common/strategy.js';

export const UnorderedUpdateStrategySchema = strictObject({
  priorityStrategy: Type.Optional(UpdatePriorityStrategySchema),
});

export const RollingUpdateStatefulSetStrategySchema = strictObject({
  partition: Type.Optional(
    int32({ description: 'Pods with an ordinal below this (in update order) keep the current revision. Default 0.' }),
  ),
  maxUnavailable: Type.Optional(
    intOrString({ description: 'Most pods unavailable during update; above 1 only with Parallel. Default 1.' }),
  ),
  podUpdatePolicy: Type.Optional(Type.String({ description: 'ReCreate (default), InPlaceIfPossible or InPlaceOnly.' })),
  paused: Type.Optional(Type.Boolean({ description: 'Stop updating pods; scaling continues.' })),
  unorderedUpdate: Type.Optional(UnorderedUpdateStrategySchema),
  inPlaceUpdateStrategy: Type.Optional(InPlaceUpdateStrategySchema),
  minReadySeconds: Type.Optional(
    int32({ description: 'Seconds an updated pod must be ready before the next is updated (0..300). Default 0.' }),
  ),
});
export type RollingUpdateStatefulSetStrategy = Static<typeof RollingUpdateStatefulSetStrategySchema>;

export const StatefulSetUpdateStrategySchema = strictObject({
  type: Type.Optional(Type.String({ description: 'RollingUpdate (default) or OnDelete.' })),
  rollingUpdate: Type.Optional(RollingUpdateStatefulSetStrategySchema),
});
export type StatefulSetUpdateStrategy = Static<typeof StatefulSetUpdateStrategySchema>;

export const StatefulSetScaleStrategySchema = strictObject({
  maxUnavailable: Type.Optional(
    intOrString({ description: 'Most unavailable pods while scaling (Parallel only); unset means no limit.' }),
  ),
});

export const StatefulSetPersistentVolumeClaimRetentionPolicySchema = strictObject({
  whenDeleted: Type.Optional(Type.String({ description: 'Retain (default) or Delete the PVCs with the set.' })),
  whenScaled: Type.Optional(Type.String({ description: 'Retain (default) or Delete the PVCs of scaled-in pods.' })),
});
export type StatefulSetPersistentVolumeClaimRetentionPolicy = Static<
  typeof StatefulSetPersistentVolumeClaimRetentionPolicySchema
>;

export const StatefulSetOrdinalsSchema = strictObject({
  start: int32({ description: 'The first ordinal (gate StatefulSetStartOrdinal, off by default).' }),
});

export const VolumeClaimUpdateStrategySchema = strictObject({
  type: Type.Optional(Type.String({ description: 'OnPodRollingUpdate or OnDelete.' })),
});

/** The fields both versions have. */
const commonSpec = {
  replicas: Type.Optional(int32({ description: 'Desired number of pods. Default 1.' })),
  selector: LabelSelectorSchema,
  template: PodTemplateSpecSchema,
  volumeClaimTemplates: Type.Optional(
    Type.Array(PersistentVolumeClaimTemplateSchema, {
      description: 'PVCs created per pod, named <template>-<set>-<ordinal>.',
    }),
  ),
  serviceName: Type.Optional(Type.String({ description: 'The headless Service giving pods their DNS names.' })),
  podManagementPolicy: Type.Optional(Type.String({ description: 'OrderedReady (default) or Parallel.' })),
  updateStrategy: Type.Optional(StatefulSetUpdateStrategySchema),
  revisionHistoryLimit: Type.Optional(int32({ description: 'ControllerRevisions kept. Default 10.' })),
};

/** The fields only v1beta1 has: what converting to v1alpha1 loses. */
export const STATEFULSET_V1BETA1_ONLY_SPEC = [
  'volumeClaimUpdateStrategy',
  'reserveOrdinals',
  'lifecycle',
  'scaleStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'ordinals',
] as const;

export const StatefulSetSpecSchema = strictObject(
  {
    ...commonSpec,
    volumeClaimUpdateStrategy: Type.Optional(VolumeClaimUpdateStrategySchema),
    reserveOrdinals: Type.Optional(
      Type.Array(intOrString(), {
        description: 'Ordinals skipped: numbers, or ranges "a-b" (inclusive). Replicas count the others.',
      }),
    ),
    lifecycle: Type.Optional(LifecycleSchema),
    scaleStrategy: Type.Optional(StatefulSetScaleStrategySchema),
    persistentVolumeClaimRetentionPolicy: Type.Optional(StatefulSetPersistentVolumeClaimRetentionPolicySchema),
    ordinals: Type.Optional(StatefulSetOrdinalsSchema),
  },
  { description: 'Desired state of an Advanced StatefulSet.' },
);

export const StatefulSetV1alpha1SpecSchema = strictObject(commonSpec, {
  description: 'Desired state of an Advanced StatefulSet (v1alpha1).',
});

/** apps/v1 StatefulSetCondition. */
export const StatefulSetConditionSchema = strictObject({
  type: Type.String(),
  status: Type.String(),
  lastTransitionTime: Type.Optional(time()),
  reason: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});
export type StatefulSetCondition = Static<typeof StatefulSetConditionSchema>;

export const VolumeClaimStatusSchema = strictObject({
  volumeClaimName: Type.String(),
  compatibleReplicas: int32(),
  compatibleReadyReplicas: int32(),
});

const commonStatus = {
  observedGeneration: Type.Optional(int64()),
  replicas: int32({ description: 'Pods the set owns.' }),
  readyReplicas: int32(),
  availableReplicas: int32(),
  currentReplicas: int32({ description: 'Pods at currentRevision.' }),
  updatedReplicas: int32({ description: 'Pods at updateRevision.' }),
  currentRevision: Type.Optional(Type.String()),
  updateRevision: Type.Optional(Type.String()),
  collisionCount: Type.Optional(int32()),
  conditions: Type.Optional(Type.Array(StatefulSetConditionSchema)),
  labelSelector: Type.Optional(Type.String({ description: 'The selector as a string, for the scale subresource.' })),
};

/** Status fields only v1beta1 has (OpenKruise's conversion drops them). */
export const STATEFULSET_V1BETA1_ONLY_STATUS = ['updatedReadyReplicas', 'updatedAvailableReplicas', 'volumeClaims'];

export const StatefulSetStatusSchema = strictObject(
  {
    ...commonStatus,
    updatedReadyReplicas: Type.Optional(int32()),
    updatedAvailableReplicas: Type.Optional(int32()),
    volumeClaims: Type.Optional(Type.Array(VolumeClaimStatusSchema)),
  },
  { description: 'Observed state of an Advanced StatefulSet.' },
);
export type StatefulSetStatus = Static<typeof StatefulSetStatusSchema>;

export const StatefulSetSchema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: StatefulSetSpecSchema,
  status: Type.Optional(StatefulSetStatusSchema),
});

export const StatefulSetV1alpha1Schema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: StatefulSetV1alpha1SpecSchema,
  status: Type.Optional(strictObject(commonStatus, { description: 'Observed state of an Advanced StatefulSet.' })),
});

/** StatefulSet spec with the pod and PVC templates typed for code that reads them. */
export type StatefulSetSpec = Omit<Static<typeof StatefulSetSpecSchema>, 'template' | 'volumeClaimTemplates'> & {
  template: PodTemplateSpec;
  volumeClaimTemplates?: PersistentVolumeClaimTemplate[];
};

/** An Advanced StatefulSet at v1beta1, the version Flotilla's code works in. */
export type StatefulSet = Omit<Static<typeof StatefulSetSchema>, 'apiVersion' | 'kind' | 'spec'> & {
  apiVersion: typeof KRUISE_V1BETA1_API_VERSION;
  kind: typeof KruiseKind.StatefulSet;
  spec: StatefulSetSpec;
};
