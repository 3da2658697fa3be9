/**
 * The NodeImage controller: one NodeImage per Node (same name, same labels), deleted with its
 * Node, with stale tags cleaned by TTL and by vanished ImagePullJob owners, and tags the node
 * daemon never answered marked failed.
 */
import type { ImagePullJob, NodeImage } from '@flotilla/api';
import type { Controller } from '../../runtime/controller.js';
import type { EventRecorder } from '../../runtime/events.js';
import type { Informer } from '../../runtime/informer.js';
import type { ComponentRegistrar } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import { systemClock, type Clock } from '../../runtime/clock.js';
import { DEFAULT_NODEIMAGE_OPTIONS, nodeImageReconciler, type NodeImageControllerOptions } from './controller.js';
import type { NodeLike } from './plan.js';
import { kubeNodeImageClient, type NodeImageClient } from '../../kube/nodeimage-client.js';

export { DEFAULT_NODEIMAGE_OPTIONS, type NodeImageControllerOptions } from './controller.js';

/** NodeImages indexed by the uids of the ImagePullJobs their tags belong to. */
export const BY_TAG_OWNER_UID = 'byTagOwnerUid';

export interface NodeImageControllerDeps {
  rest: KubeRest;
  events: EventRecorder;
  options?: Partial<NodeImageControllerOptions>;
  /** Defaults to the API; tests may pass a fake. */
  client?: NodeImageClient;
  clock?: Clock;
}

/** Registers the NodeImage controller and its informers with the manager. */
export function registerNodeImageController(manager: ComponentRegistrar, deps: NodeImageControllerDeps): Controller {
  const options = { ...DEFAULT_NODEIMAGE_OPTIONS, ...deps.options };
  const nodeSelector = options.scope?.nodeSelector;
  const nodes = manager.informer<NodeLike>({ resource: Resources.nodes, labelSelector: nodeSelector });
  const nodeImages = manager.informer<NodeImage>({
    resource: Resources.nodeImages,
    labelSelector: nodeSelector,
    indexers: { [BY_TAG_OWNER_UID]: tagOwnerUids },
  });
  const jobs = manager.informer<ImagePullJob>({
    resource: Resources.imagePullJobs,
    labelSelector: options.scope?.jobSelector,
  });
  const controller = manager.controller({
    name: 'nodeimage',
    workers: 3,
    reconcile: nodeImageReconciler({
      nodes,
      nodeImages,
      jobs,
      client: deps.client ?? kubeNodeImageClient(deps.rest),
      events: deps.events,
      clock: deps.clock ?? systemClock,
      options,
    }),
  });
  controller.watch(nodeImages);
  watchNodes(controller, nodes);
  watchJobDeletions(controller, jobs, nodeImages);
  return controller;
}

/**
 * Node status heartbeats would wake the controller for nothing; only a new or vanished node, a
 * label change or a Ready change can change what it does.
 */
function watchNodes(controller: Controller, nodes: Informer<NodeLike>): void {
  const ready = (n: NodeLike): string | undefined => n.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  const key = (n: NodeLike): string => n.metadata?.name ?? '';
  nodes.addEventHandler({
    onAdd: (n) => controller.enqueue(key(n)),
    onDelete: (n) => controller.enqueue(key(n)),
    onUpdate: (old, n) => {
      const changed =
        JSON.stringify(old.metadata?.labels ?? {}) !== JSON.stringify(n.metadata?.labels ?? {}) ||
        ready(old) !== ready(n) ||
        Boolean(n.metadata?.deletionTimestamp) !== Boolean(old.metadata?.deletionTimestamp);
      if (changed) controller.enqueue(key(n));
    },
  });
}

/** A deleted job's tags must leave every NodeImage that lists it as owner. */
function watchJobDeletions(
  controller: Controller,
  jobs: Informer<ImagePullJob>,
  nodeImages: Informer<NodeImage>,
): void {
  jobs.addEventHandler({
    onDelete: (job) => {
      const uid = job.metadata?.uid;
      if (!uid) return;
      for (const ni of nodeImages.byIndex(BY_TAG_OWNER_UID, uid)) controller.enqueue(ni.metadata?.name ?? '');
    },
  });
}

function tagOwnerUids(ni: NodeImage): string[] {
  const uids = new Set<string>();
  for (const image of Object.values(ni.spec?.images ?? {})) {
    for (const tag of image.tags ?? []) for (const ref of tag.ownerReferences ?? []) if (ref.uid) uids.add(ref.uid);
  }
  return [...uids];
}
