/**
 * The BroadcastJob controller: runs one pod to completion on every node its pod fits, within a
 * parallelism window, with OpenKruise v1.9's completion and failure policies, and reports
 * desired/active/succeeded/failed, the phase and the Complete/Failed conditions.
 */
import { KRUISE_GROUP, type BroadcastJob } from '@flotilla/api';
import type { Pod } from '../../kube/types.js';
import { BY_OWNER_UID } from '../../runtime/cache.js';
import { systemClock, type Clock } from '../../runtime/clock.js';
import type { ComponentRegistrar } from '../../runtime/component.js';
import type { Controller } from '../../runtime/controller.js';
import type { EventRecording } from '../../runtime/events.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { enqueueOwner } from '../../runtime/handlers.js';
import { namespacedKey, type KubeObject } from '../../runtime/kube-object.js';
import { Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import { kubeBroadcastJobClient, type BroadcastJobClient } from './client.js';
import { broadcastJobReconciler, type BroadcastJobControllerOptions } from './controller.js';
import type { NodeLike } from '../../kube/node-fit.js';
import { observeNodePods } from '../../kube/node-pods.js';

export type { BroadcastJobControllerOptions } from './controller.js';

export const DEFAULT_BROADCASTJOB_OPTIONS: BroadcastJobControllerOptions = { expectationRequeueMs: 1000 };

export interface BroadcastJobControllerDeps {
  rest: KubeRest;
  events: EventRecording;
  options?: Partial<BroadcastJobControllerOptions>;
  /** Watch only this namespace's jobs and pods (tests); all namespaces when undefined. */
  namespace?: string;
  /** Consider only the Nodes with these labels (tests); all Nodes when undefined. */
  nodeSelector?: string;
  clock?: Clock;
  client?: BroadcastJobClient;
}

/** Registers the BroadcastJob controller and its informers with the manager. */
export function registerBroadcastJobController(
  manager: ComponentRegistrar,
  deps: BroadcastJobControllerDeps,
): Controller {
  const clock = deps.clock ?? systemClock;
  const ns = deps.namespace === undefined ? {} : { namespace: deps.namespace };
  const jobs = manager.informer<BroadcastJob>({ resource: Resources.broadcastJobs, ...ns });
  const pods = manager.informer<Pod>({ resource: Resources.pods, ...ns });
  const nodes = manager.informer<NodeLike & KubeObject>({
    resource: Resources.nodes,
    ...(deps.nodeSelector ? { labelSelector: deps.nodeSelector } : {}),
  });
  const scale = new ScaleExpectations({ clock });
  const resourceVersions = new ResourceVersionExpectations({ clock });
  const controller = manager.controller({
    name: 'broadcastjob',
    workers: 3,
    reconcile: broadcastJobReconciler({
      jobs,
      podsOwnedBy: (uid) => pods.byIndex(BY_OWNER_UID, uid),
      nodes: () => nodes.list(),
      client: deps.client ?? kubeBroadcastJobClient(deps.rest),
      scale,
      resourceVersions,
      events: deps.events,
      clock,
      options: { ...DEFAULT_BROADCASTJOB_OPTIONS, ...deps.options },
    }),
  });
  // Observers first, so a reconcile woken by an event already sees the expectation met.
  observeNodePods(scale, pods, 'BroadcastJob');
  jobs.addEventHandler({
    onAdd: (obj) => resourceVersions.observed(obj),
    onUpdate: (_old, obj) => resourceVersions.observed(obj),
    onDelete: (obj) => resourceVersions.deleted(obj),
  });
  controller.watch(jobs);
  controller.watch(pods, enqueueOwner({ group: KRUISE_GROUP, kind: 'BroadcastJob' }));
  controller.watch(nodes, () => jobs.list().map((j) => namespacedKey(j.metadata?.namespace, j.metadata?.name ?? '')));
  return controller;
}
