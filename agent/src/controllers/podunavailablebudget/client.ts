/**
 * What the PodUnavailableBudget controller reads and writes over the apiserver, behind a small
 * interface (tests drive the reconcile against a fake): the workloads whose replicas a budget is
 * measured against, the related-pub annotation on pods, and the budget's status.
 */
import { ANNOTATION_RELATED_PUB, type PodUnavailableBudget } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import type { LabelSelector } from '../../runtime/label-selector.js';
import { groupOf, type OwnerReference } from '../../runtime/kube-object.js';
import { resourcePath, Resources, type ResourceRef } from '../../runtime/resource.js';
import { PatchType, type KubeRest } from '../../runtime/rest.js';

/** A workload as far as a budget cares: its replicas, its pod selector, its own controller. */
export interface Workload {
  replicas: number;
  selector: LabelSelector | undefined;
  owner: OwnerReference | undefined;
}

/** A workload named by apiVersion, kind and name in a namespace. */
export interface WorkloadRef {
  apiVersion: string;
  kind: string;
  name: string;
}

export interface PubClient {
  /** The workload, or undefined when it does not exist (or its kind is not served). */
  workload(namespace: string, ref: WorkloadRef): Promise<Workload | undefined>;
  /** Sets the related-pub annotation on a pod; a pod gone meanwhile is fine. */
  bindPod(namespace: string, pod: string, pub: string): Promise<void>;
  /** Replaces the status subresource; 409 when the budget's resourceVersion is stale. */
  updateStatus(pub: PodUnavailableBudget): Promise<PodUnavailableBudget>;
  /** The budget as the apiserver has it now, or undefined when it is gone. */
  get(namespace: string, name: string): Promise<PodUnavailableBudget | undefined>;
}

/** The REST resource of a workload kind: its group and version from apiVersion, plural by convention. */
export function workloadResource(ref: WorkloadRef): ResourceRef {
  const slash = ref.apiVersion.indexOf('/');
  return {
    group: groupOf(ref.apiVersion),
    version: slash < 0 ? ref.apiVersion : ref.apiVersion.slice(slash + 1),
    plural: `${ref.kind.toLowerCase()}s`,
    kind: ref.kind,
    namespaced: true,
  };
}

interface WorkloadObject {
  metadata?: { ownerReferences?: OwnerReference[] };
  spec?: { replicas?: number; selector?: LabelSelector };
}

export function kubePubClient(rest: KubeRest): PubClient {
  return {
    async workload(namespace, ref) {
      try {
        const obj = await rest.request<WorkloadObject>({
          method: 'GET',
          path: resourcePath(workloadResource(ref), namespace, ref.name),
        });
        return {
          // The apiserver defaults replicas to 1 for every workload kind that has them.
          replicas: obj.spec?.replicas ?? 1,
          selector: obj.spec?.selector,
          owner: obj.metadata?.ownerReferences?.find((r) => r.controller),
        };
      } catch (err) {
        if (isKubeStatus(err, 404)) return undefined;
        throw err;
      }
    },
    async bindPod(namespace, pod, pub) {
      try {
        await rest.request({
          method: 'PATCH',
          path: resourcePath(Resources.pods, namespace, pod),
          contentType: PatchType.merge,
          body: { metadata: { annotations: { [ANNOTATION_RELATED_PUB]: pub } } },
          discardBody: true,
        });
      } catch (err) {
        if (!isKubeStatus(err, 404)) throw err;
      }
    },
    async get(namespace, name) {
      try {
        return await rest.request<PodUnavailableBudget>({
          method: 'GET',
          path: resourcePath(Resources.podUnavailableBudgets, namespace, name),
        });
      } catch (err) {
        if (isKubeStatus(err, 404)) return undefined;
        throw err;
      }
    },
    updateStatus: (pub) =>
      rest.request<PodUnavailableBudget>({
        method: 'PUT',
        path: resourcePath(Resources.podUnavailableBudgets, pub.metadata?.namespace, pub.metadata?.name, 'status'),
        body: pub,
      }),
  };
}
