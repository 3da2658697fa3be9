/**
 * The Advanced DaemonSet controller: one pod on every node it should run on, rolling updates
 * (Standard, surge, InPlaceIfPossible) within maxUnavailable/maxSurge, partition and node
 * selector, paused, the preDelete hook, adoption of orphan pods it selects, OpenKruise-compatible
 * revisions, and the status. It reads and writes DaemonSets at v1beta1, their storage version.
 */
import { KRUISE_GROUP, type DaemonSetV1beta1 } from '@flotilla/api';
import { orphansToAdopt } from '../../kube/adoption.js';
import type { NodeLike } from '../../kube/node-fit.js';
import type { ControllerRevision, Pod } from '../../kube/types.js';
import { BY_OWNER_UID } from '../../runtime/cache.js';
import { systemClock, type Clock } from '../../runtime/clock.js';
import type { ComponentRegistrar } from '../../runtime/component.js';
import type { Controller } from '../../runtime/controller.js';
import type { EventRecording } from '../../runtime/events.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { enqueueOwner } from '../../runtime/handlers.js';
import type { Informer } from '../../runtime/informer.js';
import { namespacedKey, type KubeObject } from '../../runtime/kube-object.js';
import { Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import { observeNodePods } from '../../kube/node-pods.js';
import { kubeDaemonSetClient, type DaemonSetClient } from './client.js';
import { daemonSetReconciler, type DaemonSetControllerOptions } from './controller.js';

export type { DaemonSetControllerOptions } from './controller.js';

export const DEFAULT_DAEMONSET_OPTIONS: DaemonSetControllerOptions = { expectationRequeueMs: 1000 };

export interface DaemonSetControllerDeps {
  rest: KubeRest;
  events: EventRecording;
  options?: Partial<DaemonSetControllerOptions>;
  /** Watch only this namespace's sets, pods and revisions (tests); all namespaces when undefined. */
  namespace?: string;
  /** Consider only the Nodes with these labels (tests); all Nodes when undefined. */
  nodeSelector?: string;
  clock?: Clock;
  client?: DaemonSetClient;
}

/** Registers the Advanced DaemonSet controller and its informers with the manager. */
export function registerDaemonSetController(manager: ComponentRegistrar, deps: DaemonSetControllerDeps): Controller {
  const clock = deps.clock ?? systemClock;
  const ns = deps.namespace === undefined ? {} : { namespace: deps.namespace };
  const sets = manager.informer<DaemonSetV1beta1>({ resource: Resources.daemonSets, ...ns });
  const pods = manager.informer<Pod>({ resource: Resources.pods, ...ns });
  const revisions = manager.informer<ControllerRevision>({ resource: Resources.controllerRevisions, ...ns });
  const nodes = manager.informer<NodeLike & KubeObject>({
    resource: Resources.nodes,
    ...(deps.nodeSelector ? { labelSelector: deps.nodeSelector } : {}),
  });
  const scale = new ScaleExpectations({ clock });
  const resourceVersions = new ResourceVersionExpectations({ clock });
  const controller = manager.controller({
    name: 'daemonset',
    workers: 3,
    reconcile: daemonSetReconciler({
      daemonSets: sets,
      podsOwnedBy: (uid) => pods.byIndex(BY_OWNER_UID, uid),
      podsIn: (namespace) => pods.list(namespace),
      revisionsOwnedBy: (uid) => revisions.byIndex(BY_OWNER_UID, uid),
      nodes: () => nodes.list(),
      client: deps.client ?? kubeDaemonSetClient(deps.rest),
      scale,
      resourceVersions,
      events: deps.events,
      clock,
      options: { ...DEFAULT_DAEMONSET_OPTIONS, ...deps.options },
    }),
  });
  // Observers first, so a reconcile woken by an event already sees the expectation met.
  observeNodePods(scale, pods, 'DaemonSet');
  for (const informer of [sets, pods, revisions] as unknown as Informer<KubeObject>[]) {
    informer.addEventHandler({
      onAdd: (obj) => resourceVersions.observed(obj),
      onUpdate: (_old, obj) => resourceVersions.observed(obj),
      onDelete: (obj) => resourceVersions.deleted(obj),
    });
  }
  controller.watch(sets);
  const owner = enqueueOwner({ group: KRUISE_GROUP, kind: 'DaemonSet' });
  controller.watch(pods, owner);
  // An orphan pod wakes the sets of its namespace that select it, which then adopt it.
  controller.watch(pods, (pod) =>
    (pod.metadata.ownerReferences ?? []).some((r) => r.controller === true)
      ? []
      : sets
          .list(pod.metadata.namespace)
          .filter((ds) => orphansToAdopt(ds, [pod]).length > 0)
          .map((ds) => namespacedKey(ds.metadata?.namespace, ds.metadata?.name ?? '')),
  );
  controller.watch(revisions, owner);
  controller.watch(nodes, () => sets.list().map((s) => namespacedKey(s.metadata?.namespace, s.metadata?.name ?? '')));
  return controller;
}
