/**
 * The WorkloadSpread controller's reads and writes against the apiserver — the target workload,
 * status, pod deletion costs, pods deleted for rescheduling — behind a small interface so the
 * reconcile can be driven against a fake.
 */
import { ANNOTATION_POD_DELETION_COST, type WorkloadSpread } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import { resourcePath, Resources, type ResourceRef } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import type { PodMetadataPatch } from './adopt.js';
import type { Workload } from './targets.js';

export interface WorkloadSpreadClient {
  /** The workload, or undefined when it does not exist. */
  getWorkload(ref: ResourceRef, namespace: string, name: string): Promise<Workload | undefined>;
  /** Replaces the status subresource; 409 when the resourceVersion is stale. */
  updateStatus(ws: WorkloadSpread): Promise<WorkloadSpread>;
  patchDeletionCost(namespace: string, pod: string, cost: string): Promise<void>;
  /** Merges labels and annotations into the pod's metadata (a strategic merge patch). */
  patchPodMetadata(namespace: string, pod: string, metadata: PodMetadataPatch): Promise<void>;
  /** Deletes the pod; gone already is fine. */
  deletePod(namespace: string, pod: string): Promise<void>;
}

export function kubeWorkloadSpreadClient(rest: KubeRest): WorkloadSpreadClient {
  return {
    getWorkload: async (ref, namespace, name) => {
      try {
        return await rest.request<Workload>({ method: 'GET', path: resourcePath(ref, namespace, name) });
      } catch (err) {
        if (isKubeStatus(err, 404)) return undefined;
        throw err;
      }
    },
    updateStatus: (ws) =>
      rest.request<WorkloadSpread>({
        method: 'PUT',
        path: resourcePath(Resources.workloadSpreads, ws.metadata?.namespace, ws.metadata?.name, 'status'),
        body: ws,
      }),
    patchDeletionCost: async (namespace, pod, cost) => {
      await rest.request({
        method: 'PATCH',
        path: resourcePath(Resources.pods, namespace, pod),
        contentType: 'application/strategic-merge-patch+json',
        body: { metadata: { annotations: { [ANNOTATION_POD_DELETION_COST]: cost } } },
      });
    },
    patchPodMetadata: async (namespace, pod, metadata) => {
      await rest.request({
        method: 'PATCH',
        path: resourcePath(Resources.pods, namespace, pod),
        contentType: 'application/strategic-merge-patch+json',
        body: { metadata },
        discardBody: true,
      });
    },
    deletePod: async (namespace, pod) => {
      try {
        await rest.request({ method: 'DELETE', path: resourcePath(Resources.pods, namespace, pod) });
      } catch (err) {
        if (!isKubeStatus(err, 404)) throw err;
      }
    },
  };
}
