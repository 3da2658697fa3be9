/**
 * The plain-JSON shapes of the objects the CloneSet controller reads and writes, as the runtime's
 * informers hand them out (timestamps are RFC 3339 strings). Only the fields the controller looks
 * at are typed; everything else passes through untouched.
 */
import type { Container, PodTemplateSpec } from '@flotilla/api';
import type { KubeObject, ObjectMeta } from '../../runtime/kube-object.js';

export type { CloneSet } from '@flotilla/api';

/** corev1.PodCondition. */
export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
}

/** corev1.ContainerStatus, the fields in-place update and the sorters read. */
export interface ContainerStatus {
  name: string;
  image?: string;
  imageID?: string;
  containerID?: string;
  ready?: boolean;
  restartCount?: number;
  [field: string]: unknown;
}

export interface PodSpec {
  nodeName?: string;
  containers: Container[];
  readinessGates?: { conditionType: string }[];
  volumes?: { name: string; [source: string]: unknown }[];
  topologySpreadConstraints?: { topologyKey: string; [field: string]: unknown }[];
  [field: string]: unknown;
}

export interface PodStatus {
  phase?: string;
  conditions?: PodCondition[];
  containerStatuses?: ContainerStatus[];
  [field: string]: unknown;
}

/** corev1.Pod. */
export interface Pod extends KubeObject {
  metadata: ObjectMeta & { name: string; namespace?: string };
  spec: PodSpec;
  status?: PodStatus;
}

/** corev1.PersistentVolumeClaim. */
export interface PersistentVolumeClaim extends KubeObject {
  metadata: ObjectMeta & { name: string };
  spec?: Record<string, unknown>;
  [field: string]: unknown;
}

/** apps/v1 ControllerRevision. `data` is the raw revision patch, as OpenKruise stores it. */
export interface ControllerRevision extends KubeObject {
  metadata: ObjectMeta & { name: string };
  data?: unknown;
  revision: number;
}

/** The pod template as a revision's data carries it. */
export type Template = PodTemplateSpec;
