/**
 * The node daemon's decisions for the ContainerRecreateRequests of one pod, as pure functions of
 * the CRRs, the pod's containers as the runtime (CRI) lists them, and the time:
 *
 * 1. One CRR per pod at a time: the oldest Recreating one, else the oldest Pending, else the
 *    oldest new one; other new ones become Pending.
 * 2. With unreadyGracePeriodSeconds, nothing is stopped until the manager has marked the pod not
 *    ready (the unready-acquired annotation) and the grace has passed.
 * 3. Per container, in spec order: one the kubelet has restarted (its containerID or restartCount
 *    moved past the statusContext, as the manager's synced statuses show) is Succeeded once it is
 *    ready and has run minStartedSeconds; one already stopped (or exited by itself) is
 *    Recreating; otherwise it is stopped now — with orderedRecreate only once every container
 *    before it is done, and with forceRecreate even when it was restarted meanwhile.
 * 4. All containers done → the CRR is Completed; a Failed container under failurePolicy Fail
 *    completes it at once.
 */
import {
  ANNOTATION_CRR_SYNC_CONTAINER_STATUSES,
  ANNOTATION_CRR_UNREADY_ACQUIRED,
  type ContainerRecreateRequest,
  type CrrContainer,
  type CrrContainerRecreateState,
  type CrrStatus,
} from '@flotilla/api';
import { sameJson } from '../../runtime/kube-object.js';
import type { RuntimeContainer } from '../cri/runtime-service.js';

/** An entry of the manager's sync-container-statuses annotation. */
export interface SyncedStatus {
  name: string;
  ready: boolean;
  restartCount: number;
  containerID: string;
}

/** A pod container as the runtime sees it: its newest instance, and when that one started. */
export interface PodRuntimeContainer extends RuntimeContainer {
  startedAtMs?: number;
}

/** A container the daemon is to stop now. */
export interface KillOrder {
  crr: ContainerRecreateRequest;
  name: string;
  containerId: string;
  /** Seconds between SIGTERM and SIGKILL (the CRR's, else the pod's default 30). */
  graceSeconds: number;
  /** The preStop command to run first, if the container has an exec preStop hook. */
  preStop?: string[];
  /** The preStop HTTP GET to make first, if the hook is an httpGet (the port resolved by name). */
  preStopHttp?: { scheme: string; host?: string; port: number; path: string };
  podSandboxId: string;
}

export interface PodPlan {
  /** New statuses by CRR name, only where they differ from the stored ones. */
  statuses: Map<string, CrrStatus>;
  kills: KillOrder[];
  requeueAfterMs?: number;
}

const DEFAULT_GRACE_SECONDS = 30;
const PHASE_ORDER: Record<string, number> = { Recreating: 0, Pending: 1, '': 2 };

const isDone = (s: CrrContainerRecreateState | undefined): boolean => s?.phase === 'Succeeded' || s?.phase === 'Failed';

export const isFinishedCrr = (crr: ContainerRecreateRequest): boolean =>
  crr.status?.phase === 'Completed' || crr.status?.phase === 'Failed';

function parseSynced(crr: ContainerRecreateRequest): Map<string, SyncedStatus> {
  const text = crr.metadata?.annotations?.[ANNOTATION_CRR_SYNC_CONTAINER_STATUSES];
  try {
    const list = text ? (JSON.parse(text) as SyncedStatus[]) : [];
    return new Map(Array.isArray(list) ? list.map((s) => [s.name, s]) : []);
  } catch {
    return new Map();
  }
}

/** The newest instance of each container name. */
export function newestByName(containers: readonly PodRuntimeContainer[]): Map<string, PodRuntimeContainer> {
  const out = new Map<string, PodRuntimeContainer>();
  for (const c of containers) {
    const seen = out.get(c.name);
    if (!seen || c.createdAtMs > seen.createdAtMs || (c.createdAtMs === seen.createdAtMs && c.attempt > seen.attempt)) {
      out.set(c.name, c);
    }
  }
  return out;
}

/** CRRs by the order they are served in (step 1); finished and deleted ones are left out. */
export function servingOrder(crrs: readonly ContainerRecreateRequest[]): ContainerRecreateRequest[] {
  const created = (c: ContainerRecreateRequest): string => c.metadata?.creationTimestamp ?? '';
  return crrs
    .filter((c) => !isFinishedCrr(c) && !c.metadata?.deletionTimestamp)
    .sort(
      (a, b) =>
        (PHASE_ORDER[a.status?.phase ?? ''] ?? 3) - (PHASE_ORDER[b.status?.phase ?? ''] ?? 3) ||
        created(a).localeCompare(created(b)) ||
        (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
    );
}

interface ContainerContext {
  crr: ContainerRecreateRequest;
  synced: Map<string, SyncedStatus>;
  runtime: Map<string, PodRuntimeContainer>;
  now: number;
  /** Every container before this one is done (orderedRecreate). */
  previousDone: boolean;
}

type Step = { state: CrrContainerRecreateState; kill?: KillOrder; waitMs?: number };

function restarted(c: CrrContainer, synced: SyncedStatus | undefined): boolean {
  const before = c.statusContext;
  if (!synced || !before) return false;
  return synced.containerID !== before.containerID || synced.restartCount > before.restartCount;
}

/** A restarted container: Succeeded once ready and up for minStartedSeconds. */
function restartedStep(c: CrrContainer, prev: CrrContainerRecreateState | undefined, ctx: ContainerContext): Step {
  const synced = ctx.synced.get(c.name);
  const minMs = (ctx.crr.spec.strategy?.minStartedSeconds ?? 0) * 1000;
  const started = ctx.runtime.get(c.name)?.startedAtMs;
  const upMs = started === undefined ? (minMs === 0 ? 0 : -1) : ctx.now - started;
  const base = { name: c.name, ...(prev?.isKilled ? { isKilled: true } : {}) };
  if (synced?.ready && upMs >= minMs) return { state: { ...base, phase: 'Succeeded' } };
  const waitMs = upMs >= 0 && upMs < minMs ? minMs - upMs : undefined;
  return { state: { ...base, phase: 'Recreating' }, waitMs };
}

/** The order to stop a running container, with its preStop command and grace. */
function killOrder(c: CrrContainer, running: PodRuntimeContainer, crr: ContainerRecreateRequest): KillOrder {
  const command = c.preStop?.exec?.command ?? [];
  const http = preStopHttp(c);
  return {
    crr,
    name: c.name,
    containerId: running.id,
    podSandboxId: running.podSandboxId,
    graceSeconds: crr.spec.strategy?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS,
    ...(command.length > 0 ? { preStop: command } : {}),
    ...(http ? { preStopHttp: http } : {}),
  };
}

/** The httpGet preStop hook with its port as a number (a named port looked up in `ports`). */
function preStopHttp(c: CrrContainer): KillOrder['preStopHttp'] {
  const get = c.preStop?.httpGet;
  if (!get) return undefined;
  const port =
    typeof get.port === 'number' ? get.port : (c.ports ?? []).find((p) => p.name === get.port)?.containerPort;
  if (port === undefined) return undefined;
  return { scheme: (get.scheme ?? 'HTTP').toLowerCase(), host: get.host, port, path: get.path ?? '/' };
}

/** A container not yet restarted: stop it, unless stopped already, exited, or waiting its turn. */
function stopStep(c: CrrContainer, prev: CrrContainerRecreateState | undefined, ctx: ContainerContext): Step {
  if (prev?.isKilled) return { state: { name: c.name, phase: 'Recreating', isKilled: true } };
  const running = ctx.runtime.get(c.name);
  if (!running && !ctx.synced.has(c.name)) {
    // The kubelet keeps a pod's last container of every name, so none at all means no such container.
    return {
      state: {
        name: c.name,
        phase: 'Failed',
        message: `container ${c.name} not found in the pod's runtime containers`,
      },
    };
  }
  if (!running || running.state !== 'CONTAINER_RUNNING') {
    // Exited (or not started yet): there is nothing to stop; the kubelet starts it again.
    return { state: { name: c.name, phase: 'Recreating' } };
  }
  if (ctx.crr.spec.strategy?.orderedRecreate && !ctx.previousDone) {
    return { state: { name: c.name, phase: 'Pending' } };
  }
  return { state: { name: c.name, phase: 'Recreating', isKilled: true }, kill: killOrder(c, running, ctx.crr) };
}

/** Step 3 for one container. */
function containerStep(c: CrrContainer, prev: CrrContainerRecreateState | undefined, ctx: ContainerContext): Step {
  if (prev && isDone(prev)) return { state: prev };
  const force = ctx.crr.spec.strategy?.forceRecreate === true && !prev?.isKilled;
  if (!force && restarted(c, ctx.synced.get(c.name))) return restartedStep(c, prev, ctx);
  return stopStep(c, prev, ctx);
}

/** Step 4: the CRR's phase from its containers' states. */
export function completedStatus(
  crr: ContainerRecreateRequest,
  states: CrrContainerRecreateState[],
  now: number,
): CrrStatus {
  const failed = states.filter((s) => s.phase === 'Failed');
  const failFast = failed.length > 0 && (crr.spec.strategy?.failurePolicy ?? 'Fail') === 'Fail';
  if (!failFast && !states.every(isDone)) {
    return { ...crr.status, phase: 'Recreating', containerRecreateStates: states };
  }
  const message = failed.map((s) => `${s.name}: ${s.message ?? 'failed'}`).join('; ');
  return {
    ...crr.status,
    phase: 'Completed',
    completionTime: new Date(now).toISOString().replace(/\.\d+Z$/, 'Z'),
    containerRecreateStates: states,
    ...(message ? { message } : {}),
  };
}

/** Step 2: milliseconds still to wait before anything may be stopped (0: go). */
function unreadyWaitMs(crr: ContainerRecreateRequest, now: number): number | 'not-acquired' {
  const grace = crr.spec.strategy?.unreadyGracePeriodSeconds;
  if (grace === undefined) return 0;
  const acquired = Date.parse(crr.metadata?.annotations?.[ANNOTATION_CRR_UNREADY_ACQUIRED] ?? '');
  if (Number.isNaN(acquired)) return 'not-acquired';
  return Math.max(0, acquired + grace * 1000 - now);
}

/** Step 3 over every container, in spec order. */
function containerSteps(crr: ContainerRecreateRequest, runtime: Map<string, PodRuntimeContainer>, now: number): Step[] {
  const previous = new Map((crr.status?.containerRecreateStates ?? []).map((s) => [s.name, s]));
  const ctx: ContainerContext = { crr, synced: parseSynced(crr), runtime, now, previousDone: true };
  return crr.spec.containers.map((c) => {
    const step = containerStep(c, previous.get(c.name), ctx);
    ctx.previousDone &&= isDone(step.state);
    return step;
  });
}

/** Steps 2–4 for the CRR being served. */
function servePlan(crr: ContainerRecreateRequest, runtime: Map<string, PodRuntimeContainer>, now: number): PodPlan {
  const plan: PodPlan = { statuses: new Map(), kills: [] };
  const name = crr.metadata?.name ?? '';
  const wait = unreadyWaitMs(crr, now);
  if (wait !== 0) {
    if (crr.status?.phase !== 'Recreating') plan.statuses.set(name, { ...crr.status, phase: 'Recreating' });
    if (wait !== 'not-acquired') plan.requeueAfterMs = wait;
    return plan;
  }
  const steps = containerSteps(crr, runtime, now);
  plan.kills = steps.flatMap((s) => (s.kill ? [s.kill] : []));
  const status = completedStatus(
    crr,
    steps.map((s) => s.state),
    now,
  );
  if (!sameJson(status, crr.status ?? {})) plan.statuses.set(name, status);
  const waits = steps.flatMap((s) => (s.waitMs === undefined ? [] : [s.waitMs]));
  if (waits.length > 0) plan.requeueAfterMs = Math.min(...waits);
  return plan;
}

/** Everything the daemon should do now for one pod's active CRRs. */
export function planPodRecreation(
  crrs: readonly ContainerRecreateRequest[],
  containers: readonly PodRuntimeContainer[],
  now: number,
): PodPlan {
  const [serving, ...waiting] = servingOrder(crrs);
  if (!serving) return { statuses: new Map(), kills: [] };
  const plan = servePlan(serving, newestByName(containers), now);
  for (const crr of waiting) {
    if (!crr.status?.phase) plan.statuses.set(crr.metadata?.name ?? '', { ...crr.status, phase: 'Pending' });
  }
  return plan;
}
