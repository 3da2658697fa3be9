/**
 * The update step, decided purely (OpenKruise sync/cloneset_update.go Update):
 *
 * 1. refresh every pod: finish in-place grace periods, start the next container batch, set
 *    InPlaceUpdateReady=True once an update completed, and move lifecycle states along
 *    (lifecycle.ts). If any lifecycle state changed, the step ends there;
 * 2. stop if paused;
 * 3. candidates are pods not at the target revision, except PreparingDelete pods and pods still
 *    in an in-place grace period (pods in Updated always qualify);
 * 4. order them (update-order.ts) and take what updateNum and maxUnavailable allow;
 * 5. per pod: in place when the strategy allows and the revisions differ only in images and
 *    metadata, or with the InPlaceWorkloadVerticalScaling gate also in cpu/memory values (first
 *    through PreparingUpdate when the inPlaceUpdate hook is on the pod);
 *    otherwise mark it `apps.kruise.io/specified-delete` so the scale step recreates it;
 *    InPlaceOnly with an impossible in-place change is an error.
 *
 * With `updateStrategy.type: OnDelete` (OpenKruise v1.9.0) none of this runs (updateStepRuns):
 * no refresh and no update; pods move to the update revision only when they are deleted and the
 * scale step recreates them.
 */
import { CLONESET_UPDATE_ON_DELETE, LifecycleState, type Lifecycle } from '@flotilla/api';
import { AgentError } from '../../errors.js';
import {
  calculateInPlaceSpec,
  containersNotUpdated,
  hasGrace,
  hasNextBatch,
  inPlaceUpdateIncomplete,
  readGrace,
  readState,
  type InPlaceOptions,
  type InPlaceUpdateState,
  type UpdateSpec,
} from './inplace.js';
import { isPodHooked, nextRefreshState } from './lifecycle.js';
import { calculateDiffs, type PlanOptions } from './plan.js';
import { hasRevision, lifecycleState } from './pods.js';
import { limitUpdates, sortUpdateCandidates } from './update-order.js';
import type { ControllerRevision, Pod } from '../../kube/types.js';
import type { CloneSet } from './types.js';

/**
 * Whether the update step runs at all. OpenKruise v1.9.0 returns from Update() at once for
 * OnDelete, before refreshing any pod: lifecycle states, grace periods, container batches and
 * InPlaceUpdateReady are left as they are. Scaling is unaffected.
 */
export function updateStepRuns(cs: CloneSet): boolean {
  return cs.spec.updateStrategy?.type !== CLONESET_UPDATE_ON_DELETE;
}

/** What refresh does to one pod. */
export interface RefreshPlan {
  /** The grace period ended (apply the pending spec) or its revision is stale (drop it). */
  grace?: { kind: 'apply'; spec: UpdateSpec } | { kind: 'drop' };
  /** Start the next container batch. */
  nextBatch?: UpdateSpec;
  /** Set InPlaceUpdateReady=True. */
  markReady?: boolean;
  /** Move the lifecycle state. */
  lifecycle?: string;
  /** Come back after this long (grace period still running). */
  delayMs?: number;
}

export interface RefreshInput {
  lifecycle: Lifecycle | undefined;
  pod: Pod;
  updateRevision: string;
  now: number;
  inPlace?: InPlaceOptions;
}

function isReady(pod: Pod, name: string): boolean {
  return (pod.status?.containerStatuses ?? []).some((s) => s.name === name && s.ready === true);
}

/** The update spec of the containers left for the next batch. */
function nextBatchSpec(state: InPlaceUpdateState): UpdateSpec {
  const resources = state.nextContainerResources ?? {};
  return {
    revision: state.revision,
    containerImages: state.nextContainerImages ?? {},
    ...(Object.keys(resources).length > 0 ? { containerResources: resources } : {}),
  };
}

/** The in-place part of refresh (inplaceupdate Refresh). */
function refreshInPlace(pod: Pod, now: number, opts: InPlaceOptions): Omit<RefreshPlan, 'lifecycle'> {
  const grace = readGrace(pod);
  if (grace) {
    if (!hasRevision(pod, grace.revision)) return { grace: { kind: 'drop' } };
    const started = Date.parse(readState(pod)?.updateTimestamp ?? '');
    const left = (grace.graceSeconds ?? 0) * 1000 - (now - (Number.isNaN(started) ? now : started));
    // Rounded up to whole seconds, as OpenKruise requeues.
    return left > 0 ? { delayMs: Math.ceil(left / 1000) * 1000 } : { grace: { kind: 'apply', spec: grace } };
  }
  const state = readState(pod);
  if (state) {
    if (containersNotUpdated(pod, state, opts) !== undefined) return {};
    // A batch holding only resources starts too; OpenKruise v1.9.0's updateNextBatch looks at
    // images and env metadata only, so such a pod would stay Updating for ever there.
    if (hasNextBatch(state)) {
      const required = state.preCheckBeforeNext?.containersRequiredReady ?? [];
      if (!required.every((name) => isReady(pod, name))) return {};
      return { nextBatch: nextBatchSpec(state) };
    }
  }
  return { markReady: true };
}

/** Everything refresh would do to one pod. */
export function planRefresh(input: RefreshInput): RefreshPlan {
  const opts = input.inPlace ?? {};
  const plan: RefreshPlan = refreshInPlace(input.pod, input.now, opts);
  const lifecycle = nextRefreshState({
    lifecycle: input.lifecycle,
    pod: input.pod,
    updateRevision: input.updateRevision,
    updateCompleted: inPlaceUpdateIncomplete(input.pod, opts) === undefined,
  });
  if (lifecycle !== undefined && lifecycle !== lifecycleState(input.pod)) plan.lifecycle = lifecycle;
  return plan;
}

/** How one chosen pod is updated. */
export type PodUpdate =
  | { kind: 'inPlace'; spec: UpdateSpec }
  /** Hooked: move to PreparingUpdate (re-adding the hook when coming from Updated) and wait. */
  | { kind: 'preparingUpdate'; fromUpdated: boolean }
  /** PreparingUpdate and still hooked: nothing until the user removes the hook. */
  | { kind: 'wait' }
  | { kind: 'recreate' };

export interface PodUpdateInput {
  cs: CloneSet;
  pod: Pod;
  /** The revision the pod moves to. */
  target: ControllerRevision;
  /** Every revision of the CloneSet, to find the pod's own. */
  revisions: readonly ControllerRevision[];
  /** Parsed data of a revision. */
  dataOf: (revision: ControllerRevision) => unknown;
  inPlace?: InPlaceOptions;
}

function inPlaceSpec(input: PodUpdateInput): UpdateSpec | undefined {
  const own = input.revisions.find((r) => hasRevision(input.pod, r.metadata.name));
  if (!own) return undefined;
  const grace = input.cs.spec.updateStrategy?.inPlaceUpdateStrategy?.gracePeriodSeconds ?? 0;
  const [from, to] = [input.dataOf(own), input.dataOf(input.target)];
  return calculateInPlaceSpec(from, to, input.target.metadata.name, grace, input.inPlace);
}

/** Decides how to update one pod; throws the errors OpenKruise reports as FailedUpdate. */
export function planPodUpdate(input: PodUpdateInput): PodUpdate {
  const { cs, pod } = input;
  const type = cs.spec.updateStrategy?.type ?? 'ReCreate';
  if (type !== 'InPlaceIfPossible' && type !== 'InPlaceOnly') return { kind: 'recreate' };
  const spec = inPlaceSpec(input);
  if (!spec) {
    if (type === 'InPlaceOnly') {
      throw new AgentError(
        'CLONESET_ERR_INPLACE_ONLY',
        `find Pod ${pod.metadata.name} update strategy is InPlaceOnly but can not update in-place`,
      );
    }
    return { kind: 'recreate' };
  }
  return inPlaceStep(cs, pod, spec);
}

/** The step of an in-place update for the pod's lifecycle state (and the inPlaceUpdate hook). */
function inPlaceStep(cs: CloneSet, pod: Pod, spec: UpdateSpec): PodUpdate {
  const hook = cs.spec.lifecycle?.inPlaceUpdate;
  const state = lifecycleState(pod);
  switch (state) {
    case '':
    case LifecycleState.PreparingNormal:
    case LifecycleState.Normal:
      return isPodHooked(hook, pod) ? { kind: 'preparingUpdate', fromUpdated: false } : { kind: 'inPlace', spec };
    case LifecycleState.Updated:
      return { kind: 'preparingUpdate', fromUpdated: true };
    case LifecycleState.PreparingUpdate:
      return isPodHooked(hook, pod) ? { kind: 'wait' } : { kind: 'inPlace', spec };
    case LifecycleState.Updating:
      return { kind: 'inPlace', spec };
    default:
      throw new AgentError(
        'CLONESET_ERR_LIFECYCLE_STATE',
        `not allowed to in-place update pod ${pod.metadata.name} in state ${state}`,
      );
  }
}

export interface UpdateSelectionInput {
  cs: CloneSet;
  pods: readonly Pod[];
  currentRevision: ControllerRevision;
  updateRevision: ControllerRevision;
  now: number;
  options?: PlanOptions;
}

/** The pods to update now, in order, and the revision they move to. Empty when paused or done. */
export function selectPodsToUpdate(input: UpdateSelectionInput): { target: ControllerRevision; pods: Pod[] } {
  const { cs, pods } = input;
  const none = { target: input.updateRevision, pods: [] };
  if (cs.spec.updateStrategy?.paused || !updateStepRuns(cs)) return none;
  const diffs = calculateDiffs({
    cs,
    pods,
    currentRevision: input.currentRevision.metadata.name,
    updateRevision: input.updateRevision.metadata.name,
    now: input.now,
    options: input.options,
  });
  if (diffs.updateNum === 0) return none;
  const target = diffs.updateNum > 0 ? input.updateRevision : input.currentRevision;
  const candidates: number[] = [];
  pods.forEach((pod, i) => {
    const atUpdate = hasRevision(pod, input.updateRevision.metadata.name);
    if (diffs.updateNum > 0 ? atUpdate : !atUpdate) return;
    const state = lifecycleState(pod);
    if (state === LifecycleState.PreparingDelete) return;
    if (state !== LifecycleState.Updated && hasGrace(pod)) return;
    candidates.push(i);
  });
  const sorted = sortUpdateCandidates(cs.spec.updateStrategy ?? {}, pods, candidates);
  const chosen = limitUpdates({
    pods,
    candidates: sorted,
    updateNum: diffs.updateNum,
    updateMaxUnavailable: diffs.updateMaxUnavailable,
    targetRevision: target.metadata.name,
    minReadySeconds: cs.spec.minReadySeconds ?? 0,
    now: input.now,
  });
  return { target, pods: chosen.map((i) => pods[i]!) };
}
