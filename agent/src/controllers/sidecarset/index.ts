/**
 * The SidecarSet controller's registration: informers on SidecarSets, pods, namespaces and the
 * revisions in the agent's namespace; pod and namespace events enqueue the SidecarSets that may
 * cover them. Runs only on the leader (injection, in the webhook, runs on every replica).
 */
import type { PubGuard } from '../podunavailablebudget/guard.js';
import { LABEL_SIDECARSET_NAME } from '@flotilla/api';
import type { ComponentContext } from '../../runtime/component.js';
import { Resources } from '../../runtime/resource.js';
import { injectedSidecarSets } from './control/annotations.js';
import {
  BY_INJECTED_SIDECARSET,
  injectedSidecarSetIndex,
  sidecarSetChanged,
  sidecarSetReconciler,
} from './controller.js';
import { sidecarSetInformer } from '../../kube/sidecarset-informer.js';
import type { ControllerRevision, Namespace, Pod } from '../../kube/types.js';

/**
 * How long pod events wait for others before their SidecarSets are reconciled: the status lags
 * by at most this much, and an upgrade round (which waits 1 s for its own writes) hardly notices.
 */
export const POD_EVENT_BATCH_MS = 500;

/**
 * Wires the controller into a manager (also used by the integration suites). `sidecarSetSelector`
 * (a label selector string) narrows which SidecarSets this controller owns, so suites sharing a
 * cluster never reconcile each other's.
 */
export function setupSidecarSetController(
  ctx: Pick<ComponentContext<unknown>, 'manager' | 'rest' | 'events'>,
  revisionNamespace: string,
  sidecarSetSelector?: string,
  /** PodUnavailableBudgets pace in-place upgrades (PodUnavailableBudgetUpdateGate). */
  pubGuard?: PubGuard,
): void {
  const { manager } = ctx;
  const sidecarSets = sidecarSetInformer(manager, sidecarSetSelector ? { labelSelector: sidecarSetSelector } : {});
  const pods = manager.informer<Pod>({
    resource: Resources.pods,
    indexers: { [BY_INJECTED_SIDECARSET]: injectedSidecarSetIndex },
  });
  const namespaces = manager.informer<Namespace>({ resource: Resources.namespaces });
  const revisions = manager.informer<ControllerRevision>({
    resource: Resources.controllerRevisions,
    namespace: revisionNamespace,
    labelSelector: LABEL_SIDECARSET_NAME,
  });
  const controller = manager.controller({
    name: 'sidecarset',
    workers: 2,
    reconcile: sidecarSetReconciler({
      rest: ctx.rest,
      sidecarSets,
      pods,
      namespaces,
      revisions,
      revisionNamespace,
      events: ctx.events('sidecarset'),
      ...(pubGuard ? { pubGuard } : {}),
    }),
  });
  // Its own status writes do not reconcile it again (sidecarSetChanged).
  controller.watch(sidecarSets, undefined, { updated: sidecarSetChanged });
  // A pod matters to the SidecarSets injected into it (status counts and upgrades). Its events
  // are batched: every reconcile recounts all of a SidecarSet's pods and writes the status when a
  // count changed, so at 100 pod creates/s one reconcile per event would write the status up to
  // once per create (its own status writes do not reconcile it again: sidecarSetChanged).
  controller.watch(pods, (pod) => [...injectedSidecarSets(pod)], { delayMs: POD_EVENT_BATCH_MS });
  controller.watch(revisions, (rev) => {
    const name = rev.metadata.labels?.[LABEL_SIDECARSET_NAME];
    return name ? [name] : [];
  });
}
