/**
 * Carries out the update step (update-plan.ts): refresh every pod, then update the chosen ones in
 * place or mark them for recreation.
 *
 * An in-place update is up to three writes, in this order: the InPlaceUpdateReady=False
 * condition (and Ready=False) through the status, so the pod leaves its Services before anything
 * restarts (skipped for a resize that restarts no container); with changed cpu/memory values, a
 * patch of the pod's `resize` subresource; then one pod update with the revision labels,
 * lifecycle Updating, the in-place-update-state record and the new images and metadata (or, with
 * inPlaceUpdateStrategy.gracePeriodSeconds, the pending spec in the grace annotation, applied by
 * refresh once the grace period is over). A resize the apiserver refuses fails the update of
 * that pod (FailedUpdatePodInPlace event, FailedUpdate condition) and is retried, as OpenKruise
 * does; the pod keeps its revision and runs on.
 */
import {
  ANNOTATION_INPLACE_UPDATE_GRACE,
  ANNOTATION_INPLACE_UPDATE_STATE,
  ANNOTATION_INPLACE_UPDATE_STATE_OLD,
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  LABEL_LIFECYCLE_STATE,
  LABEL_SPECIFIED_DELETE,
  LifecycleState,
} from '@flotilla/api';
import { formatTime } from '../../runtime/kube-time.js';
import { AgentError, asError, errorMessage } from '../../errors.js';
import { firstError, pooled } from './pool.js';
import {
  graceJson,
  patchSpecToPod,
  readState,
  removeGrace,
  stateJson,
  updateNeedsUnready,
  type InPlaceUpdateState,
  type UpdateSpec,
} from './inplace.js';
import { resizePatch, type ContainerResources, type ResizePatch } from './inplace-resources.js';
import { revisionLabels } from './new-pods.js';
import { patchConditions, setLifecycleState, updatePod } from './pod-writes.js';
import { inPlaceReadyConditions } from './readiness.js';
import { clonePod, type SyncContext } from './sync-context.js';
import type { ControllerRevision, Pod } from '../../kube/types.js';
import { planPodUpdate, planRefresh, type RefreshPlan } from './update-plan.js';

/** What refreshing the pods did: whether a lifecycle state moved, and when to look again. */
export interface RefreshOutcome {
  modified: boolean;
  delayMs?: number;
}

function minDelay(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  return b === undefined ? a : Math.min(a, b);
}

/** Sends a resize patch; the pod as the apiserver now has it. */
async function resizePod(ctx: SyncContext, pod: Pod, patch: ResizePatch): Promise<Pod> {
  try {
    const written = await ctx.client.resizePod(pod, patch);
    ctx.resourceVersions.expectUpdated(ctx.key, written);
    return written;
  } catch (err) {
    throw new AgentError('CLONESET_ERR_POD_UPDATE', `failed to resize pod ${pod.metadata.name}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
}

/**
 * Writes an in-place change: `change` patches a pod copy and resolves the resources to resize.
 * When any value differs from the pod's, the resize subresource gets them first; the pod update
 * (labels, state, images) then goes onto the resized pod, which the spec's resources already
 * match, as OpenKruise's resize-then-Update.
 */
async function writeInPlace(ctx: SyncContext, pod: Pod, change: (copy: Pod) => ContainerResources): Promise<void> {
  const patch = resizePatch(pod, change(clonePod(pod)));
  const current = patch ? await resizePod(ctx, pod, patch) : pod;
  await updatePod(ctx, current, (copy) => {
    change(copy);
  });
}

/** Applies a pending spec (grace over, or the next container batch) to the pod. */
async function applySpec(ctx: SyncContext, pod: Pod, spec: UpdateSpec, dropGrace: boolean): Promise<void> {
  await writeInPlace(ctx, pod, (copy) => {
    const state: InPlaceUpdateState = readState(copy) ?? {
      revision: spec.revision,
      updateTimestamp: formatTime(ctx.now),
      lastContainerStatuses: null,
    };
    const resize = patchSpecToPod(copy, spec, state, ctx.now, ctx.inPlace);
    if (dropGrace) removeGrace(copy);
    return resize;
  });
}

async function refreshOne(ctx: SyncContext, pod: Pod, plan: RefreshPlan): Promise<boolean> {
  if (plan.grace?.kind === 'drop') await updatePod(ctx, pod, (copy) => removeGrace(copy));
  if (plan.grace?.kind === 'apply') await applySpec(ctx, pod, plan.grace.spec, true);
  if (plan.nextBatch) await applySpec(ctx, pod, plan.nextBatch, false);
  if (plan.markReady) await patchConditions(ctx, pod, inPlaceReadyConditions(pod, true, ctx.now));
  if (plan.lifecycle === undefined) return false;
  const markPodNotReady = ctx.cs.spec.lifecycle?.inPlaceUpdate?.markPodNotReady;
  return setLifecycleState(ctx, pod, plan.lifecycle, { markPodNotReady });
}

/** Step 1 of the update: refresh every pod (see update-plan.ts); pods are independent, so in parallel. */
export async function refreshPods(
  ctx: SyncContext,
  pods: readonly Pod[],
  updateRevision: string,
): Promise<RefreshOutcome> {
  const outcome: RefreshOutcome = { modified: false };
  const errors = await pooled(pods, ctx.options.maxConcurrentWrites, async (pod) => {
    const plan = planRefresh({
      lifecycle: ctx.cs.spec.lifecycle,
      pod,
      updateRevision,
      now: ctx.now,
      inPlace: ctx.inPlace,
    });
    outcome.delayMs = minDelay(outcome.delayMs, plan.delayMs);
    if (await refreshOne(ctx, pod, plan)) outcome.modified = true;
  });
  const failure = firstError(errors);
  if (failure !== undefined) throw asError(failure);
  return outcome;
}

/** The in-place update of one pod; resolves the delay before refresh must look at it again. */
async function updateInPlace(ctx: SyncContext, pod: Pod, spec: UpdateSpec): Promise<number | undefined> {
  if (updateNeedsUnready(pod, spec, ctx.inPlace)) {
    await patchConditions(ctx, pod, inPlaceReadyConditions(pod, false, ctx.now));
  }
  await writeInPlace(ctx, pod, (copy) => {
    const labels = (copy.metadata.labels ??= {});
    const annotations = (copy.metadata.annotations ??= {});
    Object.assign(labels, revisionLabels(spec.revision), { [LABEL_LIFECYCLE_STATE]: LifecycleState.Updating });
    annotations[ANNOTATION_LIFECYCLE_TIMESTAMP] = formatTime(ctx.now);
    const state: InPlaceUpdateState = {
      revision: spec.revision,
      updateTimestamp: formatTime(ctx.now),
      lastContainerStatuses: null,
      updateImages: Object.keys(spec.containerImages).length > 0,
      updateResources: Object.keys(spec.containerResources ?? {}).length > 0,
    };
    delete annotations[ANNOTATION_INPLACE_UPDATE_STATE_OLD];
    if ((spec.graceSeconds ?? 0) > 0) {
      annotations[ANNOTATION_INPLACE_UPDATE_STATE] = stateJson(state);
      annotations[ANNOTATION_INPLACE_UPDATE_GRACE] = graceJson(spec);
      return {};
    }
    const resize = patchSpecToPod(copy, spec, state, ctx.now, ctx.inPlace);
    removeGrace(copy);
    return resize;
  });
  return spec.graceSeconds ? spec.graceSeconds * 1000 : undefined;
}

async function markForRecreate(ctx: SyncContext, pod: Pod, target: string): Promise<void> {
  if (pod.metadata.labels?.[LABEL_SPECIFIED_DELETE] === undefined) {
    try {
      const written = await ctx.client.patchPodMetadata(pod, { labels: { [LABEL_SPECIFIED_DELETE]: 'true' } });
      ctx.resourceVersions.expectUpdated(ctx.key, written);
    } catch (err) {
      ctx.events.event(
        ctx.cs,
        'Warning',
        'FailedUpdatePodReCreate',
        `failed to patch pod specified-delete ${pod.metadata.name} for update(revision ${target}): ${errorMessage(err)}`,
      );
      throw new AgentError('CLONESET_ERR_POD_UPDATE', `failed to mark pod ${pod.metadata.name} for recreation`, {
        cause: err,
      });
    }
  }
  ctx.events.event(
    ctx.cs,
    'Normal',
    'SuccessfulUpdatePodReCreate',
    `successfully patch pod ${pod.metadata.name} specified-delete for update(revision ${target})`,
  );
}

export interface UpdateInputs {
  pods: readonly Pod[];
  target: ControllerRevision;
  revisions: readonly ControllerRevision[];
  dataOf: (revision: ControllerRevision) => unknown;
}

/**
 * Updates the chosen pods (already limited by maxUnavailable, so their order no longer matters)
 * with bounded parallelism; no new pod starts after a failure. Resolves the shortest grace delay;
 * throws the first failure.
 */
export async function updatePods(ctx: SyncContext, input: UpdateInputs): Promise<number | undefined> {
  let delay: number | undefined;
  const errors = await pooled(
    input.pods,
    ctx.options.maxConcurrentWrites,
    async (pod) => {
      delay = minDelay(delay, await updateOne(ctx, input, pod));
    },
    true,
  );
  const failure = firstError(errors);
  if (failure !== undefined) throw asError(failure);
  return delay;
}

/** Updates one pod as planPodUpdate decides; resolves its grace delay, if any. */
async function updateOne(ctx: SyncContext, input: UpdateInputs, pod: Pod): Promise<number | undefined> {
  const target = input.target.metadata.name;
  const hook = ctx.cs.spec.lifecycle?.inPlaceUpdate;
  const decision = planPodUpdate({
    cs: ctx.cs,
    pod,
    target: input.target,
    revisions: input.revisions,
    dataOf: input.dataOf,
    inPlace: ctx.inPlace,
  });
  switch (decision.kind) {
    case 'recreate':
      await markForRecreate(ctx, pod, target);
      return undefined;
    case 'preparingUpdate':
      await setLifecycleState(ctx, pod, LifecycleState.PreparingUpdate, {
        markPodNotReady: hook?.markPodNotReady,
        ...(decision.fromUpdated && hook ? { hook } : {}),
      });
      return undefined;
    case 'wait':
      return undefined;
    case 'inPlace':
      if (!(await budgetAllows(ctx, pod))) return PUB_RETRY_MS;
      return inPlaceWithEvents(ctx, pod, decision.spec, target);
  }
}

/** How soon a pod its budget held back is tried again (OpenKruise: 1 s). */
const PUB_RETRY_MS = 1000;

/**
 * Whether the pod's PodUnavailableBudget lets it go unavailable for an in-place update (UPDATE),
 * taking one from the budget if so; always true without the update gate.
 */
async function budgetAllows(ctx: SyncContext, pod: Pod): Promise<boolean> {
  if (!ctx.pubGuard) return true;
  const verdict = await ctx.pubGuard.admit({
    operation: 'UPDATE',
    namespace: pod.metadata.namespace ?? '',
    podName: pod.metadata.name,
    pod,
    dryRun: false,
  });
  if (!verdict.allowed) ctx.log.debug({ pod: pod.metadata.name, reason: verdict.message }, 'in-place update held back');
  return verdict.allowed;
}

async function inPlaceWithEvents(
  ctx: SyncContext,
  pod: Pod,
  spec: UpdateSpec,
  target: string,
): Promise<number | undefined> {
  let delay: number | undefined;
  try {
    delay = await updateInPlace(ctx, pod, spec);
  } catch (err) {
    const message = `failed to update pod ${pod.metadata.name} in-place(revision ${target}): ${errorMessage(err)}`;
    ctx.events.event(ctx.cs, 'Warning', 'FailedUpdatePodInPlace', message);
    throw err;
  }
  const message = `successfully update pod ${pod.metadata.name} in-place(revision ${target})`;
  ctx.events.event(ctx.cs, 'Normal', 'SuccessfulUpdatePodInPlace', message);
  return delay;
}
