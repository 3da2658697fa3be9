/**
 * The CloneSet controller (apps.kruise.io/v1alpha1), OpenKruise-compatible: wiring of informers,
 * expectations and the reconcile into the manager. See controller.ts for the reconcile's steps.
 */
import type { PubGuard } from '../podunavailablebudget/guard.js';
import { KRUISE_GROUP } from '@flotilla/api';
import { systemClock, type Clock } from '../../runtime/clock.js';
import type { ComponentRegistrar } from '../../runtime/component.js';
import type { Controller } from '../../runtime/controller.js';
import type { EventRecorder } from '../../runtime/events.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { enqueueOwner } from '../../runtime/handlers.js';
import type { Informer } from '../../runtime/informer.js';
import { controllerRef, namespacedKey, type KubeObject } from '../../runtime/kube-object.js';
import { Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import { kubeCloneSetClient, type CloneSetClient } from './client.js';
import { cloneSetReconciler } from './controller.js';
import type { CloneSetControllerOptions } from './sync-context.js';
import type { ControllerRevision, PersistentVolumeClaim, Pod } from '../../kube/types.js';
import type { CloneSet } from './types.js';

export type { CloneSetControllerOptions } from './sync-context.js';

export const DEFAULT_CLONESET_OPTIONS: CloneSetControllerOptions = {
  maxConcurrentCreates: 64,
  maxConcurrentWrites: 32,
  expectationRecheckMs: 30_000,
  plan: {},
  inPlaceVerticalScaling: false,
};

export interface CloneSetControllerDeps {
  rest: KubeRest;
  events: EventRecorder;
  /** Watch only this namespace (tests); all namespaces when undefined. */
  namespace?: string;
  /** Reconciles of different CloneSets at once; default 3. */
  workers?: number;
  options?: Partial<CloneSetControllerOptions>;
  clock?: Clock;
  random?: () => number;
  /** A fake for tests; the API otherwise. */
  client?: CloneSetClient;
  /** Expectations timeout (ms); default 5 min as OpenKruise. */
  expectationTimeoutMs?: number;
  /** PodUnavailableBudgets pace in-place updates (PodUnavailableBudgetUpdateGate). */
  pubGuard?: PubGuard;
}

/** The CloneSet that controls `obj`, as a queue key. */
function ownerKey(obj: KubeObject): string | undefined {
  const ref = controllerRef(obj);
  if (!ref || ref.kind !== 'CloneSet' || !ref.apiVersion.startsWith(`${KRUISE_GROUP}/`)) return undefined;
  return namespacedKey(obj.metadata?.namespace, ref.name);
}

/**
 * Creations and deletions show up in the cache: a pod or PVC appearing meets a creation
 * expectation, one getting a deletionTimestamp or vanishing meets a deletion expectation.
 */
function observeScale<T extends KubeObject>(expectations: ScaleExpectations, informer: Informer<T>): void {
  const seen = (obj: KubeObject, deleted: boolean): void => {
    const key = ownerKey(obj);
    const name = obj.metadata?.name;
    if (!key || !name) return;
    if (deleted || obj.metadata?.deletionTimestamp) expectations.deletionObserved(key, name);
    else expectations.creationObserved(key, name);
  };
  informer.addEventHandler({
    onAdd: (obj) => seen(obj, false),
    onUpdate: (_old, obj) => {
      if (obj.metadata?.deletionTimestamp) seen(obj, true);
    },
    onDelete: (obj) => seen(obj, true),
  });
}

/** Our own updates show up in the cache. */
function observeWrites<T extends KubeObject>(expectations: ResourceVersionExpectations, informer: Informer<T>): void {
  informer.addEventHandler({
    onAdd: (obj) => expectations.observed(obj),
    onUpdate: (_old, obj) => expectations.observed(obj),
    onDelete: (obj) => expectations.deleted(obj),
  });
}

/** Registers the CloneSet controller and its informers with the manager. */
export function registerCloneSetController(manager: ComponentRegistrar, deps: CloneSetControllerDeps): Controller {
  const clock = deps.clock ?? systemClock;
  const options = { ...DEFAULT_CLONESET_OPTIONS, ...deps.options };
  const ns = deps.namespace === undefined ? {} : { namespace: deps.namespace };
  const cloneSets = manager.informer<CloneSet>({ resource: Resources.cloneSets, ...ns });
  const pods = manager.informer<Pod>({ resource: Resources.pods, ...ns });
  const claims = manager.informer<PersistentVolumeClaim>({ resource: Resources.persistentVolumeClaims, ...ns });
  const revisions = manager.informer<ControllerRevision>({ resource: Resources.controllerRevisions, ...ns });
  const nodes = manager.informer<KubeObject>({ resource: Resources.nodes });
  const timeouts = { clock, timeoutMs: deps.expectationTimeoutMs };
  const scaleExpectations = new ScaleExpectations(timeouts);
  const resourceVersions = new ResourceVersionExpectations(timeouts);
  const controller = manager.controller({
    name: 'cloneset',
    workers: deps.workers ?? 3,
    reconcile: cloneSetReconciler({
      cloneSets,
      pods,
      claims,
      revisions,
      nodes,
      client: deps.client ?? kubeCloneSetClient(deps.rest),
      scaleExpectations,
      resourceVersions,
      events: deps.events,
      clock,
      options,
      random: deps.random,
      pubGuard: deps.pubGuard,
    }),
  });
  // Observers first, so a reconcile woken by an event already sees the expectation met.
  observeScale(scaleExpectations, pods);
  observeScale(scaleExpectations, claims);
  observeWrites(resourceVersions, pods);
  observeWrites(resourceVersions, revisions);
  observeWrites(resourceVersions, cloneSets);
  const toOwner = enqueueOwner({ group: KRUISE_GROUP, kind: 'CloneSet' });
  controller.watch(cloneSets);
  controller.watch(pods, toOwner);
  controller.watch(claims, toOwner);
  controller.watch(revisions, toOwner);
  return controller;
}
