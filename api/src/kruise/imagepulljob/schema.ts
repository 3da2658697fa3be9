/**
 * ImagePullJob (apps.kruise.io/v1alpha1, namespaced), field for field as OpenKruise v1.8 defines
 * it in apis/apps/v1alpha1/imagepulljob_types.go.
 */
import Type, { type Static } from 'typebox';
import type { KRUISE_API_VERSION, KruiseKind } from '../constants.js';
import { int32, int64, intOrString, stringList, stringMap, strictObject, time } from '../common/markers.js';
import { LabelSelectorRequirementSchema, ObjectMetaSchema } from '../common/meta.js';

/** Which NodeImages (one per node, labelled like the node) to pull on: by names or by labels. */
export const ImagePullJobNodeSelectorSchema = strictObject(
  {
    names: Type.Optional(stringList({ description: 'Node names; exclusive with matchLabels/matchExpressions.' })),
    matchLabels: Type.Optional(stringMap()),
    matchExpressions: Type.Optional(Type.Array(LabelSelectorRequirementSchema)),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type ImagePullJobNodeSelector = Static<typeof ImagePullJobNodeSelectorSchema>;

/** Pull on the nodes where pods matching this selector run; exclusive with `selector`. */
export const ImagePullJobPodSelectorSchema = strictObject(
  {
    matchLabels: Type.Optional(stringMap()),
    matchExpressions: Type.Optional(Type.Array(LabelSelectorRequirementSchema)),
  },
  { 'x-kubernetes-map-type': 'atomic' },
);
export type ImagePullJobPodSelector = Static<typeof ImagePullJobPodSelectorSchema>;

/** Per-node pull attempt limits. */
export const PullPolicySchema = strictObject({
  timeoutSeconds: Type.Optional(int32({ description: 'Timeout of one pull attempt. Default 600.' })),
  backoffLimit: Type.Optional(int32({ description: 'Retries before a node is marked failed. Default 3.' })),
});
export type PullPolicy = Static<typeof PullPolicySchema>;

/** When the job completes and is cleaned up (ImagePullJob and BroadcastJob share it, as in OpenKruise). */
export const CompletionPolicySchema = strictObject({
  type: Type.Optional(Type.String({ description: 'Always (default): complete once every node is done; Never.' })),
  activeDeadlineSeconds: Type.Optional(
    int64({ description: "Only with Always; an ImagePullJob's must exceed pullPolicy.timeoutSeconds." }),
  ),
  ttlSecondsAfterFinished: Type.Optional(
    int32({ description: 'Only with Always; delete the job this long after it completes.' }),
  ),
});
export type CompletionPolicy = Static<typeof CompletionPolicySchema>;

/** Labels and annotations of the pod sandbox the CRI creates for the pull. */
export const SandboxConfigSchema = strictObject({
  labels: Type.Optional(stringMap()),
  annotations: Type.Optional(stringMap()),
});
export type SandboxConfig = Static<typeof SandboxConfigSchema>;

export const ImagePullJobSpecSchema = strictObject(
  {
    image: Type.String({ description: 'Image reference to pull, e.g. nginx:1.25 or a digest.' }),
    pullSecrets: Type.Optional(stringList({ description: 'Names of pull secrets in the job namespace.' })),
    selector: Type.Optional(ImagePullJobNodeSelectorSchema),
    podSelector: Type.Optional(ImagePullJobPodSelectorSchema),
    parallelism: Type.Optional(intOrString({ description: 'Nodes pulling at the same time. Default 1.' })),
    pullPolicy: Type.Optional(PullPolicySchema),
    completionPolicy: Type.Optional(CompletionPolicySchema),
    sandboxConfig: Type.Optional(SandboxConfigSchema),
    imagePullPolicy: Type.Optional(Type.String({ description: 'IfNotPresent (default) or Always.' })),
  },
  { description: 'Desired state of an ImagePullJob.' },
);
export type ImagePullJobSpec = Static<typeof ImagePullJobSpecSchema>;

export const ImagePullJobStatusSchema = strictObject(
  {
    startTime: Type.Optional(time()),
    completionTime: Type.Optional(time()),
    desired: int32({ description: 'Nodes the job targets.' }),
    active: Type.Optional(int32()),
    succeeded: Type.Optional(int32()),
    failed: Type.Optional(int32()),
    message: Type.Optional(Type.String()),
    failedNodes: Type.Optional(stringList({ description: 'Sorted names of nodes where the pull failed.' })),
  },
  { description: 'Observed state of an ImagePullJob.' },
);
export type ImagePullJobStatus = Static<typeof ImagePullJobStatusSchema>;

export const ImagePullJobSchema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: ImagePullJobSpecSchema,
  status: Type.Optional(ImagePullJobStatusSchema),
});

export type ImagePullJob = Omit<Static<typeof ImagePullJobSchema>, 'apiVersion' | 'kind'> & {
  apiVersion: typeof KRUISE_API_VERSION;
  kind: typeof KruiseKind.ImagePullJob;
};
