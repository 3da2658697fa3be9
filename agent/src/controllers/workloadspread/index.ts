/**
 * The WorkloadSpread controller: keeps each WorkloadSpread's subset statuses, the deletion costs
 * of its target's pods and, under Adaptive, reschedules pods stuck in a subset. The pod webhook
 * (webhook/mutating/pod.ts, through admission.ts here) places new pods into subsets.
 */
import type { WorkloadSpread } from '@flotilla/api';
import type { NodeLike } from '../../kube/node-fit.js';
import type { Pod } from '../../kube/types.js';
import { BY_OWNER_UID } from '../../runtime/cache.js';
import { systemClock, type Clock } from '../../runtime/clock.js';
import type { ComponentRegistrar } from '../../runtime/component.js';
import type { Controller } from '../../runtime/controller.js';
import type { EventRecording } from '../../runtime/events.js';
import type { Informer } from '../../runtime/informer.js';
import { namespacedKey, type KubeObject } from '../../runtime/kube-object.js';
import { Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import { kubeWorkloadSpreadClient, type WorkloadSpreadClient } from './client.js';
import { workloadSpreadReconciler } from './controller.js';
import type { SpreadPod } from './subsets.js';
import { cloneSetLatestVersion, deploymentLatestVersion, ReplicaSets, type Workload } from './targets.js';

export interface WorkloadSpreadControllerDeps {
  rest: KubeRest;
  events: EventRecording;
  /** Watch only this namespace (tests); all namespaces when undefined. */
  namespace?: string;
  clock?: Clock;
  client?: WorkloadSpreadClient;
}

const controlledBy =
  (uid: string | undefined) => (o: { metadata: { ownerReferences?: { uid: string; controller?: boolean }[] } }) =>
    uid !== undefined && (o.metadata.ownerReferences ?? []).some((r) => r.controller && r.uid === uid);

/** The target's pods: owned by it, or (a Deployment) by its ReplicaSets. */
function podsOfTarget(
  pods: Informer<Pod>,
  replicaSets: Informer<Workload & KubeObject>,
  ws: WorkloadSpread,
  workload: Workload,
): { pods: SpreadPod[]; latestVersion?: string } {
  const uid = workload.metadata.uid;
  const owned = (owner: string | undefined): SpreadPod[] =>
    owner ? (pods.byIndex(BY_OWNER_UID, owner).filter(controlledBy(owner)) as unknown as SpreadPod[]) : [];
  if (ws.spec.targetRef.kind === 'CloneSet')
    return { pods: owned(uid), latestVersion: cloneSetLatestVersion(workload) };
  if (ws.spec.targetRef.kind !== 'Deployment') return { pods: owned(uid) };
  const sets = uid ? replicaSets.byIndex(BY_OWNER_UID, uid).filter(controlledBy(uid)) : [];
  return {
    pods: sets.flatMap((rs) => owned(rs.metadata.uid)),
    latestVersion: deploymentLatestVersion(workload, sets),
  };
}

/** Registers the WorkloadSpread controller and its informers with the manager. */
export function registerWorkloadSpreadController(
  manager: ComponentRegistrar,
  deps: WorkloadSpreadControllerDeps,
): Controller {
  const ns = deps.namespace === undefined ? {} : { namespace: deps.namespace };
  const spreads = manager.informer<WorkloadSpread>({ resource: Resources.workloadSpreads, ...ns });
  const pods = manager.informer<Pod>({ resource: Resources.pods, ...ns });
  const replicaSets = manager.informer<Workload & KubeObject>({ resource: ReplicaSets, ...ns });
  // Pods the WorkloadSpread did not place are matched to subsets by their node.
  const nodes = manager.informer<NodeLike & KubeObject>({ resource: Resources.nodes });
  const controller = manager.controller({
    name: 'workloadspread',
    workers: 2,
    reconcile: workloadSpreadReconciler({
      spreads,
      podsOf: (ws, workload) => podsOfTarget(pods, replicaSets, ws, workload),
      nodeOf: (name) => nodes.get(undefined, name),
      client: deps.client ?? kubeWorkloadSpreadClient(deps.rest),
      events: deps.events,
      clock: deps.clock ?? systemClock,
    }),
  });
  // Any pod or ReplicaSet change in a namespace may move its WorkloadSpreads' counts.
  const spreadsIn = (obj: KubeObject): string[] =>
    spreads.list(obj.metadata?.namespace).map((w) => namespacedKey(w.metadata?.namespace, w.metadata?.name ?? ''));
  controller.watch(spreads);
  controller.watch(pods, spreadsIn);
  controller.watch(replicaSets, spreadsIn);
  return controller;
}
