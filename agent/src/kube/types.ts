/**
 * The plain-JSON shapes of the core Kubernetes objects the agent's components read and write,
 * as the runtime's informers hand them out (timestamps are RFC 3339 strings). Only the fields
 * some component looks at are typed; the rest stays open (`[field: string]: unknown`) so nothing
 * is lost on a round trip. Kruise kinds are api's (`@flotilla/api`).
 */
import type { Container, Volume } from '@flotilla/api';
import type { KubeObject, ObjectMeta } from '../runtime/kube-object.js';

/** corev1.PodCondition. */
export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string | null;
}

/** corev1.ContainerStatus: what in-place updates, sorters and sidecar checks read. */
export interface ContainerStatus {
  name: string;
  image?: string;
  imageID?: string;
  containerID?: string;
  ready?: boolean;
  restartCount?: number;
  [field: string]: unknown;
}

/** corev1.VolumeMount. */
export interface VolumeMount {
  name: string;
  mountPath: string;
  subPath?: string;
  subPathExpr?: string;
  readOnly?: boolean;
  [field: string]: unknown;
}

/** corev1.PodSpec. */
export interface PodSpec {
  nodeName?: string;
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  imagePullSecrets?: { name?: string }[];
  readinessGates?: { conditionType: string }[];
  topologySpreadConstraints?: { topologyKey: string; [field: string]: unknown }[];
  [field: string]: unknown;
}

/** corev1.PodStatus. */
export interface PodStatus {
  phase?: string;
  conditions?: PodCondition[];
  containerStatuses?: ContainerStatus[];
  [field: string]: unknown;
}

/** corev1.Pod, as stored: it has a name. */
export interface Pod extends KubeObject {
  metadata: ObjectMeta & { name: string };
  spec: PodSpec;
  status?: PodStatus;
}

/** A pod as an admission request carries it: anything may be missing (generateName, no spec yet). */
export interface MutablePod extends KubeObject {
  metadata?: ObjectMeta;
  spec?: Partial<PodSpec>;
  status?: PodStatus;
}

/** corev1.Namespace: only its labels are read. */
export interface Namespace extends KubeObject {
  metadata: ObjectMeta;
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
