/**
 * The daemon's reconcile of one pod's ContainerRecreateRequests (key `namespace/pod`): list the
 * pod's containers through the CRI by the kubelet's pod-uid label, plan (plan.ts), stop what the
 * plan says — the exec preStop hook first, then StopContainer with the grace — and write the
 * CRRs' statuses. A container that cannot be stopped is Failed with the runtime's message.
 */
import {
  LABEL_CRR_POD_NAME,
  LABEL_CRR_POD_UID,
  type ContainerRecreateRequest,
  type CrrContainerRecreateState,
  type CrrStatus,
} from '@flotilla/api';
import { errorMessage } from '../../errors.js';
import type { ReadStore } from '../../runtime/cache.js';
import type { Clock } from '../../runtime/clock.js';
import type { EventRecording } from '../../runtime/events.js';
import type { ReconcileContext, Reconciler } from '../../runtime/controller.js';
import { KUBELET_LABEL_POD_UID, type RuntimeService } from '../cri/runtime-service.js';
import {
  completedStatus,
  newestByName,
  planPodRecreation,
  type KillOrder,
  type PodPlan,
  type PodRuntimeContainer,
} from './plan.js';

export interface CrrStatusWriter {
  patchStatus(crr: ContainerRecreateRequest, status: CrrStatus): Promise<void>;
}

export interface CrrDaemonDeps {
  crrs: ReadStore<ContainerRecreateRequest>;
  runtime: RuntimeService;
  writer: CrrStatusWriter;
  clock: Clock;
  /** Events about the pods whose containers are stopped (as kruise-daemon records them). */
  events?: EventRecording;
  /** Look again this often while a CRR is unfinished (runtime changes raise no events). */
  resyncMs: number;
}

/** The pod's containers, the newest of each name with its start time. */
async function podContainers(runtime: RuntimeService, podUid: string): Promise<PodRuntimeContainer[]> {
  const newest = [...newestByName(await runtime.listContainers({ [KUBELET_LABEL_POD_UID]: podUid })).values()];
  return Promise.all(
    newest.map(async (c) =>
      c.state === 'CONTAINER_RUNNING' ? { ...c, startedAtMs: await runtime.startedAt(c.id) } : c,
    ),
  );
}

/** Runs the preStop command (its failure does not keep the container from stopping), then stops it. */
async function kill(deps: CrrDaemonDeps, order: KillOrder, ctx: ReconcileContext): Promise<void> {
  const runtime = deps.runtime;
  const crr = order.crr.metadata?.name;
  const meta = order.crr.metadata;
  deps.events?.event(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: meta?.namespace, name: order.crr.spec.podName, uid: meta?.labels?.[LABEL_CRR_POD_UID] },
    },
    'Normal',
    'Killing',
    `Stopping container ${order.name} by ContainerRecreateRequest ${crr}`,
  );
  ctx.log.info(
    { crr, container: order.name, id: order.containerId },
    `Stopping container ${order.name} by ContainerRecreateRequest ${crr}`,
  );
  if (order.preStop) {
    try {
      await runtime.execSync(order.containerId, order.preStop, order.graceSeconds);
    } catch (err) {
      ctx.log.warn({ container: order.name, err: errorMessage(err) }, 'preStop hook failed');
    }
  }
  if (order.preStopHttp) await httpPreStop(runtime, order, ctx);
  await runtime.stopContainer(order.containerId, order.graceSeconds, {
    timeoutMs: (order.graceSeconds + 30) * 1000,
  });
}

/** GETs the hook's URL (host: the hook's, else the sandbox IP, else the node), within the grace. */
async function httpPreStop(runtime: RuntimeService, order: KillOrder, ctx: ReconcileContext): Promise<void> {
  const hook = order.preStopHttp!;
  try {
    const host = hook.host || (await runtime.sandboxIp(order.podSandboxId)) || '127.0.0.1';
    const url = `${hook.scheme}://${host.includes(':') ? `[${host}]` : host}:${hook.port}${hook.path}`;
    const res = await fetch(url, { signal: AbortSignal.timeout(Math.max(1, order.graceSeconds) * 1000) });
    await res.body?.cancel();
  } catch (err) {
    ctx.log.warn({ container: order.name, err: errorMessage(err) }, 'preStop hook failed');
  }
}

/** The status with the container marked Failed. */
function withFailure(
  crr: ContainerRecreateRequest,
  status: CrrStatus,
  name: string,
  message: string,
  now: number,
): CrrStatus {
  const states: CrrContainerRecreateState[] = (status.containerRecreateStates ?? []).map((s) =>
    s.name === name ? { name, phase: 'Failed', message } : s,
  );
  return completedStatus({ ...crr, status }, states, now);
}

/** Carries out the kill orders; a failed one marks its container Failed in the planned status. */
async function killAll(deps: CrrDaemonDeps, plan: PodPlan, now: number, ctx: ReconcileContext): Promise<void> {
  for (const order of plan.kills) {
    try {
      await kill(deps, order, ctx);
    } catch (err) {
      const name = order.crr.metadata?.name ?? '';
      const status = plan.statuses.get(name) ?? order.crr.status ?? {};
      const message = `failed to stop container: ${errorMessage(err)}`;
      plan.statuses.set(name, withFailure(order.crr, status, order.name, message, now));
    }
  }
}

export function crrDaemonReconciler(deps: CrrDaemonDeps): Reconciler {
  return async (_key, ctx) => {
    const crrs = deps.crrs.list(ctx.namespace, { matchLabels: { [LABEL_CRR_POD_NAME]: ctx.name } });
    if (crrs.length === 0) return;
    const uid = crrs[0]?.metadata?.labels?.[LABEL_CRR_POD_UID] ?? '';
    const now = deps.clock.now();
    const plan = planPodRecreation(crrs, await podContainers(deps.runtime, uid), now);
    await killAll(deps, plan, now, ctx);
    for (const crr of crrs) {
      const status = plan.statuses.get(crr.metadata?.name ?? '');
      if (status) await deps.writer.patchStatus(crr, status);
    }
    const after = Math.min(plan.requeueAfterMs ?? deps.resyncMs, deps.resyncMs);
    return { requeueAfter: Math.max(500, after) };
  };
}
