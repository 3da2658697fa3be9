/**
 * NodeImage (apps.kruise.io/v1alpha1, cluster-scoped, one per node and named like it), field for
 * field as OpenKruise v1.9 defines it in apis/apps/v1alpha1/nodeimage_types.go, and v1beta1 beside
 * it (the same but for pull secrets' `mode`).
 */
import Type, { type Static } from 'typebox';
import type { KRUISE_API_VERSION, KruiseKind } from '../constants.js';
import { int32, int64, mapOf, strictObject, time } from '../common/markers.js';
import { ObjectMetaSchema, ObjectReferenceSchema } from '../common/meta.js';
import { SandboxConfigSchema } from '../imagepulljob/schema.js';

/** A pull secret as `<namespace>/<name>`. */
export const ReferenceObjectSchema = strictObject({
  namespace: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
});

/** v1beta1's pull secret adds `mode`: "batch" for the shared copies of OpenKruise v1.9; absent before. */
export const ReferenceObjectV1beta1Schema = strictObject({
  ...ReferenceObjectSchema.properties,
  mode: Type.Optional(Type.String({ description: 'batch: a shared copy of the secret; absent: one per job.' })),
});

/** Limits for pulling one tag, copied from the owning ImagePullJobs. */
export const ImageTagPullPolicySchema = strictObject({
  timeoutSeconds: Type.Optional(int32({ description: 'Default 600.' })),
  backoffLimit: Type.Optional(int32({ description: 'Default 3.' })),
  ttlSecondsAfterFinished: Type.Optional(int32()),
  activeDeadlineSeconds: Type.Optional(int64()),
});
export type ImageTagPullPolicy = Static<typeof ImageTagPullPolicySchema>;

/** One tag (or digest) of an image to keep pulled on the node. */
export const ImageTagSpecSchema = strictObject({
  tag: Type.String(),
  createdAt: Type.Optional(time()),
  pullPolicy: Type.Optional(ImageTagPullPolicySchema),
  ownerReferences: Type.Optional(Type.Array(ObjectReferenceSchema, { description: 'ImagePullJobs wanting this tag.' })),
  version: Type.Optional(int64({ description: 'Bumped to request a new pull of the same tag.' })),
  imagePullPolicy: Type.Optional(Type.String()),
});
export type ImageTagSpec = Static<typeof ImageTagSpecSchema>;

/** The spec for pull secrets of one version's schema: v1alpha1 and v1beta1 differ only there. */
function nodeImageSpecSchema<S extends typeof ReferenceObjectSchema | typeof ReferenceObjectV1beta1Schema>(secret: S) {
  const image = strictObject({
    pullSecrets: Type.Optional(Type.Array(secret)),
    tags: Type.Array(ImageTagSpecSchema),
    sandboxConfig: Type.Optional(SandboxConfigSchema),
  });
  const spec = strictObject(
    { images: Type.Optional(mapOf(image, { description: 'Image name (without tag) → tags to pull.' })) },
    { description: 'Images the node daemon keeps pulled.' },
  );
  return { image, spec };
}

const V1ALPHA1_SPEC = nodeImageSpecSchema(ReferenceObjectSchema);
const V1BETA1_SPEC = nodeImageSpecSchema(ReferenceObjectV1beta1Schema);

export const ImageSpecSchema = V1ALPHA1_SPEC.image;
export type ImageSpec = Static<typeof ImageSpecSchema>;

export const NodeImageSpecSchema = V1ALPHA1_SPEC.spec;
export type NodeImageSpec = Static<typeof NodeImageSpecSchema>;

export const ImageTagStatusSchema = strictObject({
  tag: Type.String(),
  phase: Type.String({ description: 'Waiting, Pulling, Succeeded or Failed.' }),
  progress: Type.Optional(int32({ maximum: 100, description: 'Percent pulled, 0-100.' })),
  startTime: Type.Optional(time()),
  completionTime: Type.Optional(time()),
  version: Type.Optional(int64()),
  imageID: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});
export type ImageTagStatus = Static<typeof ImageTagStatusSchema>;

export const ImageStatusSchema = strictObject({ tags: Type.Array(ImageTagStatusSchema) });

export const SyncStatusSchema = strictObject({
  syncAt: Type.Optional(time()),
  status: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
});

export const NodeImageStatusSchema = strictObject(
  {
    desired: int32(),
    succeeded: Type.Optional(int32()),
    failed: Type.Optional(int32()),
    pulling: Type.Optional(int32()),
    waiting: Type.Optional(int32({ description: 'Tags queued on the node, not yet pulling (OpenKruise v1.9).' })),
    imageStatuses: Type.Optional(mapOf(ImageStatusSchema)),
    firstSyncStatus: Type.Optional(SyncStatusSchema),
  },
  { description: 'Pull results reported by the node daemon.' },
);
export type NodeImageStatus = Static<typeof NodeImageStatusSchema>;

export const NodeImageSchema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: NodeImageSpecSchema,
  status: Type.Optional(NodeImageStatusSchema),
});

/** apps.kruise.io/v1beta1 NodeImage, the version OpenKruise v1.9 stores. */
export const NodeImageV1beta1Schema = strictObject({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Optional(ObjectMetaSchema),
  spec: V1BETA1_SPEC.spec,
  status: Type.Optional(NodeImageStatusSchema),
});

export type NodeImage = Omit<Static<typeof NodeImageSchema>, 'apiVersion' | 'kind'> & {
  apiVersion: typeof KRUISE_API_VERSION;
  kind: typeof KruiseKind.NodeImage;
};
