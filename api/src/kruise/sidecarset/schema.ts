/**
 * SidecarSet (apps.kruise.io/v1alpha1, cluster-scoped), field for field as OpenKruise v1.8 defines
 * it in apis/apps/v1alpha1/sidecarset_types.go, and v1beta1 (v1.9) beside it.
 */
import Type, { type Static } from 'typebox';
import type { KRUISE_API_VERSION, KRUISE_V1BETA1_API_VERSION, KruiseKind } from '../constants.js';
import {
  crdKeep,
  int32,
  int64,
  intOrString,
  type Opaque,
  opaqueObject,
  stringList,
  stringMap,
  strictObject,
} from '../common/markers.js';
import {
  LabelSelectorSchema,
  LocalObjectReferenceSchema,
  ObjectFieldSelectorSchema,
  ObjectMetaSchema,
} from '../common/meta.js';
import { containerProperties, VolumeSchema, type Volume } from '../common/pod.js';
import { UpdatePriorityStrategySchema, UpdateScatterStrategySchema } from '../common/strategy.js';

/** Copies an env var of another container of the pod into the sidecar. */
export const TransferEnvVarSchema = strictObject({
  sourceContainerName: Type.Optional(Type.String()),
  sourceContainerNameFrom: Type.Optional(
    strictObject({ fieldRef: Type.Optional(ObjectFieldSelectorSchema) }, { description: 'Downward-API source.' }),
  ),
  envName: Type.Optional(Type.String()),
  envNames: Type.Optional(stringList()),
});
export type TransferEnvVar = Static<typeof TransferEnvVarSchema>;

/** ColdUpgrade (default) restarts the sidecar; HotUpgrade swaps between two containers. */
export const SidecarContainerUpgradeStrategySchema = strictObject(
  { upgradeType: Type.Optional(Type.String()), hotUpgradeEmptyImage: Type.Optional(Type.String()) },
  crdKeep(),
);

/** enabled: the sidecar mounts the volumes of the pod's other containers. */
export const ShareVolumePolicySchema = strictObject({ type: Type.Optional(Type.String()) }, crdKeep());

/** One expression per resource; `cpu` / `memory` name the aggregate of the target containers. */
export const ResourceExprSchema = strictObject(
  { cpu: Type.Optional(Type.String()), memory: Type.Optional(Type.String()) },
  crdKeep(),
);

/**
 * v1.9: the sidecar's resources computed at pod creation from the pod's other containers (their
 * sum or max, through an expression such as `max(cpu*50%, 100m)`).
 */
export const ResourcesPolicySchema = strictObject(
  {
    targetContainersMode: Type.String({ enum: ['sum', 'max'], description: 'How target resources aggregate.' }),
    targetContainersNameRegex: Type.Optional(
      Type.String({ default: '.*', description: 'RE2 pattern (partial match) of target container names.' }),
    ),
    resourcesExpr: strictObject({
      limits: Type.Optional(ResourceExprSchema),
      requests: Type.Optional(ResourceExprSchema),
    }),
  },
  crdKeep(),
);
export type ResourcesPolicy = Static<typeof ResourcesPolicySchema>;

/**
 * A corev1.Container plus OpenKruise's injection settings. The CRD keeps it schemaless apart from
 * the OpenKruise fields, as OpenKruise's own CRD does.
 */
export const SidecarContainerSchema = opaqueObject({
  ...containerProperties,
  podInjectPolicy: Type.Optional(
    Type.String({ ...crdKeep(), description: 'BeforeAppContainer or AfterAppContainer.' }),
  ),
  upgradeStrategy: Type.Optional(SidecarContainerUpgradeStrategySchema),
  shareVolumePolicy: Type.Optional(ShareVolumePolicySchema),
  shareVolumeDevicePolicy: Type.Optional(ShareVolumePolicySchema),
  transferEnv: Type.Optional(Type.Array(TransferEnvVarSchema, crdKeep())),
  resourcesPolicy: Type.Optional(ResourcesPolicySchema),
});
export type SidecarContainer = Opaque<Static<typeof SidecarContainerSchema>>;

export const SidecarSetUpdateStrategySchema = strictObject({
  type: Type.Optional(Type.String({ description: 'RollingUpdate (default) or NotUpdate.' })),
  paused: Type.Optional(Type.Boolean()),
  selector: Type.Optional(LabelSelectorSchema),
  partition: Type.Optional(intOrString({ description: 'Matched pods (count or percentage) kept at the old version.' })),
  maxUnavailable: Type.Optional(intOrString({ description: 'Most pods unavailable during update. Default 1.' })),
  priorityStrategy: Type.Optional(UpdatePriorityStrategySchema),
  scatterStrategy: Type.Optional(UpdateScatterStrategySchema),
});
export type SidecarSetUpdateStrategy = Static<typeof SidecarSetUpdateStrategySchema>;

export const SidecarSetInjectRevisionSchema = strictObject({
  customVersion: Type.Optional(Type.String()),
  revisionName: Type.Optional(Type.String()),
  policy: Type.Optional(Type.String({ default: 'Always', enum: ['Always', 'Partial'] })),
});

export const SidecarSetInjectionStrategySchema = strictObject({
  paused: Type.Optional(Type.Boolean({ description: 'Stop injecting into new pods.' })),
  revision: Type.Optional(SidecarSetInjectRevisionSchema),
});

export const SidecarSetPatchPodMetadataSchema = strictObject({
  annotations: Type.Optional(stringMap()),
  patchPolicy: Type.Optional(Type.String({ description: 'Retain (default), Overwrite or MergePatchJson.' })),
});
export type SidecarSetPatchPodMetadata = Static<typeof SidecarSetPatchPodMetadataSchema>;

/** The spec fields v1alpha1 and v1beta1 share. */
const sharedSpecProperties = {
  selector: Type.Optional(LabelSelectorSchema),
  namespaceSelector: Type.Optional(LabelSelectorSchema),
  initContainers: Type.Optional(Type.Array(SidecarContainerSchema)),
  containers: Type.Optional(Type.Array(SidecarContainerSchema)),
  volumes: Type.Optional(Type.Array(VolumeSchema)),
  updateStrategy: Type.Optional(SidecarSetUpdateStrategySchema),
  injectionStrategy: Type.Optional(SidecarSetInjectionStrategySchema),
  imagePullSecrets: Type.Optional(Type.Array(LocalObjectReferenceSchema)),
  revisionHistoryLimit: Type.Optional(int32({ description: 'ControllerRevisions kept. Default 10.' })),
  patchPodMetadata: Type.Optional(Type.Array(SidecarSetPatchPodMetadataSchema)),
};

export const SidecarSetSpecSchema = strictObject(
  {
    ...sharedSpecProperties,
    namespace: Type.Optional(Type.String({ description: 'Only inject into pods of this namespace.' })),
  },
  { description: 'Desired state of a SidecarSet.' },
);

/**
 * v1beta1's spec (OpenKruise v1.9, apis/apps/v1beta1/sidecarset_types.go): no `namespace` (only
 * namespaceSelector), and `customVersion` instead of the label apps.kruise.io/sidecarset-custom-version.
 */
export const SidecarSetV1beta1SpecSchema = strictObject(
  {
    ...sharedSpecProperties,
    customVersion: Type.Optional(
      Type.String({ description: 'The version name of this spec, selected by injectionStrategy.revision.' }),
    ),
  },
  { description: 'Desired state of a SidecarSet.' },
);

export const SidecarSetStatusSchema = strictObject(
  {
    observedGeneration: Type.Optional(int64()),
    matchedPods: int32({ description: 'Pods that match and carry this SidecarSet.' }),
    updatedPods: int32(),
    readyPods: int32(),
    updatedReadyPods: Type.Optional(int32()),
    latestRevision: Type.Optional(Type.String()),
    collisionCount: Type.Optional(int32()),
  },
  { description: 'Observed state of a SidecarSet.' },
);
export type SidecarSetStatus = Static<typeof SidecarSetStatusSchema>;

export const SidecarSetSchema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: SidecarSetSpecSchema,
  status: Type.Optional(SidecarSetStatusSchema),
});

/** apps.kruise.io/v1beta1 SidecarSet, the version OpenKruise v1.9 stores. */
export const SidecarSetV1beta1Schema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: SidecarSetV1beta1SpecSchema,
  status: Type.Optional(SidecarSetStatusSchema),
});

export type SidecarSetSpec = Omit<Static<typeof SidecarSetSpecSchema>, 'initContainers' | 'containers' | 'volumes'> & {
  initContainers?: SidecarContainer[];
  containers?: SidecarContainer[];
  volumes?: Volume[];
};

export type SidecarSet = Omit<Static<typeof SidecarSetSchema>, 'apiVersion' | 'kind' | 'spec'> & {
  apiVersion: typeof KRUISE_API_VERSION;
  kind: typeof KruiseKind.SidecarSet;
  spec: SidecarSetSpec;
};

export type SidecarSetV1beta1Spec = Omit<
  Static<typeof SidecarSetV1beta1SpecSchema>,
  'initContainers' | 'containers' | 'volumes'
> & {
  initContainers?: SidecarContainer[];
  containers?: SidecarContainer[];
  volumes?: Volume[];
};

export type SidecarSetV1beta1 = Omit<Static<typeof SidecarSetV1beta1Schema>, 'apiVersion' | 'kind' | 'spec'> & {
  apiVersion: typeof KRUISE_V1BETA1_API_VERSION;
  kind: typeof KruiseKind.SidecarSet;
  spec: SidecarSetV1beta1Spec;
};
