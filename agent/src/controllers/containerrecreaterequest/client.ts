/**
 * The writes of the CRR manager — the pod's conditions, the CRR's metadata, status and deletion —
 * behind a small interface so the reconcile can be driven against a fake. Metadata and status go
 * out as merge patches guarded by the resourceVersion the plan was made from, so a plan made on a
 * stale cache fails with 409 and is made again.
 */
import type { ContainerRecreateRequest, CrrStatus } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import type { PodCondition } from '../../kube/types.js';
import { resourcePath, Resources } from '../../runtime/resource.js';
import { PatchType, type KubeRest } from '../../runtime/rest.js';

export interface CrrMetadataPatch {
  labels?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
  finalizers?: string[];
}

export interface CrrClient {
  /** Merges conditions (by type) into the pod's status. */
  patchPodConditions(namespace: string, pod: string, conditions: PodCondition[]): Promise<void>;
  patchMetadata(crr: ContainerRecreateRequest, patch: CrrMetadataPatch): Promise<void>;
  patchStatus(crr: ContainerRecreateRequest, status: CrrStatus): Promise<void>;
  /** Deletes the CRR with this uid; gone already is fine. */
  delete(crr: ContainerRecreateRequest): Promise<void>;
}

const pathOf = (crr: ContainerRecreateRequest, sub?: string): string =>
  resourcePath(Resources.containerRecreateRequests, crr.metadata?.namespace, crr.metadata?.name, sub);

export function kubeCrrClient(rest: KubeRest): CrrClient {
  return {
    async patchPodConditions(namespace, pod, conditions) {
      await rest.request({
        method: 'PATCH',
        path: resourcePath(Resources.pods, namespace, pod, 'status'),
        body: { status: { conditions } },
        contentType: PatchType.strategic,
      });
    },
    async patchMetadata(crr, patch) {
      await rest.request({
        method: 'PATCH',
        path: pathOf(crr),
        body: { metadata: { resourceVersion: crr.metadata?.resourceVersion, ...patch } },
        contentType: PatchType.merge,
      });
    },
    async patchStatus(crr, status) {
      await rest.request({
        method: 'PATCH',
        path: pathOf(crr, 'status'),
        body: { metadata: { resourceVersion: crr.metadata?.resourceVersion }, status },
        contentType: PatchType.merge,
      });
    },
    async delete(crr) {
      const uid = crr.metadata?.uid;
      try {
        await rest.request({
          method: 'DELETE',
          path: pathOf(crr),
          body: { apiVersion: 'v1', kind: 'DeleteOptions', ...(uid ? { preconditions: { uid } } : {}) },
        });
      } catch (err) {
        if (!isKubeStatus(err, 404) && !isKubeStatus(err, 409)) throw err;
      }
    },
  };
}
