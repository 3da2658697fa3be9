/**
 * The Advanced StatefulSet controller (apps.kruise.io/v1beta1 StatefulSet): pods with stable
 * ordinal names and claims, OrderedReady or Parallel, reserved ordinals, rolling updates with
 * partition, maxUnavailable and in-place updates, PVC retention, adoption and release of pods
 * by the selector, and OpenKruise-compatible revisions and status.
 */
import { KRUISE_GROUP, type StatefulSet } from '@flotilla/api';
import { orphansToAdopt } from '../../kube/adoption.js';
import type { ControllerRevision, PersistentVolumeClaim, Pod } from '../../kube/types.js';
import { BY_NAMESPACE, BY_OWNER_UID } from '../../runtime/cache.js';
import { systemClock, type Clock } from '../../runtime/clock.js';
import type { ComponentRegistrar } from '../../runtime/component.js';
import type { Controller } from '../../runtime/controller.js';
import type { EventRecording } from '../../runtime/events.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { enqueueOwner } from '../../runtime/handlers.js';
import type { Informer } from '../../runtime/informer.js';
import { controllerRef, namespacedKey } from '../../runtime/kube-object.js';
import { Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import { kubeStatefulSetClient, type StatefulSetClient } from './client.js';
import { statefulSetReconciler, type StatefulSetControllerOptions } from './controller.js';
import { ordinalOf } from './identity.js';

export type { StatefulSetControllerOptions } from './controller.js';

export const DEFAULT_STATEFULSET_OPTIONS: StatefulSetControllerOptions = { expectationRequeueMs: 1000 };

export interface StatefulSetControllerDeps {
  rest: KubeRest;
  events: EventRecording;
  options?: Partial<StatefulSetControllerOptions>;
  /** Watch only this namespace (tests); all namespaces when undefined. */
  namespace?: string;
  clock?: Clock;
  client?: StatefulSetClient;
}

/** Registers the Advanced StatefulSet controller and its informers with the manager. */
export function registerStatefulSetController(
  manager: ComponentRegistrar,
  deps: StatefulSetControllerDeps,
): Controller {
  const clock = deps.clock ?? systemClock;
  const ns = deps.namespace === undefined ? {} : { namespace: deps.namespace };
  const sets = manager.informer<StatefulSet>({ resource: Resources.statefulSets, ...ns });
  const pods = manager.informer<Pod>({ resource: Resources.pods, ...ns });
  const revisions = manager.informer<ControllerRevision>({ resource: Resources.controllerRevisions, ...ns });
  const claims = manager.informer<PersistentVolumeClaim>({ resource: Resources.persistentVolumeClaims, ...ns });
  const scale = new ScaleExpectations({ clock });
  const resourceVersions = new ResourceVersionExpectations({ clock });
  const controller = manager.controller({
    name: 'statefulset',
    workers: 3,
    reconcile: statefulSetReconciler({
      sets,
      podsOwnedBy: (uid) => pods.byIndex(BY_OWNER_UID, uid),
      podsIn: (namespace) => pods.list(namespace),
      revisionsOwnedBy: (uid) => revisions.byIndex(BY_OWNER_UID, uid),
      claimsIn: (namespace) => claims.byIndex(BY_NAMESPACE, namespace),
      client: deps.client ?? kubeStatefulSetClient(deps.rest),
      scale,
      resourceVersions,
      events: deps.events,
      clock,
      options: { ...DEFAULT_STATEFULSET_OPTIONS, ...deps.options },
    }),
  });
  // Observers first, so a reconcile woken by an event already sees the expectation met.
  observePods(scale, resourceVersions, pods);
  sets.addEventHandler({
    onAdd: (obj) => resourceVersions.observed(obj),
    onUpdate: (_old, obj) => resourceVersions.observed(obj),
    onDelete: (obj) => resourceVersions.deleted(obj),
  });
  controller.watch(sets);
  const owner = enqueueOwner({ group: KRUISE_GROUP, kind: 'StatefulSet' });
  controller.watch(pods, owner);
  // An orphan pod wakes the sets of its namespace that would adopt it.
  controller.watch(pods, (pod) =>
    sets
      .list(pod.metadata.namespace)
      .filter((set) => orphansToAdopt(set, [pod], (p) => ordinalOf(set, p) >= 0).length > 0)
      .map((set) => namespacedKey(set.metadata?.namespace, set.metadata?.name ?? '')),
  );
  controller.watch(revisions, owner);
  return controller;
}

/** A set's pod appearing meets its expected creation; one going, its deletion. */
function observePods(scale: ScaleExpectations, versions: ResourceVersionExpectations, pods: Informer<Pod>): void {
  const setKey = (pod: Pod): string | undefined => {
    const ref = controllerRef(pod);
    return ref?.kind === 'StatefulSet' ? namespacedKey(pod.metadata.namespace, ref.name) : undefined;
  };
  const gone = (pod: Pod): void => {
    const key = setKey(pod);
    if (key) scale.deletionObserved(key, pod.metadata.name);
  };
  pods.addEventHandler({
    onAdd: (pod) => {
      const key = setKey(pod);
      if (key) scale.creationObserved(key, pod.metadata.name);
      versions.observed(pod);
    },
    onUpdate: (_old, pod) => {
      versions.observed(pod);
      if (pod.metadata.deletionTimestamp) gone(pod);
    },
    onDelete: (pod) => {
      versions.deleted(pod);
      gone(pod);
    },
  });
}
