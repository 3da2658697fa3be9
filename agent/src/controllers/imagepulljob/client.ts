/**
 * The writes of the ImagePullJob controller — job status, finalizers and TTL deletion, pull
 * secret copies, the daemon config namespace — behind small interfaces so the reconcile is tested
 * against in-memory fakes.
 */
import type { ImagePullJob } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import { deleteIfSame } from '../../runtime/delete.js';
import { resourcePath, Resources } from '../../runtime/resource.js';
import { PatchType, type KubeRest } from '../../runtime/rest.js';
import type { SecretLike } from './secrets-plan.js';

export interface JobClient {
  /** Replaces the status subresource; 409 when `job.metadata.resourceVersion` is stale. */
  updateStatus(job: ImagePullJob): Promise<ImagePullJob>;
  /** Sets metadata.finalizers, guarded by the job's resourceVersion. */
  setFinalizers(job: ImagePullJob, finalizers: string[]): Promise<ImagePullJob>;
  /** Deletes this job (by uid, so a recreated namesake survives); absent is fine. */
  delete(job: ImagePullJob): Promise<void>;
}

export interface SecretClient {
  create(secret: SecretLike): Promise<SecretLike>;
  update(secret: SecretLike): Promise<SecretLike>;
  /** Deletes the secret with this uid; absent is fine. */
  delete(secret: SecretLike): Promise<void>;
  /** Creates the namespace unless it exists. */
  ensureNamespace(name: string): Promise<void>;
}

/** A JobClient over the raw JSON API. */
export function kubeJobClient(rest: KubeRest): JobClient {
  const ref = Resources.imagePullJobs;
  const path = (job: ImagePullJob, sub?: string): string =>
    resourcePath(ref, job.metadata?.namespace, job.metadata?.name, sub);
  return {
    updateStatus: (job) => rest.request<ImagePullJob>({ method: 'PUT', path: path(job, 'status'), body: job }),
    setFinalizers: (job, finalizers) =>
      rest.request<ImagePullJob>({
        method: 'PATCH',
        path: path(job),
        contentType: PatchType.merge,
        body: { metadata: { finalizers, resourceVersion: job.metadata?.resourceVersion } },
      }),
    delete: (job) => deleteIfSame(rest, path(job), job.metadata?.uid),
  };
}

/** A SecretClient over the raw JSON API. */
export function kubeSecretClient(rest: KubeRest): SecretClient {
  const path = (s: SecretLike): string => resourcePath(Resources.secrets, s.metadata?.namespace, s.metadata?.name);
  return {
    create: (s) =>
      rest.request<SecretLike>({
        method: 'POST',
        path: resourcePath(Resources.secrets, s.metadata?.namespace),
        body: s,
      }),
    update: (s) => rest.request<SecretLike>({ method: 'PUT', path: path(s), body: s }),
    delete: (s) => deleteIfSame(rest, path(s), s.metadata?.uid),
    async ensureNamespace(name) {
      try {
        await rest.request({ method: 'GET', path: resourcePath(Resources.namespaces, undefined, name) });
      } catch (err) {
        if (!isKubeStatus(err, 404)) throw err;
        try {
          await rest.request({
            method: 'POST',
            path: resourcePath(Resources.namespaces),
            body: { metadata: { name } },
          });
        } catch (createErr) {
          if (!isKubeStatus(createErr, 409)) throw createErr;
        }
      }
    },
  };
}
