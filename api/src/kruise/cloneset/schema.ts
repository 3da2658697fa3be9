/**
 * CloneSet (apps.kruise.io/v1alpha1), field for field as OpenKruise v1.8 defines it in
 * apis/apps/v1alpha1/cloneset_types.go.
 */
import Type, { type Static } from 'typebox';
import type { KRUISE_API_VERSION, KruiseKind } from '../constants.js';
import { int32, int64, intOrString, stringList, strictObject, time } from '../common/markers.js';
import { LabelSelectorSchema, ObjectMetaSchema } from '../common/meta.js';
import {
  PersistentVolumeClaimTemplateSchema,
  PodTemplateSpecSchema,
  type PersistentVolumeClaimTemplate,
  type PodTemplateSpec,
} from '../common/pod.js';
import {
  InPlaceUpdateStrategySchema,
  LifecycleSchema,
  UpdatePriorityStrategySchema,
  UpdateScatterStrategySchema,
} from '../common/strategy.js';

export const CloneSetScaleStrategySchema = strictObject({
  podsToDelete: Type.Optional(
    stringList({ description: 'Names of pods to delete; the controller removes names of pods that are gone.' }),
  ),
  maxUnavailable: Type.Optional(
    intOrString({ description: 'Most unavailable pods while scaling up; unset means no limit.' }),
  ),
  disablePVCReuse: Type.Optional(
    Type.Boolean({ description: 'Delete the PVCs of a deleted pod instead of reusing them for its replacement.' }),
  ),
});
export type CloneSetScaleStrategy = Static<typeof CloneSetScaleStrategySchema>;

export const CloneSetUpdateStrategySchema = strictObject({
  type: Type.Optional(
    Type.String({
      description:
        'ReCreate (default), InPlaceIfPossible or InPlaceOnly; OnDelete (replace pods only when deleted) is refused by admission, as in OpenKruise v1.9.0.',
    }),
  ),
  partition: Type.Optional(
    intOrString({ description: 'Pods (count or percentage) kept at the old revision. Default 0.' }),
  ),
  maxUnavailable: Type.Optional(intOrString({ description: 'Most pods unavailable during update. Default 20%.' })),
  maxSurge: Type.Optional(intOrString({ description: 'Most pods created above replicas during update. Default 0.' })),
  paused: Type.Optional(Type.Boolean({ description: 'Stop updating pods; scaling continues.' })),
  priorityStrategy: Type.Optional(UpdatePriorityStrategySchema),
  scatterStrategy: Type.Optional(UpdateScatterStrategySchema),
  inPlaceUpdateStrategy: Type.Optional(InPlaceUpdateStrategySchema),
});
export type CloneSetUpdateStrategy = Static<typeof CloneSetUpdateStrategySchema>;

export const CloneSetSpecSchema = strictObject(
  {
    replicas: Type.Optional(int32({ description: 'Desired number of pods. Default 1.' })),
    selector: LabelSelectorSchema,
    template: PodTemplateSpecSchema,
    volumeClaimTemplates: Type.Optional(
      Type.Array(PersistentVolumeClaimTemplateSchema, {
        description: 'PVCs created per pod, named <template>-<cloneset>-<instance-id>.',
      }),
    ),
    scaleStrategy: Type.Optional(CloneSetScaleStrategySchema),
    updateStrategy: Type.Optional(CloneSetUpdateStrategySchema),
    revisionHistoryLimit: Type.Optional(int32({ description: 'ControllerRevisions kept. Default 10.' })),
    minReadySeconds: Type.Optional(int32({ description: 'Seconds a ready pod must stay ready to be available.' })),
    progressDeadlineSeconds: Type.Optional(
      int32({
        description:
          'Seconds to reach available, paused or partition-available before the Progressing condition turns False (OpenKruise v1.9). No default.',
      }),
    ),
    lifecycle: Type.Optional(LifecycleSchema),
  },
  { description: 'Desired state of a CloneSet.' },
);

/** A CloneSet condition; v1.9 adds lastUpdateTime (when its reason was last set). */
export const CloneSetConditionSchema = strictObject({
  type: Type.String(),
  status: Type.String(),
  lastUpdateTime: Type.Optional(time()),
  lastTransitionTime: Type.Optional(time()),
  reason: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});
export type CloneSetCondition = Static<typeof CloneSetConditionSchema>;

export const CloneSetStatusSchema = strictObject(
  {
    observedGeneration: Type.Optional(int64()),
    replicas: int32({ description: 'Active pods owned by the CloneSet.' }),
    readyReplicas: int32(),
    availableReplicas: int32(),
    updatedReplicas: int32(),
    updatedReadyReplicas: int32(),
    updatedAvailableReplicas: Type.Optional(int32()),
    expectedUpdatedReplicas: Type.Optional(int32({ description: 'replicas - partition.' })),
    updateRevision: Type.Optional(Type.String()),
    currentRevision: Type.Optional(Type.String()),
    collisionCount: Type.Optional(int32()),
    conditions: Type.Optional(Type.Array(CloneSetConditionSchema)),
    labelSelector: Type.Optional(Type.String({ description: 'The selector as a string, for the scale subresource.' })),
  },
  { description: 'Observed state of a CloneSet.' },
);
export type CloneSetStatus = Static<typeof CloneSetStatusSchema>;

export const CloneSetSchema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: CloneSetSpecSchema,
  status: Type.Optional(CloneSetStatusSchema),
});

/** CloneSet spec with the pod and PVC templates typed for code that reads them. */
export type CloneSetSpec = Omit<Static<typeof CloneSetSpecSchema>, 'template' | 'volumeClaimTemplates'> & {
  template: PodTemplateSpec;
  volumeClaimTemplates?: PersistentVolumeClaimTemplate[];
};

export type CloneSet = Omit<Static<typeof CloneSetSchema>, 'apiVersion' | 'kind' | 'spec'> & {
  apiVersion: typeof KRUISE_API_VERSION;
  kind: typeof KruiseKind.CloneSet;
  spec: CloneSetSpec;
};
