/**
 * The BroadcastJob controller's reconcile: a finished job waits out ttlSecondsAfterFinished and
 * is deleted; a running one gets the plan of plan.ts carried out (pods deleted, then pods created
 * on the planned nodes, the events recorded) and its status written when it changed. Creations
 * and deletions are expected (ScaleExpectations, by node name and pod name) until the pod
 * informer shows them, and so are the job's own status writes, so a lagging cache never starts a
 * second pod on a node or finishes a job twice.
 */
import { defaultBroadcastJob, type BroadcastJob } from '@flotilla/api';
import { errorMessage } from '../../errors.js';
import type { Pod } from '../../kube/types.js';
import type { Lister } from '../../runtime/cache.js';
import type { Clock } from '../../runtime/clock.js';
import type { ReconcileContext, Reconciler, ReconcileResult } from '../../runtime/controller.js';
import type { EventRecording } from '../../runtime/events.js';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { sameJson } from '../../runtime/kube-object.js';
import type { BroadcastJobClient } from './client.js';
import type { NodeLike } from '../../kube/node-fit.js';
import { isJobFinished, planBroadcastJob, ttlLeftMs, type Plan } from './plan.js';
import { podForNode } from './pod-template.js';

export interface BroadcastJobControllerOptions {
  /** How soon to look again while the cache lags behind this controller's own writes. */
  expectationRequeueMs: number;
  /**
   * Leave pods to the scheduler, pinned by node affinity (OpenKruise's default); false binds each
   * pod to its node by spec.nodeName (`--assign-bcj-pods-by-scheduler=false`).
   */
  assignPodsByScheduler?: boolean;
}

export interface BroadcastJobReconcilerDeps {
  jobs: Lister<BroadcastJob>;
  /** Pods whose owner references name this uid. */
  podsOwnedBy: (uid: string) => Pod[];
  nodes: () => NodeLike[];
  client: BroadcastJobClient;
  scale: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  events: EventRecording;
  clock: Clock;
  options: BroadcastJobControllerOptions;
}

/** Builds the reconcile function of the BroadcastJob controller. */
export function broadcastJobReconciler(deps: BroadcastJobReconcilerDeps): Reconciler {
  return async (key, ctx) => {
    const cached = deps.jobs.get(ctx.namespace, ctx.name);
    if (!cached) {
      deps.scale.delete(key);
      deps.resourceVersions.delete(key);
      return;
    }
    deps.resourceVersions.observed(cached);
    if (!deps.scale.satisfied(key) || !deps.resourceVersions.isSatisfied(key)) {
      return { requeueAfter: deps.options.expectationRequeueMs };
    }
    // Jobs may be stored without the webhook's defaults; the controller reads them defaulted.
    const job = defaultBroadcastJob(cached);
    if (isJobFinished(job)) return afterFinish(job, deps, ctx);
    const uid = job.metadata?.uid ?? '';
    const pods = deps
      .podsOwnedBy(uid)
      .filter((p) => p.metadata.ownerReferences?.some((r) => r.controller && r.uid === uid));
    const plan = planBroadcastJob({ job, pods, nodes: deps.nodes(), nowMs: deps.clock.now() });
    await deletePods(key, plan.delete, deps, ctx);
    const failedCreates = await createPods(key, job, plan.create, deps, ctx);
    const status = { ...plan.status, active: (plan.status.active ?? 0) - failedCreates };
    for (const e of plan.events) deps.events.event(cached, e.type, e.reason, e.message);
    await writeStatus(key, cached, status, deps, ctx);
    return requeue(plan);
  };
}

function requeue(plan: Plan): ReconcileResult {
  if (plan.requeueAfterMs === undefined) return;
  return { requeueAfter: Math.max(plan.requeueAfterMs, 1000) };
}

/** Deletes the job once ttlSecondsAfterFinished has passed since it finished. */
async function afterFinish(
  job: BroadcastJob,
  deps: BroadcastJobReconcilerDeps,
  ctx: ReconcileContext,
): Promise<ReconcileResult> {
  const left = ttlLeftMs(job, deps.clock.now());
  if (left === undefined) return;
  if (left > 0) return { requeueAfter: left };
  ctx.log.info(
    { ttlSecondsAfterFinished: job.spec.completionPolicy?.ttlSecondsAfterFinished },
    'deleting finished job',
  );
  await deps.client.deleteJob(job);
}

async function deletePods(
  key: string,
  pods: readonly Pod[],
  deps: BroadcastJobReconcilerDeps,
  ctx: ReconcileContext,
): Promise<void> {
  if (pods.length === 0) return;
  const names = pods.map((p) => p.metadata.name);
  deps.scale.expectDeletions(key, names);
  const results = await Promise.allSettled(pods.map((p) => deps.client.deletePod(p)));
  const failed = names.filter((_, i) => results[i]!.status === 'rejected');
  if (failed.length > 0) deps.scale.lowerExpectations(key, { deletions: failed });
  ctx.log.info({ pods: names, failed }, 'deleted pods');
}

/**
 * Creates the pods in batches of 1, 2, 4, … (the slow start of Kubernetes' job controllers), so a
 * quota or admission error costs one request, not one per node. Returns how many failed.
 */
async function createPods(
  key: string,
  job: BroadcastJob,
  nodes: readonly string[],
  deps: BroadcastJobReconcilerDeps,
  ctx: ReconcileContext,
): Promise<number> {
  let start = 0;
  for (let size = 1; start < nodes.length; size *= 2) {
    const batch = nodes.slice(start, start + size);
    deps.scale.expectCreations(key, batch);
    const byScheduler = deps.options.assignPodsByScheduler ?? true;
    const results = await Promise.allSettled(
      batch.map((node) => deps.client.createPod(podForNode(job, node, byScheduler))),
    );
    const failed = batch.filter((_, i) => results[i]!.status === 'rejected');
    start += batch.length;
    for (const [i, r] of results.entries()) {
      if (r.status === 'fulfilled') {
        deps.events.event(job, 'Normal', 'SuccessfulCreate', `Created pod: ${r.value.metadata.name}`);
      } else {
        deps.events.event(job, 'Warning', 'FailedCreate', `Error creating: ${errorMessage(r.reason)}`);
        ctx.log.warn({ node: batch[i], err: errorMessage(r.reason) }, 'creating a pod failed');
      }
    }
    if (failed.length > 0) {
      deps.scale.lowerExpectations(key, { creations: failed });
      return failed.length + nodes.length - start;
    }
  }
  if (nodes.length > 0) ctx.log.info({ nodes }, 'started pods');
  return 0;
}

async function writeStatus(
  key: string,
  cached: BroadcastJob,
  status: BroadcastJob['status'],
  deps: BroadcastJobReconcilerDeps,
  ctx: ReconcileContext,
): Promise<void> {
  if (sameJson(cached.status, status)) return;
  const updated = await deps.client.updateStatus({ ...cached, status });
  deps.resourceVersions.expectUpdated(key, updated);
  ctx.log.debug({ status }, 'updated status');
}
