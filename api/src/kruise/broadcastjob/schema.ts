/**
 * BroadcastJob (apps.kruise.io, namespaced): one pod per eligible node, field for field as
 * OpenKruise v1.9 defines it in apis/apps/v1beta1/broadcastjob_types.go. v1alpha1 is the same
 * schema, so one declaration serves both versions (the CRD converts with strategy None).
 */
import Type, { type Static } from 'typebox';
import type { KRUISE_API_VERSION, KruiseKind } from '../constants.js';
import { int32, intOrString, strictObject, time } from '../common/markers.js';
import { ObjectMetaSchema } from '../common/meta.js';
import { PodTemplateSpecSchema, type PodTemplateSpec } from '../common/pod.js';
import { CompletionPolicySchema } from '../imagepulljob/schema.js';

/** What a failed pod does to the job. */
export const BroadcastJobFailurePolicySchema = strictObject({
  type: Type.Optional(
    Type.String({ description: 'FailFast (default): the job fails; Continue: it goes on; Pause: it pauses.' }),
  ),
  restartLimit: Type.Optional(
    int32({ description: 'Restarts of an OnFailure pod (all its containers) after which it counts as failed.' }),
  ),
});
export type BroadcastJobFailurePolicy = Static<typeof BroadcastJobFailurePolicySchema>;

export const BroadcastJobSpecSchema = strictObject(
  {
    parallelism: Type.Optional(
      intOrString({ description: 'Most pods running at once: a count or a percentage of desired. Default no limit.' }),
    ),
    template: PodTemplateSpecSchema,
    completionPolicy: Type.Optional(CompletionPolicySchema),
    paused: Type.Optional(Type.Boolean({ description: 'Create no more pods while true.' })),
    failurePolicy: Type.Optional(BroadcastJobFailurePolicySchema),
  },
  { description: 'Desired state of a BroadcastJob.' },
);

/** A condition of a finished job: Complete or Failed. */
export const JobConditionSchema = strictObject({
  type: Type.String({ description: 'Complete or Failed.' }),
  status: Type.String(),
  lastProbeTime: Type.Optional(time()),
  lastTransitionTime: Type.Optional(time()),
  reason: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});
export type JobCondition = Static<typeof JobConditionSchema>;

export const BroadcastJobStatusSchema = strictObject(
  {
    conditions: Type.Optional(Type.Array(JobConditionSchema)),
    startTime: Type.Optional(time()),
    completionTime: Type.Optional(time()),
    active: Type.Optional(int32({ description: 'Pods running (or pending) now.' })),
    succeeded: Type.Optional(int32({ description: 'Pods that reached phase Succeeded.' })),
    failed: Type.Optional(int32({ description: 'Pods that failed (or were deleted when the job failed).' })),
    desired: Type.Optional(int32({ description: 'Nodes the pod fits on.' })),
    phase: Type.Optional(Type.String({ description: 'running, paused, completed or failed.' })),
  },
  { description: 'Observed state of a BroadcastJob.' },
);
export type BroadcastJobStatus = Static<typeof BroadcastJobStatusSchema>;

export const BroadcastJobSchema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: BroadcastJobSpecSchema,
  status: Type.Optional(BroadcastJobStatusSchema),
});

/** BroadcastJob spec with the pod template typed for code that reads it. */
export type BroadcastJobSpec = Omit<Static<typeof BroadcastJobSpecSchema>, 'template'> & {
  template: PodTemplateSpec;
};

export type BroadcastJob = Omit<Static<typeof BroadcastJobSchema>, 'apiVersion' | 'kind' | 'spec'> & {
  apiVersion: typeof KRUISE_API_VERSION;
  kind: typeof KruiseKind.BroadcastJob;
  spec: BroadcastJobSpec;
};
