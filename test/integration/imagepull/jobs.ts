/** ImagePullJobs, secrets and events of the image-pull suite, through the raw JSON API. */
import type { KubeRest } from '../../../agent/src/runtime/index.js';
import { eventually } from '../helpers/kube.js';
import type { ImagePullEnv } from './env.js';

const JOBS = '/apis/apps.kruise.io/v1alpha1/namespaces';

export interface JobJson {
  metadata: { name: string; namespace: string; uid: string; finalizers?: string[] };
  spec: Record<string, unknown>;
  status?: {
    startTime?: string;
    completionTime?: string;
    desired: number;
    active?: number;
    succeeded?: number;
    failed?: number;
    failedNodes?: string[];
    message?: string;
  };
}

/** Creates an ImagePullJob labelled for the suite's controllers (no webhook: stored as given). */
export function createJob(
  env: ImagePullEnv,
  ns: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<JobJson> {
  return env.rest.request<JobJson>({
    method: 'POST',
    path: `${JOBS}/${ns}/imagepulljobs`,
    body: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: { name, namespace: ns, labels: env.jobLabels },
      spec,
    },
  });
}

export async function getJob(rest: KubeRest, ns: string, name: string): Promise<JobJson | undefined> {
  try {
    return await rest.request<JobJson>({ method: 'GET', path: `${JOBS}/${ns}/imagepulljobs/${name}` });
  } catch (err) {
    if ((err as { status?: number }).status === 404) return undefined;
    throw err;
  }
}

/** Waits until the job's status satisfies `ok`; fails with the last status seen. */
export function waitForJob(
  env: ImagePullEnv,
  ns: string,
  name: string,
  what: string,
  ok: (status: NonNullable<JobJson['status']>) => boolean,
  timeoutMs = 60_000,
): Promise<JobJson> {
  return eventually(
    `${ns}/${name}: ${what}`,
    async () => {
      const job = await getJob(env.rest, ns, name);
      if (job?.status && ok(job.status)) return job;
      throw new Error(`status ${JSON.stringify(job?.status)}`);
    },
    timeoutMs,
  );
}

/** Deletes the job and waits until the controller has released it (finalizer gone). */
export async function deleteJob(env: ImagePullEnv, ns: string, name: string): Promise<void> {
  await env.rest.request({ method: 'DELETE', path: `${JOBS}/${ns}/imagepulljobs/${name}` }).catch(() => undefined);
  await eventually(`${ns}/${name} deleted`, async () => (await getJob(env.rest, ns, name)) === undefined, 30_000);
}

export interface EventJson {
  type: string;
  reason: string;
  message: string;
  involvedObject: { kind?: string; name?: string };
  source?: { component?: string; host?: string };
}

/** Events about the object `name` in `ns`. */
export async function eventsFor(rest: KubeRest, ns: string, name: string): Promise<EventJson[]> {
  const list = await rest.request<{ items: EventJson[] }>({
    method: 'GET',
    path: `/api/v1/namespaces/${ns}/events`,
    query: { fieldSelector: `involvedObject.name=${name}` },
  });
  return list.items;
}

/** A kubernetes.io/dockerconfigjson secret for one registry. */
export function createPullSecret(
  rest: KubeRest,
  ns: string,
  name: string,
  registry: string,
  username: string,
  password: string,
): Promise<unknown> {
  const config = { auths: { [registry]: { auth: Buffer.from(`${username}:${password}`).toString('base64') } } };
  return rest.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/secrets`,
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: ns },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(JSON.stringify(config)).toString('base64') },
    },
  });
}

/** Copies of pull secrets in the daemon config namespace that came from `ns`. */
export async function secretCopiesFrom(rest: KubeRest, ns: string): Promise<{ metadata: SecretMeta }[]> {
  try {
    const list = await rest.request<{ items: { metadata: SecretMeta }[] }>({
      method: 'GET',
      path: '/api/v1/namespaces/kruise-daemon-config/secrets',
    });
    return list.items.filter((s) =>
      (s.metadata.annotations?.['imagepulljobs.kruise.io/source-key'] ?? '').startsWith(`${ns}/`),
    );
  } catch (err) {
    if ((err as { status?: number }).status === 404) return [];
    throw err;
  }
}

interface SecretMeta {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
