/**
 * The WorkloadSpread controller's reconcile: reads the target workload and its pods, carries out
 * the plan of plan.ts (deletion costs patched, Adaptive reschedules deleted, events recorded) and
 * writes the status when it changed. A target that does not exist (or a kind Flotilla does not
 * spread) is reported as the TargetFound=False condition and a Warning event naming it; the pod
 * webhook then leaves the workload's pods alone.
 */
import {
  WORKLOADSPREAD_CONDITION_TARGET_FOUND,
  type WorkloadSpread,
  type WorkloadSpreadCondition,
  type WorkloadSpreadStatus,
} from '@flotilla/api';
import type { Lister } from '../../runtime/cache.js';
import type { Clock } from '../../runtime/clock.js';
import type { Reconciler, ReconcileResult } from '../../runtime/controller.js';
import type { EventRecording } from '../../runtime/events.js';
import { sameJson } from '../../runtime/kube-object.js';
import type { NodeLike } from '../../kube/node-fit.js';
import type { WorkloadSpreadClient } from './client.js';
import { planWorkloadSpread, type SpreadPlan, type TargetView } from './plan.js';
import type { SpreadPod } from './subsets.js';
import { replicasOf, targetResource, type Workload } from './targets.js';

export interface WorkloadSpreadReconcilerDeps {
  spreads: Lister<WorkloadSpread>;
  /** The target's pods and the version its new pods get (Deployments). */
  podsOf(ws: WorkloadSpread, workload: Workload): { pods: SpreadPod[]; latestVersion?: string };
  /** A node by name from a cache, for adopting pods the WorkloadSpread did not place. */
  nodeOf?: (name: string) => NodeLike | undefined;
  client: WorkloadSpreadClient;
  events: EventRecording;
  clock: Clock;
}

/** The TargetFound condition, keeping its transition time while the status stays. */
function targetCondition(
  previous: readonly WorkloadSpreadCondition[] | undefined,
  found: boolean,
  message: string,
  now: string,
): WorkloadSpreadCondition[] {
  const old = previous?.find((c) => c.type === WORKLOADSPREAD_CONDITION_TARGET_FOUND);
  const status = found ? 'True' : 'False';
  const reason = found ? 'TargetFound' : 'TargetNotFound';
  const others = (previous ?? []).filter((c) => c.type !== WORKLOADSPREAD_CONDITION_TARGET_FOUND);
  const lastTransitionTime = old?.status === status ? (old.lastTransitionTime ?? now) : now;
  return [...others, { type: WORKLOADSPREAD_CONDITION_TARGET_FOUND, status, reason, message, lastTransitionTime }];
}

async function writeStatus(
  deps: WorkloadSpreadReconcilerDeps,
  ws: WorkloadSpread,
  status: WorkloadSpreadStatus,
): Promise<void> {
  if (sameJson(ws.status ?? {}, status)) return;
  await deps.client.updateStatus({ ...ws, status });
}

/** The target is missing: say so on the object (condition, event once per transition), nothing else. */
async function targetMissing(deps: WorkloadSpreadReconcilerDeps, ws: WorkloadSpread, problem: string): Promise<void> {
  const now = new Date(deps.clock.now()).toISOString();
  const conditions = targetCondition(ws.status?.conditions, false, problem, now);
  const wasMissing = ws.status?.conditions?.some(
    (c) => c.type === WORKLOADSPREAD_CONDITION_TARGET_FOUND && c.status === 'False' && c.message === problem,
  );
  if (!wasMissing) deps.events.event(ws, 'Warning', 'TargetNotFound', problem);
  await writeStatus(deps, ws, { ...ws.status, observedGeneration: ws.metadata?.generation ?? 0, conditions });
}

/** Adopted pods get their subset's metadata, then every pod whose deletion cost changes gets it. */
async function patchPods(client: WorkloadSpreadClient, namespace: string, plan: SpreadPlan): Promise<void> {
  for (const [pod, adoption] of plan.adopted) await client.patchPodMetadata(namespace, pod, adoption.metadata);
  for (const [pod, cost] of plan.deletionCosts) await client.patchDeletionCost(namespace, pod, cost);
}

/** Builds the reconcile function of the WorkloadSpread controller. */
export function workloadSpreadReconciler(deps: WorkloadSpreadReconcilerDeps): Reconciler {
  return async (_key, ctx): Promise<ReconcileResult> => {
    const ws = deps.spreads.get(ctx.namespace, ctx.name);
    if (!ws || ws.metadata?.deletionTimestamp) return;
    const ref = ws.spec.targetRef;
    const namespace = ws.metadata?.namespace ?? '';
    const resource = targetResource(ws);
    if (!resource) {
      await targetMissing(deps, ws, `${ref.kind} of ${ref.apiVersion} is not a workload WorkloadSpread can target`);
      return;
    }
    const workload = await deps.client.getWorkload(resource, namespace, ref.name);
    if (!workload) {
      await targetMissing(deps, ws, `${ref.kind} ${namespace}/${ref.name} (targetRef) not found`);
      return;
    }
    const { pods, latestVersion } = deps.podsOf(ws, workload);
    const target: TargetView = { replicas: replicasOf(ref.kind, workload), latestVersion };
    const now = deps.clock.now();
    const plan = planWorkloadSpread(ws, target, pods, now, deps.nodeOf);
    if (!plan) {
      await targetMissing(deps, ws, 'a subset maxReplicas cannot be read');
      return;
    }
    await patchPods(deps.client, namespace, plan);
    const nowText = new Date(now).toISOString();
    const found = `${ref.kind} ${namespace}/${ref.name} found`;
    const status = { ...plan.status, conditions: targetCondition(ws.status?.conditions, true, found, nowText) };
    await writeStatus(deps, ws, status);
    for (const pod of plan.reschedule) {
      await deps.client.deletePod(namespace, pod);
      deps.events.event(ws, 'Normal', 'RescheduledPod', `Deleted pod ${pod}, unschedulable in its subset`);
    }
    for (const e of plan.events) deps.events.event(ws, e.type, e.reason, e.message);
    return plan.requeueAfterMs === undefined ? undefined : { requeueAfter: plan.requeueAfterMs };
  };
}
