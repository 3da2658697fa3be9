/**
 * The plain-JSON pod shape the SidecarSet webhook and controller read and write. Parts the code
 * does not look into stay open (`[field: string]: unknown`) so nothing is lost on a round trip.
 */
import type { Container, EnvVar, Volume } from '@flotilla/api';
import type { KubeObject, ObjectMeta } from '../../runtime/kube-object.js';

export type { Container, EnvVar, Volume };

export interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  subPathExpr?: string;
  readOnly?: boolean;
  [field: string]: unknown;
}

export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

export interface ContainerStatus {
  name: string;
  image?: string;
  imageID?: string;
  ready?: boolean;
  restartCount?: number;
  [field: string]: unknown;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  imagePullSecrets?: { name?: string }[];
  readinessGates?: { conditionType: string }[];
  nodeName?: string;
  [field: string]: unknown;
}

export interface PodStatus {
  phase?: string;
  conditions?: PodCondition[];
  containerStatuses?: ContainerStatus[];
  [field: string]: unknown;
}

export interface Pod extends KubeObject {
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}

/** A pod as an admission request carries it: anything may be missing. */
export interface MutablePod extends KubeObject {
  metadata?: ObjectMeta;
  spec?: Partial<PodSpec>;
  status?: PodStatus;
}

/** A Namespace: only its labels matter here. */
export interface Namespace extends KubeObject {
  metadata: ObjectMeta;
}

/** apps/v1 ControllerRevision. */
export interface ControllerRevision extends KubeObject {
  metadata: ObjectMeta;
  data: unknown;
  revision: number;
}
