/**
 * The ImagePullJob controller: pre-pulls an image on selected nodes by writing tags into their
 * NodeImages (the node daemon pulls and reports), within a parallelism window, copying pull
 * secrets into the daemon's config namespace, and reports desired/active/succeeded/failed.
 */
import {
  ANNOTATION_IMAGEPULLJOB_SOURCE_KEY,
  KRUISE_DAEMON_CONFIG_NAMESPACE,
  type ImagePullJob,
  type NodeImage,
} from '@flotilla/api';
import { BY_NODE_NAME } from '../../runtime/cache.js';
import { systemClock, type Clock } from '../../runtime/clock.js';
import type { ComponentRegistrar } from '../../runtime/component.js';
import type { Controller } from '../../runtime/controller.js';
import type { EventRecorder } from '../../runtime/events.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import type { Informer } from '../../runtime/informer.js';
import type { KubeObject } from '../../runtime/kube-object.js';
import { Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import { kubeJobClient, kubeSecretClient, type JobClient, type SecretClient } from './client.js';
import { imagePullJobReconciler, type ImagePullJobControllerOptions } from './controller.js';
import type { SecretLister } from './secret-sync.js';
import {
  BY_PULL_SECRET,
  nodeImageToJobs,
  podToJobs,
  pullSecretKeys,
  secretToJobs,
  type HandlerSources,
} from './handlers.js';
import { referencesOf, type SecretLike } from './secrets-plan.js';
import { DEFAULT_TTL_MARGIN } from './sync-plan.js';
import type { PodLike } from './targets.js';
import { kubeNodeImageClient, type NodeImageClient } from '../../kube/nodeimage-client.js';

export type { ImagePullJobControllerOptions } from './controller.js';
export { MESSAGE_COMPLETED, MESSAGE_DEADLINE, MESSAGE_NO_PROGRESS } from './status.js';

export const DEFAULT_IMAGEPULLJOB_OPTIONS: ImagePullJobControllerOptions = {
  daemonConfigNamespace: KRUISE_DAEMON_CONFIG_NAMESPACE,
  ttlMargin: DEFAULT_TTL_MARGIN,
  expectationRequeueMs: 1000,
};

export interface ImagePullJobControllerDeps {
  rest: KubeRest;
  events: EventRecorder;
  options?: Partial<ImagePullJobControllerOptions>;
  clock?: Clock;
  random?: () => number;
  /** Fakes for tests; the API otherwise. */
  clients?: { nodeImages?: NodeImageClient; jobs?: JobClient; secrets?: SecretClient };
}

/** Registers the ImagePullJob controller and its informers with the manager. */
export function registerImagePullJobController(
  manager: ComponentRegistrar,
  deps: ImagePullJobControllerDeps,
): Controller {
  const options = { ...DEFAULT_IMAGEPULLJOB_OPTIONS, ...deps.options };
  const clock = deps.clock ?? systemClock;
  const jobs = manager.informer<ImagePullJob>({
    resource: Resources.imagePullJobs,
    labelSelector: options.scope?.jobSelector,
    indexers: { [BY_PULL_SECRET]: pullSecretKeys },
  });
  const nodeImages = manager.informer<NodeImage>({
    resource: Resources.nodeImages,
    labelSelector: options.scope?.nodeSelector,
  });
  const pods = manager.informer<PodLike>({ resource: Resources.pods });
  const secretInformers = secretInformersFor(manager, options);
  const secrets = secretLister(secretInformers);
  const resourceVersions = new ResourceVersionExpectations({ clock });
  const secretCreations = new ScaleExpectations({ clock });
  const controller = manager.controller({
    name: 'imagepulljob',
    workers: 3,
    reconcile: imagePullJobReconciler({
      jobs,
      secrets,
      targets: {
        nodeImages: () => nodeImages.list(),
        nodeImage: (name) => nodeImages.get(undefined, name),
        pods: (namespace) => pods.list(namespace),
      },
      nodeImages: deps.clients?.nodeImages ?? kubeNodeImageClient(deps.rest),
      jobClient: deps.clients?.jobs ?? kubeJobClient(deps.rest),
      secretClient: deps.clients?.secrets ?? kubeSecretClient(deps.rest),
      resourceVersions,
      secretCreations,
      events: deps.events,
      clock,
      random: deps.random ?? Math.random,
      options,
    }),
  });
  const sources: HandlerSources = {
    jobs: (namespace) => jobs.list(namespace),
    jobsUsingSecret: (key) => jobs.byIndex(BY_PULL_SECRET, key),
    podsOnNode: (node) => pods.byIndex(BY_NODE_NAME, node),
  };
  controller.watch(jobs);
  controller.watch(nodeImages, nodeImageToJobs(sources));
  controller.watch(pods, podToJobs(sources));
  for (const informer of secretInformers.values()) controller.watch(informer, secretToJobs(sources));
  observeWrites(resourceVersions, jobs);
  observeWrites(resourceVersions, nodeImages);
  for (const informer of secretInformers.values()) {
    observeSecretCopies(secretCreations, informer, options.daemonConfigNamespace);
  }
  return controller;
}

/**
 * One Secret informer over all namespaces, or (pullSecretNamespaces set) one per listed namespace
 * plus the daemon config namespace, so a namespace-scoped Role per namespace is all the agent needs.
 * Keyed by namespace; `*` for the cluster-wide one.
 */
function secretInformersFor(
  manager: ComponentRegistrar,
  options: ImagePullJobControllerOptions,
): Map<string, Informer<SecretLike>> {
  if (options.pullSecretNamespaces === undefined) {
    return new Map([['*', manager.informer<SecretLike>({ resource: Resources.secrets })]]);
  }
  const namespaces = new Set([options.daemonConfigNamespace, ...options.pullSecretNamespaces]);
  return new Map(
    [...namespaces].map((ns) => [ns, manager.informer<SecretLike>({ resource: Resources.secrets, namespace: ns })]),
  );
}

/** Reads through the informers of secretInformersFor; a namespace without one has no secrets. */
function secretLister(informers: Map<string, Informer<SecretLike>>): SecretLister {
  const all = informers.get('*');
  if (all) return all;
  return {
    namespaces: [...informers.keys()],
    get: (namespace, name) => (namespace === undefined ? undefined : informers.get(namespace)?.get(namespace, name)),
    list: (namespace) =>
      namespace === undefined
        ? [...informers.values()].flatMap((i) => i.list())
        : (informers.get(namespace)?.list(namespace) ?? []),
  };
}

/** The informers tell the expectations which of the controller's own writes they have seen. */
function observeWrites<T extends KubeObject>(expectations: ResourceVersionExpectations, informer: Informer<T>): void {
  informer.addEventHandler({
    onAdd: (obj) => expectations.observed(obj),
    onUpdate: (_old, obj) => expectations.observed(obj),
    onDelete: (obj) => expectations.deleted(obj),
  });
}

function observeSecretCopies(expectations: ScaleExpectations, secrets: Informer<SecretLike>, namespace: string): void {
  secrets.addEventHandler({
    onAdd: (secret) => {
      if (secret.metadata?.namespace !== namespace) return;
      const source = secret.metadata.annotations?.[ANNOTATION_IMAGEPULLJOB_SOURCE_KEY];
      if (!source) return;
      for (const job of referencesOf(secret)) expectations.creationObserved(job, source);
    },
  });
}
