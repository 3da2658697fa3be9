/**
 * Every write of the Advanced StatefulSet controller behind one small interface, so the
 * reconcile can run against a fake. Deletes carry a uid precondition (a namesake created
 * meanwhile is never deleted); a claim or revision that exists already is not an error.
 */
import type { StatefulSet, StatefulSetStatus } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import type { OwnerReference } from '../../runtime/kube-object.js';
import type { ControllerRevision, PersistentVolumeClaim, Pod, PodCondition } from '../../kube/types.js';
import { deleteIfSame } from '../../runtime/delete.js';
import { resourcePath, Resources, type ResourceRef } from '../../runtime/resource.js';
import { PatchType, type KubeRest } from '../../runtime/rest.js';

export interface StatefulSetClient {
  createPod(pod: Pod): Promise<void>;
  getPod(namespace: string, name: string): Promise<Pod>;
  /** Replaces the pod; 409 when its resourceVersion is stale. */
  updatePod(pod: Pod): Promise<Pod>;
  /** Merges these conditions (by type) into the pod status. */
  patchPodConditions(pod: Pod, conditions: PodCondition[]): Promise<Pod>;
  /** A strategic-merge patch of the pod's metadata (owner references when claiming). */
  patchPodMetadata(pod: Pod, metadata: Record<string, unknown>): Promise<Pod>;
  /** Deletes the pod with this uid; gone already is fine. */
  deletePod(pod: Pod): Promise<void>;
  /** Creates the claim; one of that name existing already is fine. */
  createClaim(claim: PersistentVolumeClaim): Promise<void>;
  /** Replaces the claim's owner references (guarded by its resourceVersion). */
  setClaimOwners(claim: PersistentVolumeClaim, ownerReferences: OwnerReference[]): Promise<void>;
  /** Deletes the claim of that name; gone already is fine. */
  deleteClaim(namespace: string, name: string): Promise<void>;
  createRevision(revision: ControllerRevision): Promise<ControllerRevision>;
  getRevision(namespace: string, name: string): Promise<ControllerRevision>;
  updateRevision(revision: ControllerRevision): Promise<ControllerRevision>;
  deleteRevision(revision: ControllerRevision): Promise<void>;
  /** Replaces the status subresource (guarded by the set's resourceVersion). */
  updateStatus(set: StatefulSet, status: StatefulSetStatus): Promise<StatefulSet>;
}

type Named = { metadata?: { namespace?: string; name?: string; uid?: string } };

const at = (ref: ResourceRef, obj: Named, sub?: string): string =>
  resourcePath(ref, obj.metadata?.namespace, obj.metadata?.name, sub);

/** The client over the raw JSON API. */
export function kubeStatefulSetClient(rest: KubeRest): StatefulSetClient {
  const { pods, persistentVolumeClaims: pvcs, controllerRevisions: revisions, statefulSets: sets } = Resources;
  return {
    createPod: (pod) =>
      rest.request<void>({
        method: 'POST',
        path: resourcePath(pods, pod.metadata.namespace),
        body: pod,
        discardBody: true,
      }),
    getPod: (namespace, name) => rest.request<Pod>({ method: 'GET', path: resourcePath(pods, namespace, name) }),
    updatePod: (pod) => rest.request<Pod>({ method: 'PUT', path: at(pods, pod), body: pod }),
    patchPodConditions: (pod, conditions) =>
      rest.request<Pod>({
        method: 'PATCH',
        path: at(pods, pod, 'status'),
        contentType: PatchType.strategic,
        body: { status: { conditions } },
      }),
    patchPodMetadata: (pod, metadata) =>
      rest.request<Pod>({ method: 'PATCH', path: at(pods, pod), contentType: PatchType.strategic, body: { metadata } }),
    deletePod: (pod) => deleteIfSame(rest, at(pods, pod), pod.metadata.uid),
    createClaim: async (claim) => {
      try {
        await rest.request({ method: 'POST', path: resourcePath(pvcs, claim.metadata.namespace), body: claim });
      } catch (err) {
        if (!isKubeStatus(err, 409)) throw err;
      }
    },
    setClaimOwners: async (claim, ownerReferences) => {
      await rest.request({
        method: 'PATCH',
        path: at(pvcs, claim),
        contentType: PatchType.merge,
        body: { metadata: { resourceVersion: claim.metadata.resourceVersion, ownerReferences } },
      });
    },
    deleteClaim: (namespace, name) => deleteIfSame(rest, resourcePath(pvcs, namespace, name), undefined),
    createRevision: (revision) =>
      rest.request<ControllerRevision>({
        method: 'POST',
        path: resourcePath(revisions, revision.metadata.namespace),
        body: revision,
      }),
    getRevision: (namespace, name) =>
      rest.request<ControllerRevision>({ method: 'GET', path: resourcePath(revisions, namespace, name) }),
    updateRevision: (revision) =>
      rest.request<ControllerRevision>({ method: 'PUT', path: at(revisions, revision), body: revision }),
    deleteRevision: (revision) => deleteIfSame(rest, at(revisions, revision), revision.metadata.uid),
    updateStatus: (set, status) =>
      rest.request<StatefulSet>({ method: 'PUT', path: at(sets, set, 'status'), body: { ...set, status } }),
  };
}
