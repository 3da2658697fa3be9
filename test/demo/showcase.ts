/**
 * The demo's SidecarSet and ImagePullJob: placing them on the fleet through the hub, and reading
 * back in every cluster what they did (a sidecar in the CloneSet's pods, an image on every node).
 */
import { KruiseResources } from '@flotilla/api';
import { CoreV1Api, CustomObjectsApi, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import type { Fleet } from '../fleet/fleet.js';

const INJECTED = 'kruise.io/sidecarset-injected-list';

/** A SidecarSet adding `container` (one image) to the pods labelled app=`app` in `namespace`. */
export async function placeSidecarSet(
  fleet: Fleet,
  o: {
    name: string;
    container: string;
    namespace: string;
    app: string;
    image: string;
    selector: Record<string, string>;
    labels: Record<string, string>;
  },
): Promise<string> {
  const created = await fleet.api<{ id: string }>('POST', '/workloads', {
    kind: 'SidecarSet',
    name: o.name,
    metadata: { labels: o.labels },
    spec: {
      selector: { matchLabels: { app: o.app } },
      namespace: o.namespace,
      containers: [{ name: o.container, image: o.image }],
    },
    placement: { clusterSelector: { matchLabels: o.selector } },
  });
  return created.id;
}

/** An ImagePullJob pulling `image` onto every node of every selected cluster, once. */
export async function placeImagePullJob(
  fleet: Fleet,
  o: {
    name: string;
    namespace: string;
    image: string;
    selector: Record<string, string>;
    labels: Record<string, string>;
  },
): Promise<string> {
  const created = await fleet.api<{ id: string }>('POST', '/workloads', {
    kind: 'ImagePullJob',
    name: o.name,
    namespace: o.namespace,
    metadata: { labels: o.labels },
    spec: {
      image: o.image,
      parallelism: 2,
      pullPolicy: { timeoutSeconds: 60, backoffLimit: 2 },
      completionPolicy: { type: 'Always', activeDeadlineSeconds: 120 },
    },
    placement: { clusterSelector: { matchLabels: o.selector } },
  });
  return created.id;
}

/** What one cluster's kube API says about the demo's objects. */
export interface ClusterReader {
  /** True once a pod labelled app=`app` would be admitted with SidecarSet `set`'s `container` (dry run). */
  injects(namespace: string, app: string, set: string, container: string): Promise<boolean>;
  /** Pods labelled app=`app`, and how many of them carry SidecarSet `set`'s `container`. */
  sidecarCount(
    namespace: string,
    app: string,
    set: string,
    container: string,
  ): Promise<{ pods: number; injected: number }>;
  /** The ImagePullJob's counts, or undefined before the agent created it. */
  pullJob(namespace: string, name: string): Promise<PullJobStatus | undefined>;
}

export interface PullJobStatus {
  desired: number;
  succeeded: number;
  failed: number;
  completed: boolean;
}

export function clusterReader(kubeconfigPath: string): ClusterReader {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const hasSidecar = (p: V1Pod, set: string, container: string): boolean =>
    (p.metadata?.annotations?.[INJECTED] ?? '').split(',').includes(set) &&
    (p.spec?.containers ?? []).some((c) => c.name === container);
  return {
    async injects(namespace, app, set, container) {
      const pod = await core.createNamespacedPod({
        namespace,
        dryRun: 'All',
        body: {
          metadata: { generateName: `${app}-probe-`, labels: { app } },
          spec: { containers: [{ name: 'main', image: 'probe' }] },
        },
      });
      return hasSidecar(pod, set, container);
    },
    async sidecarCount(namespace, app, set, container) {
      const pods = (await core.listNamespacedPod({ namespace, labelSelector: `app=${app}` })).items;
      return { pods: pods.length, injected: pods.filter((p) => hasSidecar(p, set, container)).length };
    },
    async pullJob(namespace, name) {
      const { group, version, plural } = KruiseResources.ImagePullJob;
      let job: { status?: Partial<PullJobStatus> & { completionTime?: string } };
      try {
        job = (await custom.getNamespacedCustomObject({ group, version, plural, namespace, name })) as typeof job;
      } catch (err) {
        if ((err as { code?: number }).code === 404) return undefined;
        throw err;
      }
      const s = job.status ?? {};
      return {
        desired: s.desired ?? 0,
        succeeded: s.succeeded ?? 0,
        failed: s.failed ?? 0,
        completed: s.completionTime !== undefined,
      };
    },
  };
}
