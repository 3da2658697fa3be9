/**
 * The Advanced DaemonSet controller's reconcile: orphan pods matching the selector adopted
 * (kube/adoption.ts; the pass ends there and goes on once the cache shows them owned), the update
 * revision found or stored, finished
 * in-place updates marked ready, then plan.ts carried out — pods deleted (or held in
 * PreparingDelete while a preDelete hook holds them), old pods updated in place where
 * InPlaceIfPossible allows it and replaced otherwise, pods created in slow-start batches (at most
 * burstReplicas a round) — old revisions pruned, and the status written when it changed.
 * Creations (by node), deletions (by pod) and the controller's own writes are expected until the
 * informers show them, so a lagging cache never starts a second pod on a node.
 */
import {
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  CONDITION_INPLACE_UPDATE_READY,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
  LifecycleState,
  KRUISE_V1BETA1_API_VERSION,
  defaultDaemonSet,
  scaledValue,
  type DaemonSet,
  type DaemonSetV1beta1,
} from '@flotilla/api';
import { errorMessage, isKubeStatus } from '../../errors.js';
import { podCondition } from '../../kube/pods.js';
import { adoptionPatch, orphansToAdopt } from '../../kube/adoption.js';
import type { NodeLike } from '../../kube/node-fit.js';
import type { ControllerRevision, Pod } from '../../kube/types.js';
import type { Lister } from '../../runtime/cache.js';
import type { Clock } from '../../runtime/clock.js';
import type { ReconcileContext, Reconciler } from '../../runtime/controller.js';
import type { EventRecording } from '../../runtime/events.js';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { formatTime } from '../../runtime/kube-time.js';
import { sameJson, type KubeObject } from '../../runtime/kube-object.js';
import {
  calculateInPlaceSpec,
  inPlaceUpdateIncomplete,
  patchSpecToPod,
  readState,
  type InPlaceUpdateState,
} from '../cloneset/inplace.js';
import { isPodHooked } from '../cloneset/lifecycle.js';
import { addNotReadyKey, inPlaceReadyConditions, PRE_DELETE_KEY } from '../cloneset/readiness.js';
import { decideUpdateRevision, revisionBytes, sortRevisions } from '../cloneset/revisions.js';
import type { DaemonSetClient } from './client.js';
import { newDaemonPod } from './daemon-pod.js';
import { planDaemonSet, type DaemonSetPlan } from './plan.js';
import { daemonSetRevisionData, historyToDelete, newDaemonSetRevision, revisionHash } from './revisions.js';

export interface DaemonSetControllerOptions {
  /** How soon to look again while the cache lags behind this controller's own writes. */
  expectationRequeueMs: number;
}

export interface DaemonSetReconcilerDeps {
  daemonSets: Lister<DaemonSetV1beta1>;
  /** Pods and revisions whose owner references name this uid. */
  podsOwnedBy: (uid: string) => Pod[];
  /** Pods of a namespace, to find orphans the set adopts. */
  podsIn: (namespace: string) => Pod[];
  revisionsOwnedBy: (uid: string) => ControllerRevision[];
  nodes: () => NodeLike[];
  client: DaemonSetClient;
  scale: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  events: EventRecording;
  clock: Clock;
  options: DaemonSetControllerOptions;
}

interface Round {
  key: string;
  ds: DaemonSetV1beta1;
  cached: DaemonSetV1beta1;
  deps: DaemonSetReconcilerDeps;
  ctx: ReconcileContext;
  now: number;
}

/** The set with the webhook's defaults (stored objects may lack them), still v1beta1. */
function defaulted(ds: DaemonSetV1beta1): DaemonSetV1beta1 {
  return defaultDaemonSet(ds as unknown as DaemonSet) as unknown as DaemonSetV1beta1;
}

const controlledBy =
  (uid: string) => (o: { metadata: { ownerReferences?: { controller?: boolean; uid: string }[] } }) =>
    o.metadata.ownerReferences?.some((r) => r.controller === true && r.uid === uid) ?? false;

/**
 * Records a write's result as expected in the cache, then checks the cache at once: its event may
 * have arrived before the write returned, and nothing later would clear the expectation then.
 */
function expectWritten(round: Round, written: KubeObject): void {
  const { deps, key } = round;
  deps.resourceVersions.expectUpdated(key, written);
  const uid = written.metadata?.uid;
  const owner = round.cached.metadata?.uid ?? '';
  const same = (o: KubeObject): boolean => o.metadata?.uid === uid;
  const cached =
    [deps.daemonSets.get(round.ctx.namespace, round.ctx.name)].find((o) => o !== undefined && same(o)) ??
    deps.revisionsOwnedBy(owner).find(same) ??
    deps.podsOwnedBy(owner).find(same);
  if (cached) deps.resourceVersions.observed(cached);
}

/** Builds the reconcile function of the Advanced DaemonSet controller. */
export function daemonSetReconciler(deps: DaemonSetReconcilerDeps): Reconciler {
  return async (key, ctx) => {
    const cached = deps.daemonSets.get(ctx.namespace, ctx.name);
    if (!cached) {
      deps.scale.delete(key);
      deps.resourceVersions.delete(key);
      return;
    }
    if (cached.metadata?.deletionTimestamp) return;
    deps.resourceVersions.observed(cached);
    if (!deps.scale.satisfied(key) || !deps.resourceVersions.isSatisfied(key)) {
      ctx.log.debug({ pending: deps.scale.pending(key) }, 'waiting for the cache to show own writes');
      return { requeueAfter: deps.options.expectationRequeueMs };
    }
    const round: Round = { key, ds: defaulted(cached), cached, deps, ctx, now: deps.clock.now() };
    if (await adoptOrphans(round)) return { requeueAfter: deps.options.expectationRequeueMs };
    const uid = cached.metadata?.uid ?? '';
    const pods = deps.podsOwnedBy(uid).filter(controlledBy(uid));
    const revisions = sortRevisions(deps.revisionsOwnedBy(uid).filter(controlledBy(uid)));
    const current = await storeUpdateRevision(round, revisions);
    if (!current) return { requeueAfter: deps.options.expectationRequeueMs };
    const hash = revisionHash(current);
    // The plan below reads the cache as it was; a pod just marked ready counts from the next round.
    await markInPlaceReady(round, pods);
    const plan = planDaemonSet({ ds: round.ds, nodes: deps.nodes(), pods, hash, nowMs: round.now });
    ctx.log.debug(
      {
        hash,
        create: plan.create,
        delete: plan.delete.map((p) => p.metadata.name),
        replace: plan.replace.map((p) => p.metadata.name),
      },
      'planned',
    );
    await carryOut(round, plan, current, revisions, hash);
    await pruneHistory(round, revisions, current, pods);
    await writeStatus(round, plan.status);
    return plan.requeueAfterMs === undefined ? undefined : { requeueAfter: plan.requeueAfterMs };
  };
}

/**
 * Makes the set the controller of the orphan pods it selects; resolves whether any was adopted.
 * A pod deleted or replaced meanwhile (404, or 409 from the uid precondition) is skipped.
 */
async function adoptOrphans(round: Round): Promise<boolean> {
  const { deps, ds, ctx } = round;
  const orphans = orphansToAdopt(ds, deps.podsIn(ds.metadata?.namespace ?? ''));
  const ref = {
    apiVersion: KRUISE_V1BETA1_API_VERSION,
    kind: 'DaemonSet',
    name: ctx.name,
    uid: ds.metadata?.uid ?? '',
  };
  let adopted = 0;
  for (const pod of orphans) {
    try {
      expectWritten(round, await deps.client.patchPodMetadata(pod, adoptionPatch(ref, pod)));
      adopted++;
    } catch (err) {
      if (!isKubeStatus(err, 404) && !isKubeStatus(err, 409)) throw err;
    }
  }
  if (adopted > 0) ctx.log.info({ pods: orphans.map((p) => p.metadata.name) }, 'adopted orphan pods');
  return adopted > 0;
}

/** The stored revision equal to the set's template: found, renumbered to be the latest, or created. */
async function storeUpdateRevision(
  round: Round,
  sorted: readonly ControllerRevision[],
): Promise<ControllerRevision | undefined> {
  const { deps, ds } = round;
  const data = daemonSetRevisionData(ds);
  const decision = decideUpdateRevision(sorted, data);
  if (decision.kind === 'reuse') return decision.revision;
  if (decision.kind === 'bump') {
    const updated = await deps.client.updateRevision({ ...decision.revision, revision: decision.to });
    expectWritten(round, updated);
    return updated;
  }
  const revision = newDaemonSetRevision(ds, data, sorted);
  try {
    const created = await deps.client.createRevision(revision);
    expectWritten(round, created);
    return created;
  } catch (err) {
    if (!isKubeStatus(err, 409)) throw err;
    const existing = await deps.client.getRevision(revision.metadata.namespace ?? '', revision.metadata.name);
    if (revisionBytes(existing) === data) return existing;
    // A different revision holds the name: count the collision so the next hash differs.
    const collisionCount = (ds.status?.collisionCount ?? 0) + 1;
    await writeStatus(round, { ...emptyStatus(), ...round.cached.status, collisionCount });
    return undefined;
  }
}

function emptyStatus(): NonNullable<DaemonSetV1beta1['status']> {
  return {
    currentNumberScheduled: 0,
    numberMisscheduled: 0,
    desiredNumberScheduled: 0,
    numberReady: 0,
    updatedNumberScheduled: 0,
  };
}

/**
 * InPlaceUpdateReady to True on gated pods without an in-place update running or whose update
 * has finished (inplaceupdate Refresh).
 */
async function markInPlaceReady(round: Round, pods: readonly Pod[]): Promise<void> {
  for (const pod of pods) {
    if (pod.metadata.deletionTimestamp) continue;
    if (readState(pod) && inPlaceUpdateIncomplete(pod) !== undefined) continue;
    // Status alone decides: a merge patch keeps the reason of the False it replaces.
    if (podCondition(pod, CONDITION_INPLACE_UPDATE_READY)?.status === 'True') continue;
    const conditions = inPlaceReadyConditions(pod, true, round.now);
    if (conditions.length === 0) continue;
    const written = await round.deps.client.patchPodConditions(pod, conditions);
    expectWritten(round, written);
  }
}

async function carryOut(
  round: Round,
  plan: DaemonSetPlan,
  current: ControllerRevision,
  revisions: readonly ControllerRevision[],
  hash: string,
): Promise<void> {
  const burst = Math.max(
    1,
    scaledValue(round.ds.spec.burstReplicas ?? 250, plan.status?.desiredNumberScheduled ?? 0, true) ?? 250,
  );
  const toDelete = [...plan.delete];
  const inPlace = round.ds.spec.updateStrategy?.rollingUpdate?.rollingUpdateType === 'InPlaceIfPossible';
  for (const pod of plan.replace.slice(0, burst)) {
    if (inPlace && (await updateInPlace(round, pod, current, revisions, hash))) continue;
    toDelete.push(pod);
  }
  await deletePods(round, toDelete.slice(0, burst));
  await createPods(round, plan.create.slice(0, burst), hash);
}

/** The in-place update of one pod, when its gate and the two revisions allow it. */
async function updateInPlace(
  round: Round,
  pod: Pod,
  current: ControllerRevision,
  revisions: readonly ControllerRevision[],
  hash: string,
): Promise<boolean> {
  const gated = (pod.spec.readinessGates ?? []).some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY);
  const podHash = pod.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH];
  const old = revisions.find((r) => revisionHash(r) === podHash);
  if (!gated || !old) return false;
  const spec = calculateInPlaceSpec(old.data, current.data, current.metadata.name);
  if (!spec) return false;
  const { deps } = round;
  try {
    const unready = inPlaceReadyConditions(pod, false, round.now);
    const base = unready.length > 0 ? await deps.client.patchPodConditions(pod, unready) : pod;
    const copy = structuredClone(base);
    const state: InPlaceUpdateState = {
      revision: current.metadata.name,
      updateTimestamp: formatTime(round.now),
      lastContainerStatuses: null,
      updateImages: Object.keys(spec.containerImages).length > 0,
    };
    patchSpecToPod(copy, spec, state, round.now);
    copy.metadata.labels = { ...copy.metadata.labels, [LABEL_CONTROLLER_REVISION_HASH]: hash };
    const written = await deps.client.updatePod(copy);
    expectWritten(round, written);
    deps.events.event(
      round.cached,
      'Normal',
      'SuccessfulUpdatePodInPlace',
      `successfully update pod ${pod.metadata.name} in-place`,
    );
    return true;
  } catch (err) {
    deps.events.event(
      round.cached,
      'Warning',
      'FailedUpdatePodInPlace',
      `failed to update pod ${pod.metadata.name} in-place(revision ${current.metadata.name}): ${errorMessage(err)}`,
    );
    throw err;
  }
}

/** Deletes the pods; a pod a preDelete hook holds goes to PreparingDelete instead and waits. */
async function deletePods(round: Round, pods: readonly Pod[]): Promise<void> {
  const { deps, key } = round;
  const hook = round.ds.spec.lifecycle?.preDelete;
  const now: Pod[] = [];
  for (const pod of pods) {
    if (!hook || !isPodHooked(hook, pod)) {
      now.push(pod);
      continue;
    }
    if (pod.metadata.labels?.[LABEL_LIFECYCLE_STATE] === LifecycleState.PreparingDelete) continue;
    if (hook.markPodNotReady) {
      const conditions = addNotReadyKey(pod, PRE_DELETE_KEY, round.now);
      if (conditions.length > 0) await deps.client.patchPodConditions(pod, conditions);
    }
    const written = await deps.client.patchPodMetadata(pod, {
      labels: { [LABEL_LIFECYCLE_STATE]: LifecycleState.PreparingDelete },
      annotations: { [ANNOTATION_LIFECYCLE_TIMESTAMP]: formatTime(round.now) },
    });
    expectWritten(round, written);
  }
  if (now.length === 0) return;
  const names = now.map((p) => p.metadata.name);
  deps.scale.expectDeletions(key, names);
  const results = await Promise.allSettled(now.map((p) => deps.client.deletePod(p)));
  const failed = names.filter((_, i) => results[i]!.status === 'rejected');
  if (failed.length > 0) deps.scale.lowerExpectations(key, { deletions: failed });
  for (const [i, r] of results.entries()) {
    if (r.status === 'fulfilled')
      deps.events.event(round.cached, 'Normal', 'SuccessfulDelete', `Deleted pod: ${names[i]}`);
    else deps.events.event(round.cached, 'Warning', 'FailedDelete', `Error deleting: ${errorMessage(r.reason)}`);
  }
  round.ctx.log.info({ pods: names, failed }, 'deleted pods');
}

/** Creates pods in batches of 1, 2, 4, … so one failure costs one request, not one per node. */
async function createPods(round: Round, nodes: readonly string[], hash: string): Promise<void> {
  const { deps, key } = round;
  let start = 0;
  for (let size = 1; start < nodes.length; size *= 2) {
    const batch = nodes.slice(start, start + size);
    deps.scale.expectCreations(key, batch);
    const results = await Promise.allSettled(
      batch.map((node) => deps.client.createPod(newDaemonPod(round.ds, node, hash) as Pod)),
    );
    start += batch.length;
    const failed = batch.filter((_, i) => results[i]!.status === 'rejected');
    for (const [i, r] of results.entries()) {
      if (r.status === 'rejected') {
        deps.events.event(round.cached, 'Warning', 'FailedCreate', `Error creating: ${errorMessage(r.reason)}`);
        round.ctx.log.warn({ node: batch[i], err: errorMessage(r.reason) }, 'creating a pod failed');
      }
    }
    if (failed.length > 0) {
      deps.scale.lowerExpectations(key, { creations: failed });
      return;
    }
  }
  if (nodes.length > 0) round.ctx.log.info({ nodes }, 'created pods');
}

async function pruneHistory(
  round: Round,
  sorted: readonly ControllerRevision[],
  current: ControllerRevision,
  pods: readonly Pod[],
): Promise<void> {
  const limit = round.ds.spec.revisionHistoryLimit ?? 10;
  for (const revision of historyToDelete(sorted, current, pods, limit)) {
    await round.deps.client.deleteRevision(revision);
  }
}

async function writeStatus(round: Round, status: DaemonSetV1beta1['status']): Promise<void> {
  if (sameJson(round.cached.status, status)) return;
  const updated = await round.deps.client.updateStatus({ ...round.cached, status });
  expectWritten(round, updated);
  round.ctx.log.debug({ status }, 'updated status');
}
