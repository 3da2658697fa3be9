/**
 * The writes of the Advanced DaemonSet controller behind a small interface: pods and revisions
 * through the CloneSet client's calls (the same requests), and the set's status at v1beta1, the
 * version the controller reads, so it never waits on the conversion webhook the agent serves.
 */
import type { DaemonSetV1beta1 } from '@flotilla/api';
import { resourcePath, Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import { kubeCloneSetClient, type CloneSetClient } from '../cloneset/client.js';

export type DaemonSetClient = Pick<
  CloneSetClient,
  | 'createPod'
  | 'updatePod'
  | 'patchPodMetadata'
  | 'patchPodConditions'
  | 'deletePod'
  | 'createRevision'
  | 'getRevision'
  | 'updateRevision'
  | 'deleteRevision'
> & {
  /** Replaces the status subresource (guarded by the set's resourceVersion). */
  updateStatus(ds: DaemonSetV1beta1): Promise<DaemonSetV1beta1>;
};

export function kubeDaemonSetClient(rest: KubeRest): DaemonSetClient {
  const pods = kubeCloneSetClient(rest);
  return {
    createPod: (arg) => pods.createPod(arg),
    updatePod: (arg) => pods.updatePod(arg),
    patchPodMetadata: (pod, metadata) => pods.patchPodMetadata(pod, metadata),
    patchPodConditions: (pod, conditions) => pods.patchPodConditions(pod, conditions),
    deletePod: (arg) => pods.deletePod(arg),
    createRevision: (arg) => pods.createRevision(arg),
    getRevision: (namespace, name) => pods.getRevision(namespace, name),
    updateRevision: (arg) => pods.updateRevision(arg),
    deleteRevision: (arg) => pods.deleteRevision(arg),
    updateStatus: (ds) =>
      rest.request<DaemonSetV1beta1>({
        method: 'PUT',
        path: resourcePath(Resources.daemonSets, ds.metadata?.namespace, ds.metadata?.name, 'status'),
        body: ds,
      }),
  };
}
