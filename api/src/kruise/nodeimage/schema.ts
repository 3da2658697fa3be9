/**
 * NodeImage (apps.kruise.io/v1alpha1, cluster-scoped, one per node and named like it), field for
 * field as OpenKruise v1.8 defines it in apis/apps/v1alpha1/nodeimage_types.go.
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

export const ImageSpecSchema = strictObject({
  pullSecrets: Type.Optional(Type.Array(ReferenceObjectSchema)),
  tags: Type.Array(ImageTagSpecSchema),
  sandboxConfig: Type.Optional(SandboxConfigSchema),
});
export type ImageSpec = Static<typeof ImageSpecSchema>;

export const NodeImageSpecSchema = strictObject(
  { images: Type.Optional(mapOf(ImageSpecSchema, { description: 'Image name (without tag) → tags to pull.' })) },
  { description: 'Images the node daemon keeps pulled.' },
);
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

export type NodeImage = Omit<Static<typeof NodeImageSchema>, 'apiVersion' | 'kind'> & {
  apiVersion: typeof KRUISE_API_VERSION;
  kind: typeof KruiseKind.NodeImage;
};
