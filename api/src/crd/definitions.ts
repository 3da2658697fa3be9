/**
 * What each CustomResourceDefinition says: names, scope, versions with their schemas and printer
 * columns, conversion and subresources, the same as OpenKruise v1.9's CRDs
 * (config/crd/bases/apps.kruise.io_*.yaml, config/crd/kustomization.yaml for conversion).
 */
import type { TSchema } from 'typebox';
import { BroadcastJobSchema } from '../kruise/broadcastjob/schema.js';
import { CloneSetSchema } from '../kruise/cloneset/schema.js';
import { DaemonSetSchema, DaemonSetV1beta1Schema } from '../kruise/daemonset/schema.js';
import { ContainerRecreateRequestSchema } from '../kruise/containerrecreaterequest/schema.js';
import {
  KRUISE_GROUP,
  KRUISE_V1BETA1,
  KRUISE_VERSION,
  KruiseKind,
  PUB_GROUP,
  type KruiseKindName,
} from '../kruise/constants.js';
import { ImagePullJobSchema } from '../kruise/imagepulljob/schema.js';
import { PodUnavailableBudgetSchema } from '../kruise/podunavailablebudget/schema.js';
import { NodeImageSchema, NodeImageV1beta1Schema } from '../kruise/nodeimage/schema.js';
import { SidecarSetSchema, SidecarSetV1beta1Schema } from '../kruise/sidecarset/schema.js';
import { StatefulSetSchema, StatefulSetV1alpha1Schema } from '../kruise/statefulset/schema.js';
import { WorkloadSpreadSchema } from '../kruise/workloadspread/schema.js';

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

/** One version of a CRD: whether the apiserver serves it, whether it is the one stored, its shape. */
export interface CrdVersion {
  readonly name: string;
  readonly served: boolean;
  readonly storage: boolean;
  readonly schema: TSchema;
  readonly printerColumns: readonly PrinterColumn[];
}

/**
 * How the apiserver converts between a CRD's versions. `None` only rewrites apiVersion (fields
 * the target schema lacks are pruned); `Webhook` calls the agent's conversion webhook (`/convert`).
 */
export type ConversionStrategy = 'None' | 'Webhook';

/**
 * One kind's CRD. Group, versions, kind, plural and scope are declared here and nowhere else:
 * the resource table (resources.ts) and every client's paths derive from them.
 */
export interface CrdDefinition {
  readonly group: string;
  /** Exactly one is the storage version; every one is served. */
  readonly versions: readonly CrdVersion[];
  readonly conversion: ConversionStrategy;
  readonly kind: KruiseKindName;
  readonly plural: string;
  readonly singular: string;
  readonly shortNames: readonly string[];
  readonly scope: 'Namespaced' | 'Cluster';
  readonly description: string;
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

/** Served and stored as v1alpha1 only (CloneSet at v1.9.0), so nothing converts. */
const v1alpha1Only = (schema: TSchema, printerColumns: readonly PrinterColumn[]): readonly CrdVersion[] => [
  { name: KRUISE_VERSION, served: true, storage: true, schema, printerColumns },
];

/** Served as v1alpha1 and v1beta1, stored as v1beta1, as OpenKruise v1.9 does for eight kinds. */
const v1beta1Stored = (
  alpha: Omit<CrdVersion, 'name' | 'served' | 'storage'>,
  beta: Omit<CrdVersion, 'name' | 'served' | 'storage'>,
): readonly CrdVersion[] => [
  { name: KRUISE_VERSION, served: true, storage: false, ...alpha },
  { name: KRUISE_V1BETA1, served: true, storage: true, ...beta },
];

const count = (name: string, jsonPath: string, description: string): PrinterColumn => ({
  name,
  type: 'integer',
  jsonPath,
  description,
});

const CLONESET_COLUMNS: readonly PrinterColumn[] = [
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
];

export const CLONESET_CRD: CrdDefinition = {
  group: KRUISE_GROUP,
  versions: v1alpha1Only(CloneSetSchema, CLONESET_COLUMNS),
  conversion: 'None',
  kind: KruiseKind.CloneSet,
  plural: 'clonesets',
  singular: 'cloneset',
  shortNames: ['clone'],
  scope: 'Namespaced',
  description: 'CloneSet manages a set of identical pods, with in-place update, partition, surge and lifecycle hooks.',
  scale: {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.status.labelSelector',
  },
};

const SIDECARSET_COLUMNS: readonly PrinterColumn[] = [
  count('MATCHED', '.status.matchedPods', 'The number of pods matched.'),
  count('UPDATED', '.status.updatedPods', 'The number of pods matched and updated.'),
  count('READY', '.status.readyPods', 'The number of pods matched and ready.'),
  AGE,
];

/** v1.9 converts SidecarSets through its webhook: namespace and customVersion have no 1:1 counterpart. */
export const SIDECARSET_CRD: CrdDefinition = {
  group: KRUISE_GROUP,
  versions: v1beta1Stored(
    { schema: SidecarSetSchema, printerColumns: SIDECARSET_COLUMNS },
    { schema: SidecarSetV1beta1Schema, printerColumns: SIDECARSET_COLUMNS },
  ),
  conversion: 'Webhook',
  kind: KruiseKind.SidecarSet,
  plural: 'sidecarsets',
  singular: 'sidecarset',
  shortNames: [],
  scope: 'Cluster',
  description: 'SidecarSet injects sidecar containers into matching pods and upgrades them in place.',
};

const IMAGEPULLJOB_V1BETA1_COLUMNS: readonly PrinterColumn[] = [
  count('TOTAL', '.status.desired', 'Number of all nodes matched by this job'),
  count('ACTIVE', '.status.active', 'Number of image pull task active'),
  count('SUCCEED', '.status.succeeded', 'Number of image pull task succeeded'),
  count('FAILED', '.status.failed', 'Number of image pull tasks failed'),
  AGE,
];

/** The two versions are the same schema; v1beta1 drops the MESSAGE column. */
export const IMAGEPULLJOB_CRD: CrdDefinition = {
  group: KRUISE_GROUP,
  versions: v1beta1Stored(
    {
      schema: ImagePullJobSchema,
      printerColumns: [
        ...IMAGEPULLJOB_V1BETA1_COLUMNS,
        {
          name: 'MESSAGE',
          type: 'string',
          jsonPath: '.status.message',
          description: 'Summary of status when job is failed',
        },
      ],
    },
    { schema: ImagePullJobSchema, printerColumns: IMAGEPULLJOB_V1BETA1_COLUMNS },
  ),
  conversion: 'None',
  kind: KruiseKind.ImagePullJob,
  plural: 'imagepulljobs',
  singular: 'imagepulljob',
  shortNames: [],
  scope: 'Namespaced',
  description: 'ImagePullJob pre-pulls an image on selected nodes.',
};

const NODEIMAGE_COLUMNS: readonly PrinterColumn[] = [
  count('DESIRED', '.status.desired', 'Number of all images on this node'),
  count('PULLING', '.status.pulling', 'Number of image pull task active'),
  count('SUCCEED', '.status.succeeded', 'Number of image pull task succeeded'),
  count('FAILED', '.status.failed', 'Number of image pull tasks failed'),
  AGE,
];

/** v1beta1 adds pull secrets' `mode`, which v1alpha1 readers do not see (strategy None, as v1.9). */
export const NODEIMAGE_CRD: CrdDefinition = {
  group: KRUISE_GROUP,
  versions: v1beta1Stored(
    { schema: NodeImageSchema, printerColumns: NODEIMAGE_COLUMNS },
    { schema: NodeImageV1beta1Schema, printerColumns: NODEIMAGE_COLUMNS },
  ),
  conversion: 'None',
  kind: KruiseKind.NodeImage,
  plural: 'nodeimages',
  singular: 'nodeimage',
  shortNames: [],
  scope: 'Cluster',
  description: 'NodeImage lists the images to keep pulled on one node (named like the node) and their pull status.',
};

const BROADCASTJOB_COLUMNS: readonly PrinterColumn[] = [
  count(
    'Desired',
    '.status.desired',
    'The desired number of pods. This is typically equal to the number of nodes satisfied to run pods.',
  ),
  count('Active', '.status.active', 'The number of actively running pods.'),
  count('Succeeded', '.status.succeeded', 'The number of pods which reached phase Succeeded.'),
  count('Failed', '.status.failed', 'The number of pods which reached phase Failed.'),
  AGE,
];

/** The two versions are the same schema (strategy None, as v1.9). */
export const BROADCASTJOB_CRD: CrdDefinition = {
  group: KRUISE_GROUP,
  versions: v1beta1Stored(
    { schema: BroadcastJobSchema, printerColumns: BROADCASTJOB_COLUMNS },
    { schema: BroadcastJobSchema, printerColumns: BROADCASTJOB_COLUMNS },
  ),
  conversion: 'None',
  kind: KruiseKind.BroadcastJob,
  plural: 'broadcastjobs',
  singular: 'broadcastjob',
  shortNames: ['bcj'],
  scope: 'Namespaced',
  description: 'BroadcastJob runs a pod to completion on every node it fits on.',
};

const STATEFULSET_COLUMNS: readonly PrinterColumn[] = [
  count('DESIRED', '.spec.replicas', 'The desired number of pods.'),
  count('CURRENT', '.status.replicas', 'The number of currently all pods.'),
  count('UPDATED', '.status.updatedReplicas', 'The number of pods updated.'),
  count('READY', '.status.readyReplicas', 'The number of pods ready.'),
  AGE,
  {
    name: 'CONTAINERS',
    type: 'string',
    jsonPath: '.spec.template.spec.containers[*].name',
    description: 'The containers of currently advanced statefulset.',
    priority: 1,
  },
  {
    name: 'IMAGES',
    type: 'string',
    jsonPath: '.spec.template.spec.containers[*].image',
    description: 'The images of currently advanced statefulset.',
    priority: 1,
  },
];

/** Advanced StatefulSet: v1alpha1 lacks several v1beta1 fields, so v1.9 converts through its webhook. */
export const STATEFULSET_CRD: CrdDefinition = {
  group: KRUISE_GROUP,
  versions: v1beta1Stored(
    { schema: StatefulSetV1alpha1Schema, printerColumns: STATEFULSET_COLUMNS },
    { schema: StatefulSetSchema, printerColumns: STATEFULSET_COLUMNS },
  ),
  conversion: 'Webhook',
  kind: KruiseKind.StatefulSet,
  plural: 'statefulsets',
  singular: 'statefulset',
  shortNames: ['sts', 'asts'],
  scope: 'Namespaced',
  description:
    'StatefulSet (Advanced) runs pods with stable ordinal names and storage, with in-place and parallel updates.',
  scale: {
    specReplicasPath: '.spec.replicas',
    statusReplicasPath: '.status.replicas',
    labelSelectorPath: '.status.labelSelector',
  },
};

const PUB_COLUMNS: readonly PrinterColumn[] = [
  count(
    'Allowed',
    '.status.unavailableAllowed',
    'UnavailableAllowed number of pod unavailable that are currently allowed',
  ),
  count('Current', '.status.currentAvailable', 'CurrentAvailable current number of available pods'),
  count('Desired', '.status.desiredAvailable', 'DesiredAvailable minimum desired number of available pods'),
  count('Total', '.status.totalReplicas', 'TotalReplicas total number of pods counted by this budget'),
];

/** policy.kruise.io, v1alpha1 only (as v1.9), with OpenKruise's printer columns (no AGE). */
export const PODUNAVAILABLEBUDGET_CRD: CrdDefinition = {
  group: PUB_GROUP,
  versions: v1alpha1Only(PodUnavailableBudgetSchema, PUB_COLUMNS),
  conversion: 'None',
  kind: KruiseKind.PodUnavailableBudget,
  plural: 'podunavailablebudgets',
  singular: 'podunavailablebudget',
  shortNames: ['pub'],
  scope: 'Namespaced',
  description: 'PodUnavailableBudget limits how many of a set of pods may be unavailable at once.',
};

const CRR_COLUMNS: readonly PrinterColumn[] = [
  { name: 'PHASE', type: 'string', jsonPath: '.status.phase', description: 'Phase of this ContainerRecreateRequest.' },
  { name: 'POD', type: 'string', jsonPath: '.spec.podName', description: 'Pod name of this ContainerRecreateRequest.' },
  {
    name: 'NODE',
    type: 'string',
    jsonPath: '.metadata.labels.crr\\.apps\\.kruise\\.io/node-name',
    description: 'Pod name of this ContainerRecreateRequest.',
  },
  AGE,
];

/** v1alpha1 only, as v1.9 serves it. */
export const CRR_CRD: CrdDefinition = {
  group: KRUISE_GROUP,
  versions: v1alpha1Only(ContainerRecreateRequestSchema, CRR_COLUMNS),
  conversion: 'None',
  kind: KruiseKind.ContainerRecreateRequest,
  plural: 'containerrecreaterequests',
  singular: 'containerrecreaterequest',
  shortNames: ['crr'],
  scope: 'Namespaced',
  description: 'ContainerRecreateRequest asks the node daemon to recreate containers of a pod in place.',
};

const WORKLOADSPREAD_COLUMNS: readonly PrinterColumn[] = [
  { name: 'WorkloadName', type: 'string', jsonPath: '.spec.targetRef.name', description: 'The target workload.' },
  {
    name: 'WorkloadKind',
    type: 'string',
    jsonPath: '.spec.targetRef.kind',
    description: 'The kind of the target workload.',
  },
  {
    name: 'Adaptive',
    type: 'boolean',
    jsonPath: '.spec.scheduleStrategy.type[?(@ == "Adaptive")]',
    description: 'Whether use the adaptive reschedule strategy',
  },
  { ...AGE, name: 'Age' },
];

/** v1alpha1 only, as v1.9 serves it, with OpenKruise's printer columns. */
export const WORKLOADSPREAD_CRD: CrdDefinition = {
  group: KRUISE_GROUP,
  versions: v1alpha1Only(WorkloadSpreadSchema, WORKLOADSPREAD_COLUMNS),
  conversion: 'None',
  kind: KruiseKind.WorkloadSpread,
  plural: 'workloadspreads',
  singular: 'workloadspread',
  shortNames: ['ws'],
  scope: 'Namespaced',
  description: 'WorkloadSpread spreads the pods of one workload over subsets of nodes, with a limit per subset.',
};

const DAEMONSET_COLUMNS: readonly PrinterColumn[] = [
  count('DESIRED', '.status.desiredNumberScheduled', 'The desired number of pods.'),
  count('CURRENT', '.status.currentNumberScheduled', 'The current number of pods.'),
  count('READY', '.status.numberReady', 'The ready number of pods.'),
  count('UP-TO-DATE', '.status.updatedNumberScheduled', 'The updated number of pods.'),
  count('AVAILABLE', '.status.numberAvailable', 'The updated number of pods.'),
  AGE,
  {
    name: 'CONTAINERS',
    type: 'string',
    jsonPath: '.spec.template.spec.containers[*].name',
    description: 'The containers of currently  daemonset.',
    priority: 1,
  },
  {
    name: 'IMAGES',
    type: 'string',
    jsonPath: '.spec.template.spec.containers[*].image',
    description: 'The images of currently advanced daemonset.',
    priority: 1,
  },
];

/** Advanced DaemonSet: v1.9 stores v1beta1 and converts through its webhook (Surging, scaleStrategy, hash). */
export const DAEMONSET_CRD: CrdDefinition = {
  group: KRUISE_GROUP,
  versions: v1beta1Stored(
    { schema: DaemonSetSchema, printerColumns: DAEMONSET_COLUMNS },
    { schema: DaemonSetV1beta1Schema, printerColumns: DAEMONSET_COLUMNS },
  ),
  conversion: 'Webhook',
  kind: KruiseKind.DaemonSet,
  plural: 'daemonsets',
  singular: 'daemonset',
  shortNames: ['daemon', 'ads'],
  scope: 'Namespaced',
  description:
    'DaemonSet (Advanced DaemonSet) runs one pod on every eligible node, with in-place and partitioned updates.',
};

/** Every CRD Flotilla serves, in a stable order. */
export const CRD_DEFINITIONS: readonly CrdDefinition[] = [
  CLONESET_CRD,
  SIDECARSET_CRD,
  IMAGEPULLJOB_CRD,
  NODEIMAGE_CRD,
  BROADCASTJOB_CRD,
  STATEFULSET_CRD,
  DAEMONSET_CRD,
  WORKLOADSPREAD_CRD,
  PODUNAVAILABLEBUDGET_CRD,
  CRR_CRD,
];
