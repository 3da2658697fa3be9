/**
 * The Advanced StatefulSet reconcile: find or store the update revision, plan (plan.ts), refresh
 * pods in the middle of an in-place update (grace period over, InPlaceUpdateReady back to True),
 * then create claims and pods, delete pods, update pods in place, delete claims of scaled-away
 * ordinals, and write the status when it changed. Creations and deletions are expected
 * (ScaleExpectations, by pod name) and so are this controller's own writes to pods and to the
 * set, so a lagging cache never creates a pod twice or acts on what it has just changed.
 */
import {
  ANNOTATION_INPLACE_UPDATE_GRACE,
  ANNOTATION_INPLACE_UPDATE_STATE,
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
  LifecycleState,
  type LifecycleHook,
  STATEFULSET_CONDITION_FAILED_CREATE,
  STATEFULSET_CONDITION_FAILED_UPDATE,
  defaultStatefulSet,
  type StatefulSet,
} from '@flotilla/api';
import { errorMessage, isKubeStatus } from '../../errors.js';
import { adoptionPatch, orphansToAdopt, podsToRelease, releasePatch } from '../../kube/adoption.js';
import type { ControllerRevision, PersistentVolumeClaim, Pod } from '../../kube/types.js';
import type { Lister } from '../../runtime/cache.js';
import type { Clock } from '../../runtime/clock.js';
import type { ReconcileContext, Reconciler, ReconcileResult } from '../../runtime/controller.js';
import type { EventRecording } from '../../runtime/events.js';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { sameJson } from '../../runtime/kube-object.js';
import { formatTime } from '../../runtime/kube-time.js';
import {
  graceJson,
  patchSpecToPod,
  readState,
  removeGrace,
  stateJson,
  updateNeedsUnready,
  type InPlaceUpdateState,
  type UpdateSpec,
} from '../cloneset/inplace.js';
import { notReadyConditions } from '../cloneset/pod-writes.js';
import { inPlaceReadyConditions } from '../cloneset/readiness.js';
import {
  decideUpdateRevision,
  findCurrentRevision,
  nextRevisionNumber,
  revisionBytes,
  revisionsToTruncate,
  sortRevisions,
} from '../cloneset/revisions.js';
import { planRefresh } from '../cloneset/update-plan.js';
import type { StatefulSetClient } from './client.js';
import { newPod, ordinalOf, setOwnerRef } from './identity.js';
import { planStatefulSet, type Plan } from './plan.js';
import { newRevision } from './revisions.js';
import { computeStatus, withCondition } from './status.js';

export interface StatefulSetControllerOptions {
  /** How soon to look again while the cache lags behind this controller's own writes. */
  expectationRequeueMs: number;
}

export interface StatefulSetReconcilerDeps {
  sets: Lister<StatefulSet>;
  podsOwnedBy: (uid: string) => Pod[];
  /** Pods of a namespace, to find orphans the set adopts. */
  podsIn: (namespace: string) => Pod[];
  revisionsOwnedBy: (uid: string) => ControllerRevision[];
  claimsIn: (namespace: string) => PersistentVolumeClaim[];
  client: StatefulSetClient;
  scale: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  events: EventRecording;
  clock: Clock;
  options: StatefulSetControllerOptions;
}

interface Revisions {
  current: ControllerRevision;
  update: ControllerRevision;
  all: ControllerRevision[];
}

const controlledBy =
  (uid: string) => (o: { metadata: { ownerReferences?: { controller?: boolean; uid: string }[] } }) =>
    o.metadata.ownerReferences?.some((r) => r.controller && r.uid === uid) ?? false;

/** The stored update revision (created, or an older equal one made the latest) and the current one. */
async function syncRevisions(set: StatefulSet, deps: StatefulSetReconcilerDeps): Promise<Revisions> {
  const uid = set.metadata?.uid ?? '';
  const sorted = sortRevisions(deps.revisionsOwnedBy(uid).filter(controlledBy(uid)));
  const candidate = newRevision(set, nextRevisionNumber(sorted), set.status?.collisionCount ?? 0);
  const { bytes, ...body } = candidate;
  const decision = decideUpdateRevision(sorted, bytes);
  let update: ControllerRevision;
  if (decision.kind === 'reuse') update = decision.revision;
  else if (decision.kind === 'bump') {
    update = await deps.client.updateRevision({ ...decision.revision, revision: decision.to });
  } else {
    try {
      update = await deps.client.createRevision(body);
    } catch (err) {
      if (!isKubeStatus(err, 409)) throw err;
      // Created meanwhile (or by OpenKruise before us): the same data means the same revision.
      update = await deps.client.getRevision(body.metadata.namespace ?? '', body.metadata.name);
      if (revisionBytes(update) !== bytes) {
        throw new Error(`revision ${body.metadata.name} exists with other data`, { cause: err });
      }
    }
  }
  const all = [...sorted.filter((r) => r.metadata.name !== update.metadata.name), update];
  return { update, current: findCurrentRevision(all, set.status?.currentRevision, update), all };
}

/** Builds the reconcile function of the Advanced StatefulSet controller. */
export function statefulSetReconciler(deps: StatefulSetReconcilerDeps): Reconciler {
  return async (key, ctx) => {
    const cached = deps.sets.get(ctx.namespace, ctx.name);
    if (!cached) {
      deps.scale.delete(key);
      deps.resourceVersions.delete(key);
      return;
    }
    // The cache may already hold what a write returned (its event handled before the write's
    // answer was recorded, or a write that changed nothing): that meets the expectation too.
    const uid = cached.metadata?.uid ?? '';
    for (const obj of [cached, ...deps.podsOwnedBy(uid)]) deps.resourceVersions.observed(obj);
    if (!deps.scale.satisfied(key) || !deps.resourceVersions.isSatisfied(key)) {
      ctx.log.debug({ pods: deps.scale.pending(key) }, 'waiting for the cache to show our writes');
      return { requeueAfter: deps.options.expectationRequeueMs };
    }
    if (cached.metadata?.deletionTimestamp) return;
    if (await claimPods(key, cached, deps, ctx)) return { requeueAfter: deps.options.expectationRequeueMs };
    return sync(key, cached, deps, ctx);
  };
}

/**
 * Claims the set's pods (kube/adoption.ts, ClaimPods with isMemberOf): orphans named
 * `<set>-<ordinal>` that the selector matches are adopted, controlled pods it no longer matches
 * are released. Resolves whether anything changed; the pass then waits for the cache to show it.
 * A pod gone or replaced meanwhile (404, or 409 from the uid precondition) is skipped.
 */
async function claimPods(
  key: string,
  set: StatefulSet,
  deps: StatefulSetReconcilerDeps,
  ctx: ReconcileContext,
): Promise<boolean> {
  const uid = set.metadata?.uid ?? '';
  const member = (pod: Pod): boolean => ordinalOf(set, pod) >= 0;
  const adopt = orphansToAdopt(set, deps.podsIn(set.metadata?.namespace ?? ''), member);
  const release = podsToRelease(set, deps.podsOwnedBy(uid).filter(controlledBy(uid)).filter(member));
  const ref = setOwnerRef(set);
  const writes = [
    ...adopt.map((pod) => ({ pod, patch: adoptionPatch(ref, pod) })),
    ...release.map((pod) => ({ pod, patch: releasePatch(uid, pod) })),
  ];
  let changed = false;
  for (const { pod, patch } of writes) {
    try {
      deps.resourceVersions.expectUpdated(key, await deps.client.patchPodMetadata(pod, patch));
      changed = true;
    } catch (err) {
      if (!isKubeStatus(err, 404) && !isKubeStatus(err, 409)) throw err;
    }
  }
  if (writes.length > 0) {
    const names = (pods: Pod[]): string[] => pods.map((p) => p.metadata.name);
    ctx.log.info({ adopted: names(adopt), released: names(release) }, 'claimed pods');
  }
  return changed;
}

/** One pass over a set whose expectations are met: revisions, refresh, plan, writes, status. */
async function sync(
  key: string,
  cached: StatefulSet,
  deps: StatefulSetReconcilerDeps,
  ctx: ReconcileContext,
): Promise<ReconcileResult> {
  const uid = cached.metadata?.uid ?? '';
  // Sets may be stored without the webhook's defaults; the controller reads them defaulted.
  const set = defaultStatefulSet(cached);
  const pods = deps.podsOwnedBy(uid).filter(controlledBy(uid));
  const revisions = await syncRevisions(set, deps);
  const now = deps.clock.now();
  const data = new Map(revisions.all.map((r) => [r.metadata.name, r.data]));
  const refreshDelay = await refreshPods(key, set, pods, revisions.update.metadata.name, deps);
  const plan = planStatefulSet({
    set,
    pods,
    claims: deps.claimsIn(set.metadata?.namespace ?? ''),
    currentRevision: revisions.current.metadata.name,
    updateRevision: revisions.update.metadata.name,
    revisionData: (name) => data.get(name),
    now,
  });
  const { delay: graceDelay, failure } = await runPlan({ key, set, revisions, deps, ctx }, plan);
  if (!failure) await truncateHistory(set, pods, revisions, deps);
  const computed = computeStatus({
    set: cached,
    pods,
    currentRevision: revisions.current.metadata.name,
    updateRevision: revisions.update.metadata.name,
    collisionCount: set.status?.collisionCount ?? 0,
    now,
  });
  const status = failure ? withCondition(computed, failure.conditionType, failure.message, now) : computed;
  await writeStatus(key, cached, status, deps, ctx);
  // The status holds the condition; the error makes the queue retry with backoff.
  if (failure) throw failure;
  const delay = [refreshDelay, graceDelay, plan.availableAfterMs].filter((d): d is number => d !== undefined);
  return delay.length > 0 ? { requeueAfter: Math.max(1000, Math.min(...delay)) } : undefined;
}

/** A pod create or update that failed: the condition OpenKruise sets for it, then a retry. */
class PodWriteError extends Error {
  constructor(
    readonly conditionType: string,
    message: string,
    cause: unknown,
  ) {
    super(message, { cause });
    this.name = 'PodWriteError';
  }
}

interface Step {
  key: string;
  set: StatefulSet;
  revisions: Revisions;
  deps: StatefulSetReconcilerDeps;
  ctx: ReconcileContext;
}

/** Carries out the plan; a failed pod create or update is returned, to be reported in the status. */
async function runPlan(step: Step, plan: Plan): Promise<{ delay?: number; failure?: PodWriteError }> {
  try {
    return { delay: await carryOut(step, plan) };
  } catch (err) {
    if (err instanceof PodWriteError) return { failure: err };
    throw err;
  }
}

/** Creates the planned pods, each expected before its request; a failure stops the rest. */
async function createPods(step: Step, plan: Plan): Promise<void> {
  const { key, set, revisions, deps, ctx } = step;
  const templates = new Map(revisions.all.map((r) => [r.metadata.name, templateOf(r)]));
  for (const { ordinal, revision } of plan.create) {
    const pod = newPod(set, templates.get(revision) ?? set.spec.template, revision, ordinal);
    deps.scale.expectCreations(key, [pod.metadata.name]);
    try {
      await deps.client.createPod(pod);
      deps.events.event(
        set,
        'Normal',
        'SuccessfulCreate',
        `create Pod ${pod.metadata.name} in StatefulSet ${ctx.name} successful`,
      );
    } catch (err) {
      deps.scale.lowerExpectations(key, { creations: [pod.metadata.name] });
      deps.events.event(
        set,
        'Warning',
        'FailedCreate',
        `create Pod ${pod.metadata.name} in StatefulSet ${ctx.name} failed error: ${errorMessage(err)}`,
      );
      throw new PodWriteError(
        STATEFULSET_CONDITION_FAILED_CREATE,
        `create Pod ${pod.metadata.name} failed: ${errorMessage(err)}`,
        err,
      );
    }
  }
}

/** Updates the planned pods in place; resolves the shortest grace period started. */
async function updatePodsInPlace(step: Step, plan: Plan): Promise<number | undefined> {
  const { key, set, deps } = step;
  let delay: number | undefined;
  for (const { pod, spec } of plan.inPlace) {
    try {
      await updateInPlace(key, pod, spec, deps);
    } catch (err) {
      const message = `failed to update pod ${pod.metadata.name} in-place(revision ${spec.revision}): ${errorMessage(err)}`;
      deps.events.event(set, 'Warning', 'FailedUpdatePodInPlace', message);
      throw new PodWriteError(STATEFULSET_CONDITION_FAILED_UPDATE, message, err);
    }
    if (spec.graceSeconds) delay = Math.min(delay ?? Infinity, spec.graceSeconds * 1000);
  }
  return delay;
}

async function carryOut(step: Step, plan: Plan): Promise<number | undefined> {
  const { key, set, deps, ctx } = step;
  for (const claim of plan.createClaims) await deps.client.createClaim(claim);
  await createPods(step, plan);
  for (const pod of plan.delete) {
    deps.scale.expectDeletions(key, [pod.metadata.name]);
    await deps.client.deletePod(pod);
    deps.events.event(
      set,
      'Normal',
      'SuccessfulDelete',
      `delete Pod ${pod.metadata.name} in StatefulSet ${ctx.name} successful`,
    );
  }
  for (const { pod, state, markPodNotReady, hook } of plan.prepare) {
    if (await setLifecycleState(key, pod, state, deps, { markPodNotReady, hook })) {
      deps.events.event(set, 'Normal', 'LifecycleHook', `pod ${pod.metadata.name} waits in ${state} for its hook`);
    }
  }
  const delay = await updatePodsInPlace(step, plan);
  for (const { claim, ownerReferences } of plan.claimOwners) {
    await deps.client.setClaimOwners(claim, ownerReferences);
  }
  for (const name of plan.deleteClaims) await deps.client.deleteClaim(set.metadata?.namespace ?? '', name);
  if (plan.create.length + plan.delete.length + plan.inPlace.length + plan.prepare.length > 0) {
    ctx.log.info(
      {
        created: plan.create.map((c) => c.ordinal),
        deleted: plan.delete.map((p) => p.metadata.name),
        inPlace: plan.inPlace.map((u) => u.pod.metadata.name),
        prepared: plan.prepare.map((p) => `${p.pod.metadata.name}:${p.state}`),
      },
      'synced pods',
    );
  }
  return delay;
}

function templateOf(revision: ControllerRevision): StatefulSet['spec']['template'] | undefined {
  return (revision.data as { spec?: { template?: StatefulSet['spec']['template'] } } | undefined)?.spec?.template;
}

/** Replaces the pod with `change(copy)`, reading it again on a conflict. */
async function updatePod(
  key: string,
  pod: Pod,
  deps: StatefulSetReconcilerDeps,
  change: (copy: Pod) => void,
): Promise<void> {
  let current = pod;
  for (let attempt = 0; ; attempt++) {
    const copy = structuredClone(current);
    change(copy);
    try {
      deps.resourceVersions.expectUpdated(key, await deps.client.updatePod(copy));
      return;
    } catch (err) {
      if (!isKubeStatus(err, 409) || attempt >= 4) throw err;
      current = await deps.client.getPod(pod.metadata.namespace ?? '', pod.metadata.name);
    }
  }
}

/** InPlaceUpdateReady=False first (the pod leaves its Services), then the new revision in one update. */
async function updateInPlace(key: string, pod: Pod, spec: UpdateSpec, deps: StatefulSetReconcilerDeps): Promise<void> {
  const now = deps.clock.now();
  if (updateNeedsUnready(pod, spec)) {
    const conditions = inPlaceReadyConditions(pod, false, now);
    if (conditions.length > 0)
      deps.resourceVersions.expectUpdated(key, await deps.client.patchPodConditions(pod, conditions));
  }
  await updatePod(key, pod, deps, (copy) => {
    const labels = (copy.metadata.labels ??= {});
    const annotations = (copy.metadata.annotations ??= {});
    labels[LABEL_CONTROLLER_REVISION_HASH] = spec.revision;
    // A pod with a lifecycle state shows the update running (OpenKruise: only when one is set).
    if (labels[LABEL_LIFECYCLE_STATE]) {
      labels[LABEL_LIFECYCLE_STATE] = LifecycleState.Updating;
      annotations[ANNOTATION_LIFECYCLE_TIMESTAMP] = formatTime(now);
    }
    const state: InPlaceUpdateState = {
      revision: spec.revision,
      updateTimestamp: formatTime(now),
      lastContainerStatuses: null,
      updateImages: Object.keys(spec.containerImages).length > 0,
    };
    if ((spec.graceSeconds ?? 0) > 0) {
      annotations[ANNOTATION_INPLACE_UPDATE_STATE] = stateJson(state);
      annotations[ANNOTATION_INPLACE_UPDATE_GRACE] = graceJson(spec);
      return;
    }
    patchSpecToPod(copy, spec, state, now);
    removeGrace(copy);
  });
}

/** Pods in an in-place update: apply a pending spec once its grace is over, mark them ready when done. */
async function refreshPods(
  key: string,
  set: StatefulSet,
  pods: readonly Pod[],
  updateRevision: string,
  deps: StatefulSetReconcilerDeps,
): Promise<number | undefined> {
  const now = deps.clock.now();
  let delay: number | undefined;
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    const plan = planRefresh({ lifecycle: set.spec.lifecycle, pod, updateRevision, now });
    if (plan.delayMs !== undefined) delay = Math.min(delay ?? Infinity, plan.delayMs);
    if (plan.grace?.kind === 'drop') await updatePod(key, pod, deps, removeGrace);
    const pending = plan.grace?.kind === 'apply' ? plan.grace.spec : plan.nextBatch;
    if (pending) {
      await updatePod(key, pod, deps, (copy) => {
        const state = readState(copy) ?? {
          revision: pending.revision,
          updateTimestamp: formatTime(now),
          lastContainerStatuses: null,
        };
        patchSpecToPod(copy, pending, state, now);
        if (plan.grace?.kind === 'apply') removeGrace(copy);
      });
    }
    if (plan.lifecycle !== undefined) {
      const markPodNotReady = set.spec.lifecycle?.inPlaceUpdate?.markPodNotReady;
      await setLifecycleState(key, pod, plan.lifecycle, deps, { markPodNotReady });
    }
    if (plan.markReady) {
      const conditions = inPlaceReadyConditions(pod, true, now);
      if (conditions.length > 0)
        deps.resourceVersions.expectUpdated(key, await deps.client.patchPodConditions(pod, conditions));
    }
  }
  return delay;
}

/**
 * Moves the pod to a lifecycle state: the state label and its timestamp annotation, and with
 * `hook` the hook's labels and finalizers put back. With `markPodNotReady` the state's not-ready
 * key goes into (PreparingDelete, PreparingUpdate) or out of (Updated) KruisePodReady first,
 * even when the pod is already in that state (lifecycle.UpdatePodLifecycle). Resolves whether
 * the state changed.
 */
async function setLifecycleState(
  key: string,
  pod: Pod,
  state: string,
  deps: StatefulSetReconcilerDeps,
  opts: { markPodNotReady?: boolean; hook?: LifecycleHook } = {},
): Promise<boolean> {
  if (opts.markPodNotReady) {
    const conditions = notReadyConditions(pod, state, deps.clock.now());
    if (conditions.length > 0) {
      deps.resourceVersions.expectUpdated(key, await deps.client.patchPodConditions(pod, conditions));
    }
  }
  if ((pod.metadata.labels?.[LABEL_LIFECYCLE_STATE] ?? '') === state) return false;
  await updatePod(key, pod, deps, (copy) => {
    const labels = (copy.metadata.labels ??= {});
    Object.assign(labels, opts.hook?.labelsHandler ?? {});
    labels[LABEL_LIFECYCLE_STATE] = state;
    (copy.metadata.annotations ??= {})[ANNOTATION_LIFECYCLE_TIMESTAMP] = formatTime(deps.clock.now());
    const finalizers = opts.hook?.finalizersHandler ?? [];
    if (finalizers.length > 0)
      copy.metadata.finalizers = [...new Set([...(copy.metadata.finalizers ?? []), ...finalizers])];
  });
  return true;
}

/** Deletes unused revisions beyond revisionHistoryLimit, oldest first. */
async function truncateHistory(
  set: StatefulSet,
  pods: readonly Pod[],
  revisions: Revisions,
  deps: StatefulSetReconcilerDeps,
): Promise<void> {
  const stale = revisionsToTruncate({
    sorted: sortRevisions(revisions.all),
    pods,
    current: revisions.current.metadata.name,
    update: revisions.update.metadata.name,
    limit: set.spec.revisionHistoryLimit ?? 10,
  });
  for (const revision of stale) await deps.client.deleteRevision(revision);
}

async function writeStatus(
  key: string,
  cached: StatefulSet,
  status: StatefulSet['status'],
  deps: StatefulSetReconcilerDeps,
  ctx: ReconcileContext,
): Promise<void> {
  if (!status || sameJson(cached.status, status)) return;
  const updated = await deps.client.updateStatus(cached, status);
  deps.resourceVersions.expectUpdated(key, updated);
  ctx.log.debug({ status }, 'updated status');
}
