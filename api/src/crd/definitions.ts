/**
 * What each CustomResourceDefinition says besides its schema: names, scope, printer columns and
 * subresources, the same as OpenKruise v1.8's CRDs (config/crd/bases/apps.kruise.io_*.yaml).
 */
import type { TSchema } from 'typebox';
import { CloneSetSchema } from '../kruise/cloneset/schema.js';
import { KRUISE_GROUP, KRUISE_VERSION, KruiseKind, type KruiseKindName } from '../kruise/constants.js';
import { ImagePullJobSchema } from '../kruise/imagepulljob/schema.js';
import { NodeImageSchema } from '../kruise/nodeimage/schema.js';
import { SidecarSetSchema } from '../kruise/sidecarset/schema.js';

export interface PrinterColumn {
  readonly name: string;
  readonly type: 'integer' | 'string' | 'date' | 'number' | 'boolean';
  readonly jsonPath: string;
  readonly description: string;
  readonly priority?: number;
}

export interface ScaleSubresource {
  readonly specReplicasPath: string;
  readonly statusReplicasPath: string;
  readonly labelSelectorPath: string;
}

/** One version of a CRD: whether the apiserver serves it and whether it is the one stored. */
export interface CrdVersion {
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
}

/**
 * One kind's CRD. Group, versions, kind, plural and scope are declared here and nowhere else:
 * the resource table (resources.ts) and every client's paths derive from them.
 */
export interface CrdDefinition {
  readonly group: string;
  /** Exactly one is the storage version; the schemas in kruise/ describe it. */
  readonly versions: readonly CrdVersion[];
  readonly kind: KruiseKindName;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly scope: 'Namespaced' | 'Cluster';
  readonly description: string;
  readonly schema: TSchema;
  readonly printerColumns: readonly PrinterColumn[];
  readonly scale?: ScaleSubresource;
}

/** kubectl's AGE column, with the description controller-gen gives it. */
const AGE: PrinterColumn = {
  name: 'AGE',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
  description:
    'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.',
};

/** Served and stored as v1alpha1 only, so no conversion webhook is needed. */
const V1ALPHA1: readonly CrdVersion[] = [{ name: KRUISE_VERSION, served: true, storage: true }];

const count = (name: string, jsonPath: string, description: string): PrinterColumn => ({
  name,
  type: 'integer',
  jsonPath,
  description,
});

export const CLONESET_CRD: CrdDefinition = {
  group: KRUISE_GROUP,
  versions: V1ALPHA1,
  kind: KruiseKind.CloneSet,
  plural: 'clonesets',
  singular: 'cloneset',
  shortNames: ['clone'],
  scope: 'Namespaced',
  description: 'CloneSet manages a set of identical pods, with in-place update, partition, surge and lifecycle hooks.',
  schema: CloneSetSchema,
  printerColumns: [
    count('DESIRED', '.spec.replicas', 'The desired number of pods.'),
    count('UPDATED', '.status.updatedReplicas', 'The number of pods updated.'),
    count('UPDATED_READY', '.status.updatedReadyReplicas', 'The number of pods updated and ready.'),
    count('UPDATED_AVAILABLE', '.status.updatedAvailableReplicas', 'The number of pods updated and available.'),
    count('READY', '.status.readyReplicas', 'The number of pods ready.'),
    count('TOTAL', '.status.replicas', 'The number of currently all pods.'),
    AGE,
    {
      name: 'CONTAINERS',
      type: 'string',
      jsonPath: '.spec.template.spec.containers[*].name',
      description: 'The containers of currently cloneset.',
      priority: 1,
    },
    {
      name: 'IMAGES',
      type: 'string',
      jsonPath: '.spec.template.spec.containers[*].image',
      description: 'The images of currently cloneset.',
      priority: 1,
    },
    {
      name: 'SELECTOR',
      type: 'string',
      jsonPath: '.status.labelSelector',
      description: 'The selector of currently cloneset.',
      priority: 1,
    },
  ],
  scale: {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.status.labelSelector',
  },
};

export const SIDECARSET_CRD: CrdDefinition = {
  group: KRUISE_GROUP,
  versions: V1ALPHA1,
  kind: KruiseKind.SidecarSet,
  plural: 'sidecarsets',
  singular: 'sidecarset',
  shortNames: [],
  scope: 'Cluster',
  description: 'SidecarSet injects sidecar containers into matching pods and upgrades them in place.',
  schema: SidecarSetSchema,
  printerColumns: [
    count('MATCHED', '.status.matchedPods', 'The number of pods matched.'),
    count('UPDATED', '.status.updatedPods', 'The number of pods matched and updated.'),
    count('READY', '.status.readyPods', 'The number of pods matched and ready.'),
    AGE,
  ],
};

export const IMAGEPULLJOB_CRD: CrdDefinition = {
  group: KRUISE_GROUP,
  versions: V1ALPHA1,
  kind: KruiseKind.ImagePullJob,
  plural: 'imagepulljobs',
  singular: 'imagepulljob',
  shortNames: [],
  scope: 'Namespaced',
  description: 'ImagePullJob pre-pulls an image on selected nodes.',
  schema: ImagePullJobSchema,
  printerColumns: [
    count('TOTAL', '.status.desired', 'Number of all nodes matched by this job'),
    count('ACTIVE', '.status.active', 'Number of image pull task active'),
    count('SUCCEED', '.status.succeeded', 'Number of image pull task succeeded'),
    count('FAILED', '.status.failed', 'Number of image pull tasks failed'),
    AGE,
    {
      name: 'MESSAGE',
      type: 'string',
      jsonPath: '.status.message',
      description: 'Summary of status when job is failed',
    },
  ],
};

export const NODEIMAGE_CRD: CrdDefinition = {
  group: KRUISE_GROUP,
  versions: V1ALPHA1,
  kind: KruiseKind.NodeImage,
  plural: 'nodeimages',
  singular: 'nodeimage',
  shortNames: [],
  scope: 'Cluster',
  description: 'NodeImage lists the images to keep pulled on one node (named like the node) and their pull status.',
  schema: NodeImageSchema,
  printerColumns: [
    count('DESIRED', '.status.desired', 'Number of all images on this node'),
    count('PULLING', '.status.pulling', 'Number of image pull task active'),
    count('SUCCEED', '.status.succeeded', 'Number of image pull task succeeded'),
    count('FAILED', '.status.failed', 'Number of image pull tasks failed'),
    AGE,
  ],
};

/** Every CRD Flotilla serves, in a stable order. */
export const CRD_DEFINITIONS: readonly CrdDefinition[] = [
  CLONESET_CRD,
  SIDECARSET_CRD,
  IMAGEPULLJOB_CRD,
  NODEIMAGE_CRD,
];
