/**
 * The PodUnavailableBudget controller: keeps each budget's status (how many of its pods are
 * available, how many more may go) current, expires the webhook's admission records, and binds
 * pods to their budget. The admission side is agent/src/webhook/validating/pub*.ts.
 */
import { ANNOTATION_RELATED_PUB, type PodUnavailableBudget } from '@flotilla/api';
import type { Pod } from '../../kube/types.js';
import { systemClock, type Clock } from '../../runtime/clock.js';
import type { ComponentRegistrar } from '../../runtime/component.js';
import type { Controller } from '../../runtime/controller.js';
import { enqueueObject } from '../../runtime/handlers.js';
import type { EventRecording } from '../../runtime/events.js';
import { ResourceVersionExpectations } from '../../runtime/expectations.js';
import { labelSelectorMatcher } from '../../runtime/label-selector.js';
import { namespacedKey, sameJson } from '../../runtime/kube-object.js';
import { Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import { kubePubClient, type PubClient } from './client.js';
import { pubReconciler } from './controller.js';

export interface PubControllerDeps {
  rest: KubeRest;
  events: EventRecording;
  /** Watch only this namespace (tests); all namespaces when undefined. */
  namespace?: string;
  clock?: Clock;
  client?: PubClient;
  /** Pod events and budget status writes are batched for this long per budget (ms); default 200. */
  podEventDelayMs?: number;
}

/** An update that changed only the status: the spec, labels and annotations are the same. */
function statusOnly(old: PodUnavailableBudget, obj: PodUnavailableBudget): boolean {
  return (
    old.metadata?.generation === obj.metadata?.generation &&
    sameJson(old.metadata?.annotations, obj.metadata?.annotations) &&
    sameJson(old.metadata?.labels, obj.metadata?.labels) &&
    !!old.metadata?.deletionTimestamp === !!obj.metadata?.deletionTimestamp
  );
}

/** The budgets a pod change concerns: the one it is bound to, selectors matching it, every targetRef budget. */
function budgetsOfPod(pod: Pod, pubs: readonly PodUnavailableBudget[]): string[] {
  const bound = pod.metadata.annotations?.[ANNOTATION_RELATED_PUB];
  return pubs
    .filter((pub) => {
      const { selector, targetRef } = pub.spec;
      if (targetRef || pub.metadata?.name === bound) return true;
      return !!selector && labelSelectorMatcher(selector)(pod.metadata.labels);
    })
    .map((pub) => namespacedKey(pub.metadata?.namespace, pub.metadata?.name ?? ''));
}

export function registerPubController(manager: ComponentRegistrar, deps: PubControllerDeps): Controller {
  const clock = deps.clock ?? systemClock;
  const ns = deps.namespace === undefined ? {} : { namespace: deps.namespace };
  const pubs = manager.informer<PodUnavailableBudget>({ resource: Resources.podUnavailableBudgets, ...ns });
  const pods = manager.informer<Pod>({ resource: Resources.pods, ...ns });
  const resourceVersions = new ResourceVersionExpectations({ clock });
  const controller = manager.controller({
    name: 'podunavailablebudget',
    workers: 2,
    reconcile: pubReconciler({
      pubs,
      podsIn: (namespace) => pods.list(namespace),
      client: deps.client ?? kubePubClient(deps.rest),
      resourceVersions,
      events: deps.events,
      clock,
      expectationRequeueMs: 1000,
      lazyWriteIntervalMs: 1000,
    }),
  });
  pubs.addEventHandler({
    onAdd: (obj) => resourceVersions.observed(obj),
    onUpdate: (_old, obj) => resourceVersions.observed(obj),
    onDelete: (obj) => resourceVersions.deleted(obj),
  });
  const delayMs = deps.podEventDelayMs ?? 200;
  controller.watch(pubs, enqueueObject, { updated: (old, obj) => !statusOnly(old, obj) });
  // Status writes (the webhook's admissions, mostly) wait like pod events: a storm of them shares
  // one recount instead of racing the admissions for the budget.
  controller.watch(pubs, enqueueObject, { updated: statusOnly, delayMs });
  controller.watch(pods, (pod) => budgetsOfPod(pod, pubs.list(pod.metadata.namespace)), { delayMs });
  return controller;
}
