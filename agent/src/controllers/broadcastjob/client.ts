/**
 * The writes of the BroadcastJob controller — pods created and deleted, the job's status and its
 * deletion after ttlSecondsAfterFinished — behind a small interface so the reconcile can be
 * driven against a fake.
 */
import type { BroadcastJob } from '@flotilla/api';
import type { MutablePod, Pod } from '../../kube/types.js';
import { deleteIfSame } from '../../runtime/delete.js';
import { resourcePath, Resources, type ResourceRef } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';

export interface BroadcastJobClient {
  createPod(pod: MutablePod): Promise<Pod>;
  /** Deletes the pod with this uid; gone already is fine. */
  deletePod(pod: Pod): Promise<void>;
  /** Replaces the status subresource; 409 when the job's resourceVersion is stale. */
  updateStatus(job: BroadcastJob): Promise<BroadcastJob>;
  /** Deletes the job with this uid (a recreated namesake survives); gone already is fine. */
  deleteJob(job: BroadcastJob): Promise<void>;
}

type Named = { metadata?: { namespace?: string; name?: string; uid?: string } };

const at = (ref: ResourceRef, obj: Named): string => resourcePath(ref, obj.metadata?.namespace, obj.metadata?.name);

/** The client over the raw JSON API. */
export function kubeBroadcastJobClient(rest: KubeRest): BroadcastJobClient {
  const jobs = Resources.broadcastJobs;
  return {
    createPod: (pod) =>
      rest.request<Pod>({ method: 'POST', path: resourcePath(Resources.pods, pod.metadata?.namespace), body: pod }),
    deletePod: (pod) => deleteIfSame(rest, at(Resources.pods, pod), pod.metadata?.uid),
    updateStatus: (job) =>
      rest.request<BroadcastJob>({
        method: 'PUT',
        path: resourcePath(jobs, job.metadata?.namespace, job.metadata?.name, 'status'),
        body: job,
      }),
    deleteJob: (job) => deleteIfSame(rest, at(jobs, job), job.metadata?.uid),
  };
}
