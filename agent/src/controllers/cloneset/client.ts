/**
 * Every write the CloneSet controller makes, behind one small interface so the actors are tested
 * against an in-memory fake and run against the apiserver through the raw JSON client. Deletes
 * carry a uid precondition, so a namesake created meanwhile is never deleted by mistake.
 */
import type { CloneSetStatus } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import { resourcePath, Resources, type ResourceRef } from '../../runtime/resource.js';
import { PatchType, type KubeRest } from '../../runtime/rest.js';
import type { ResizePatch } from './inplace-resources.js';
import type { ControllerRevision, PersistentVolumeClaim, Pod, PodCondition } from '../../kube/types.js';
import type { CloneSet } from './types.js';

export interface CloneSetClient {
  /** Creates the pod; its answer is not read (the informer brings the pod). */
  createPod(pod: Pod): Promise<void>;
  getPod(namespace: string, name: string): Promise<Pod>;
  /** Replaces the pod (spec, labels, annotations); 409 when its resourceVersion is stale. */
  updatePod(pod: Pod): Promise<Pod>;
  /** A strategic-merge patch of the pod's metadata. */
  patchPodMetadata(pod: Pod, metadata: Record<string, unknown>): Promise<Pod>;
  /** A strategic-merge patch of the pod's `resize` subresource (container cpu/memory, Kubernetes ≥ 1.32). */
  resizePod(pod: Pod, patch: ResizePatch): Promise<Pod>;
  /** The apiserver's gitVersion (`/version`), e.g. "v1.36.3". */
  serverVersion(): Promise<string>;
  /** Merges these conditions (by type) into the pod status. */
  patchPodConditions(pod: Pod, conditions: PodCondition[]): Promise<Pod>;
  /** Deletes the pod with this uid; false when it was already gone. */
  deletePod(pod: Pod): Promise<boolean>;
  createClaim(claim: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
  updateClaim(claim: PersistentVolumeClaim): Promise<PersistentVolumeClaim>;
  /** Deletes the claim with this uid; false when it was already gone. */
  deleteClaim(claim: PersistentVolumeClaim): Promise<boolean>;
  createRevision(revision: ControllerRevision): Promise<ControllerRevision>;
  getRevision(namespace: string, name: string): Promise<ControllerRevision>;
  updateRevision(revision: ControllerRevision): Promise<ControllerRevision>;
  deleteRevision(revision: ControllerRevision): Promise<boolean>;
  getCloneSet(namespace: string, name: string): Promise<CloneSet>;
  /** Replaces the status subresource of `cs` (guarded by its resourceVersion). */
  updateStatus(cs: CloneSet, status: CloneSetStatus): Promise<CloneSet>;
  /** Sets spec.scaleStrategy.podsToDelete, guarded by the CloneSet's resourceVersion. */
  setPodsToDelete(cs: CloneSet, names: string[]): Promise<CloneSet>;
}

const PVCS = Resources.persistentVolumeClaims;

function path(ref: ResourceRef, obj: { metadata?: { namespace?: string; name?: string } }, sub?: string): string {
  return resourcePath(ref, obj.metadata?.namespace, obj.metadata?.name, sub);
}

/** DELETE with a uid precondition; a 404 (already gone) resolves false. */
async function deleteByUid(rest: KubeRest, at: string, uid: string | undefined): Promise<boolean> {
  try {
    await rest.request({
      method: 'DELETE',
      path: at,
      body: uid ? { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid } } : undefined,
    });
    return true;
  } catch (err) {
    if (isKubeStatus(err, 404)) return false;
    throw err;
  }
}

/** A CloneSetClient over the raw JSON API. */
export function kubeCloneSetClient(rest: KubeRest): CloneSetClient {
  const pods = Resources.pods;
  const revisions = Resources.controllerRevisions;
  const sets = Resources.cloneSets;
  return {
    createPod: (pod) =>
      rest.request<void>({
        method: 'POST',
        path: resourcePath(pods, pod.metadata.namespace),
        body: pod,
        discardBody: true,
      }),
    getPod: (namespace, name) => rest.request<Pod>({ method: 'GET', path: resourcePath(pods, namespace, name) }),
    updatePod: (pod) => rest.request<Pod>({ method: 'PUT', path: path(pods, pod), body: pod }),
    patchPodMetadata: (pod, metadata) =>
      rest.request<Pod>({
        method: 'PATCH',
        path: path(pods, pod),
        contentType: PatchType.strategic,
        body: { metadata },
      }),
    resizePod: (pod, patch) =>
      rest.request<Pod>({
        method: 'PATCH',
        path: path(pods, pod, 'resize'),
        contentType: PatchType.strategic,
        body: patch,
      }),
    serverVersion: async () =>
      (await rest.request<{ gitVersion: string }>({ method: 'GET', path: '/version' })).gitVersion,
    patchPodConditions: (pod, conditions) =>
      rest.request<Pod>({
        method: 'PATCH',
        path: path(pods, pod, 'status'),
        contentType: PatchType.strategic,
        body: { status: { conditions } },
      }),
    deletePod: (pod) => deleteByUid(rest, path(pods, pod), pod.metadata.uid),
    createClaim: (claim) =>
      rest.request<PersistentVolumeClaim>({
        method: 'POST',
        path: resourcePath(PVCS, claim.metadata.namespace),
        body: claim,
      }),
    updateClaim: (claim) =>
      rest.request<PersistentVolumeClaim>({ method: 'PUT', path: path(PVCS, claim), body: claim }),
    deleteClaim: (claim) => deleteByUid(rest, path(PVCS, claim), claim.metadata.uid),
    createRevision: (revision) =>
      rest.request<ControllerRevision>({
        method: 'POST',
        path: resourcePath(revisions, revision.metadata.namespace),
        body: revision,
      }),
    getRevision: (namespace, name) =>
      rest.request<ControllerRevision>({ method: 'GET', path: resourcePath(revisions, namespace, name) }),
    updateRevision: (revision) =>
      rest.request<ControllerRevision>({ method: 'PUT', path: path(revisions, revision), body: revision }),
    deleteRevision: (revision) => deleteByUid(rest, path(revisions, revision), revision.metadata.uid),
    getCloneSet: (namespace, name) =>
      rest.request<CloneSet>({ method: 'GET', path: resourcePath(sets, namespace, name) }),
    updateStatus: (cs, status) =>
      rest.request<CloneSet>({ method: 'PUT', path: path(sets, cs, 'status'), body: { ...cs, status } }),
    setPodsToDelete: (cs, names) =>
      rest.request<CloneSet>({
        method: 'PATCH',
        path: path(sets, cs),
        contentType: PatchType.merge,
        body: {
          metadata: { resourceVersion: cs.metadata?.resourceVersion },
          spec: { scaleStrategy: { podsToDelete: names.length > 0 ? names : null } },
        },
      }),
  };
}
