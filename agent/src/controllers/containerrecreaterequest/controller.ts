/**
 * The CRR manager's reconcile: read the CRR, its pod and the pod's node from the caches, plan
 * (plan.ts), then write in a fixed order — the pod's conditions first (so the not-ready key is on
 * the pod before the annotation tells the daemon it may start, and off it before the finalizer
 * goes), then the CRR's metadata, its status, and last its deletion. Every write is made only when
 * the plan has it, so an idle CRR costs no request.
 */
import { FINALIZER_CRR_UNREADY_ACQUIRED, type ContainerRecreateRequest } from '@flotilla/api';
import type { Pod } from '../../kube/types.js';
import type { Lister } from '../../runtime/cache.js';
import type { Clock } from '../../runtime/clock.js';
import type { Reconciler } from '../../runtime/controller.js';
import type { CrrClient, CrrMetadataPatch } from './client.js';
import { planContainerRecreateRequest, type CrrNode, type CrrPlan } from './plan.js';

export interface CrrReconcilerDeps {
  crrs: Lister<ContainerRecreateRequest>;
  pods: Lister<Pod>;
  nodes: Lister<CrrNode>;
  client: CrrClient;
  clock: Clock;
}

function metadataPatch(crr: ContainerRecreateRequest, plan: CrrPlan): CrrMetadataPatch | undefined {
  const patch: CrrMetadataPatch = {};
  if (Object.keys(plan.labels).length > 0) patch.labels = plan.labels;
  if (Object.keys(plan.annotations).length > 0) patch.annotations = plan.annotations;
  const finalizers = crr.metadata?.finalizers ?? [];
  if (plan.finalizer === 'add') patch.finalizers = [...finalizers, FINALIZER_CRR_UNREADY_ACQUIRED];
  if (plan.finalizer === 'remove') patch.finalizers = finalizers.filter((f) => f !== FINALIZER_CRR_UNREADY_ACQUIRED);
  return Object.keys(patch).length > 0 ? patch : undefined;
}

export function crrReconciler(deps: CrrReconcilerDeps): Reconciler {
  return async (_key, ctx) => {
    const crr = deps.crrs.get(ctx.namespace, ctx.name);
    if (!crr) return;
    const pod = deps.pods.get(ctx.namespace, crr.spec.podName);
    const node = pod?.spec.nodeName ? deps.nodes.get(undefined, pod.spec.nodeName) : undefined;
    const plan = planContainerRecreateRequest({ crr, pod, node, now: deps.clock.now() });
    if (plan.podConditions.length > 0 && pod) {
      await deps.client.patchPodConditions(pod.metadata.namespace ?? '', pod.metadata.name, plan.podConditions);
    }
    const patch = metadataPatch(crr, plan);
    if (patch) await deps.client.patchMetadata(crr, patch);
    if (plan.status) {
      ctx.log.info({ phase: plan.status.phase, message: plan.status.message }, 'finishing request');
      await deps.client.patchStatus(crr, plan.status);
    }
    if (plan.delete) {
      ctx.log.info({ ttlSecondsAfterFinished: crr.spec.ttlSecondsAfterFinished }, 'deleting finished request');
      await deps.client.delete(crr);
    }
    if (plan.requeueAfterMs === undefined) return;
    return { requeueAfter: Math.max(plan.requeueAfterMs, 500) };
  };
}
