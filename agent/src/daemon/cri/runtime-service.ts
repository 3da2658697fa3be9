/**
 * The slice of the CRI RuntimeService (runtime.v1) the node daemon uses to recreate containers
 * for ContainerRecreateRequests: find a pod's containers by the labels the kubelet puts on them,
 * read when one started, run its preStop command and stop it. Implemented over gRPC for real
 * runtimes (grpc-runtime-service.ts).
 */
import type { CallOptions } from './image-service.js';

/** Labels the kubelet sets on every container it creates (kubelet/types/labels.go). */
export const KUBELET_LABEL_POD_UID = 'io.kubernetes.pod.uid';
export const KUBELET_LABEL_CONTAINER_NAME = 'io.kubernetes.container.name';

export type RuntimeContainerState =
  'CONTAINER_CREATED' | 'CONTAINER_RUNNING' | 'CONTAINER_EXITED' | 'CONTAINER_UNKNOWN';

/** runtime.v1.Container plus the start time from ContainerStatus. */
export interface RuntimeContainer {
  id: string;
  podSandboxId: string;
  /** The pod's container name (metadata.name). */
  name: string;
  /** How many times the kubelet created it (metadata.attempt). */
  attempt: number;
  state: RuntimeContainerState;
  /** Milliseconds since the epoch. */
  createdAtMs: number;
  labels: Record<string, string>;
}

export interface RuntimeService {
  /** Containers whose labels include every pair of `labels`. */
  listContainers(labels: Record<string, string>, options?: CallOptions): Promise<RuntimeContainer[]>;
  /** When the container started (ms since the epoch), or undefined if it never did / is unknown. */
  startedAt(containerId: string, options?: CallOptions): Promise<number | undefined>;
  /** Runs a command in the container and waits up to timeoutSeconds (0: no limit). */
  execSync(containerId: string, cmd: string[], timeoutSeconds: number, options?: CallOptions): Promise<number>;
  /** The pod sandbox's IP ('' when it has none of its own, e.g. on the host network). */
  sandboxIp(podSandboxId: string, options?: CallOptions): Promise<string>;
  /** Stops the container: SIGTERM, then SIGKILL after timeoutSeconds. */
  stopContainer(containerId: string, timeoutSeconds: number, options?: CallOptions): Promise<void>;
  close(): void;
}
