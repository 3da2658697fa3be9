/**
 * The ContainerRecreateRequest manager controller (the agent's half; the recreating itself is the
 * node daemon's, daemon/crr/): deadlines, pods that went away or sit on dead nodes, the
 * not-ready window of unreadyGracePeriodSeconds, the synced container statuses and the TTL.
 */
import { LABEL_CRR_NODE_NAME, type ContainerRecreateRequest } from '@flotilla/api';
import type { Pod } from '../../kube/types.js';
import { systemClock, type Clock } from '../../runtime/clock.js';
import type { ComponentRegistrar } from '../../runtime/component.js';
import type { Controller } from '../../runtime/controller.js';
import { namespacedKey } from '../../runtime/kube-object.js';
import { Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import { kubeCrrClient, type CrrClient } from './client.js';
import { crrReconciler } from './controller.js';
import type { CrrNode } from './plan.js';

export interface CrrControllerDeps {
  rest: KubeRest;
  /** Watch only this namespace's CRRs and pods (tests); all namespaces when undefined. */
  namespace?: string;
  clock?: Clock;
  client?: CrrClient;
}

export function registerCrrController(manager: ComponentRegistrar, deps: CrrControllerDeps): Controller {
  const ns = deps.namespace === undefined ? {} : { namespace: deps.namespace };
  const crrs = manager.informer<ContainerRecreateRequest>({ resource: Resources.containerRecreateRequests, ...ns });
  const pods = manager.informer<Pod>({ resource: Resources.pods, ...ns });
  const nodes = manager.informer<CrrNode & { metadata: { name: string } }>({ resource: Resources.nodes });
  const controller = manager.controller({
    name: 'containerrecreaterequest',
    workers: 2,
    reconcile: crrReconciler({
      crrs,
      pods,
      nodes,
      client: deps.client ?? kubeCrrClient(deps.rest),
      clock: deps.clock ?? systemClock,
    }),
  });
  const keyOf = (c: ContainerRecreateRequest): string => namespacedKey(c.metadata?.namespace, c.metadata?.name ?? '');
  controller.watch(crrs);
  // A pod's CRRs are few; listing them per pod event keeps the pod cache the only index needed.
  controller.watch(pods, (pod) =>
    crrs
      .list(pod.metadata.namespace)
      .filter((c) => c.spec.podName === pod.metadata.name)
      .map(keyOf),
  );
  // Only a change of the node's Ready condition matters (a node dying fails its CRRs).
  const readyOf = (n: CrrNode): string | undefined => n.status?.conditions?.find((c) => c.type === 'Ready')?.status;
  controller.watch(
    nodes,
    (node) => crrs.list(undefined, { matchLabels: { [LABEL_CRR_NODE_NAME]: node.metadata.name } }).map(keyOf),
    { updated: (old, obj) => readyOf(old) !== readyOf(obj) },
  );
  return controller;
}
