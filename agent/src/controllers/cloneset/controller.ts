/**
 * The CloneSet reconcile: it only orders the steps (OpenKruise doReconcile/syncCloneSet); the
 * decisions are the planners' and the writes the actors'.
 *
 * 1. read the CloneSet from the cache and default it; an invalid one gets a FailedScale
 *    condition and an event, and nothing else happens;
 * 2. wait while our own creations/deletions are not yet in the cache (scale expectations);
 * 3. gather owned pods and PVCs (cleaning PVCs up with disablePVCReuse, releasing pods the
 *    selector no longer matches) and make sure the update revision is stored;
 * 4. wait while our own pod/revision updates are not yet in the cache (resourceVersion expectations);
 * 5. scale; only if scaling wrote nothing, update (never with OnDelete);
 * 6. compute the status and write it if it changed, with FailedScale/FailedUpdate conditions for
 *    failures; prune podsToDelete; truncate the revision history;
 * 7. come back when a pod becomes available (minReadySeconds) or a grace period ends.
 */
import type { PubGuard } from '../podunavailablebudget/guard.js';
import { type CloneSetStatus, defaultCloneSet, validateCloneSetForController } from '@flotilla/api';
import { BY_OWNER_UID } from '../../runtime/cache.js';
import type { Clock } from '../../runtime/clock.js';
import type { ReconcileContext, ReconcileResult, Reconciler } from '../../runtime/controller.js';
import type { EventRecorder } from '../../runtime/events.js';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import type { Informer } from '../../runtime/informer.js';
import { labelSelectorMatcher } from '../../runtime/label-selector.js';
import type { KubeObject } from '../../runtime/kube-object.js';
import { cleanupClaims } from './claims.js';
import type { CloneSetClient } from './client.js';
import { AgentError, asError, errorMessage } from '../../errors.js';
import { prunePodsToDelete, releasePods, truncateHistory } from './housekeeping.js';
import type { InPlaceOptions } from './inplace.js';
import { servesResizeSubresource } from './inplace-resources.js';
import { isPodActive } from '../../kube/pods.js';
import { syncRevisions, type ActiveRevisions } from './revision-sync.js';
import { revisionTemplate, sortRevisions } from './revisions.js';
import { executeScale } from './scale.js';
import { planScale } from './scale-plan.js';
import { progressDeadlineIn } from './progressing.js';
import { calculateStatus, nextAvailableIn, statusChanged, type CloneSetConditionType } from './status.js';
import type { CloneSetControllerOptions, SyncContext } from './sync-context.js';
import type { ControllerRevision, PersistentVolumeClaim, Pod } from '../../kube/types.js';
import type { CloneSet } from './types.js';
import { refreshPods, updatePods } from './update.js';
import { selectPodsToUpdate, updateStepRuns } from './update-plan.js';

export interface CloneSetReconcilerDeps {
  cloneSets: Informer<CloneSet>;
  pods: Informer<Pod>;
  claims: Informer<PersistentVolumeClaim>;
  revisions: Informer<ControllerRevision>;
  /** For topologySpreadConstraints ranking on scale-in; optional. */
  nodes?: Informer<KubeObject>;
  client: CloneSetClient;
  scaleExpectations: ScaleExpectations;
  resourceVersions: ResourceVersionExpectations;
  events: EventRecorder;
  clock: Clock;
  options: CloneSetControllerOptions;
  random?: () => number;
  /** PodUnavailableBudgets pace in-place updates (PodUnavailableBudgetUpdateGate). */
  pubGuard?: PubGuard;
}

type Failures = Partial<Record<CloneSetConditionType, string>>;

/** What one sync achieved: failures for the status, the first error to retry on, when to come back. */
interface SyncOutcome {
  failures: Failures;
  error?: unknown;
  delayMs?: number;
}

function owned<T extends KubeObject>(informer: Informer<T>, cs: CloneSet): T[] {
  const uid = cs.metadata?.uid ?? '';
  return informer
    .byIndex(BY_OWNER_UID, uid)
    .filter((o) => o.metadata?.namespace === cs.metadata?.namespace)
    .filter((o) => o.metadata?.ownerReferences?.some((r) => r.uid === uid && r.controller === true));
}

function minDelay(...delays: (number | undefined)[]): number | undefined {
  const defined = delays.filter((d): d is number => d !== undefined && d > 0);
  return defined.length > 0 ? Math.min(...defined) : undefined;
}

/** Validation results by `uid/generation`: a spec is checked once, not on every pod event. */
class ValidationCache {
  readonly #results = new Map<string, { generation: string; problem: string | undefined }>();

  problem(cs: CloneSet): string | undefined {
    const uid = cs.metadata?.uid ?? '';
    const generation = String(cs.metadata?.generation ?? '');
    const known = this.#results.get(uid);
    if (known?.generation === generation) return known.problem;
    const { status: _status, ...document } = cs;
    const errors = validateCloneSetForController(document);
    const problem = errors.length === 0 ? undefined : errors.map((e) => `${e.path}: ${e.message}`).join('; ');
    this.#results.set(uid, { generation, problem });
    return problem;
  }

  forget(uid: string | undefined): void {
    if (uid) this.#results.delete(uid);
  }
}

/**
 * The in-place switches: the vertical scaling gate and, with it, whether the apiserver serves
 * pods/resize, asked once (`/version`, as OpenKruise at start) and again only after a failure.
 */
function inPlaceOptions(deps: CloneSetReconcilerDeps): () => Promise<InPlaceOptions> {
  let resize: Promise<boolean> | undefined;
  return async () => {
    if (!deps.options.inPlaceVerticalScaling) return {};
    resize ??= deps.client.serverVersion().then(servesResizeSubresource);
    try {
      return { verticalScaling: true, resizeSubresource: await resize };
    } catch (err) {
      resize = undefined;
      throw new AgentError('CLONESET_ERR_POD_UPDATE', 'failed to read the apiserver version for pod resizes', {
        cause: err,
      });
    }
  };
}

/** The OpenKruise CloneSet reconcile, for Controller({ reconcile }). */
export function cloneSetReconciler(deps: CloneSetReconcilerDeps): Reconciler {
  const validation = new ValidationCache();
  const inPlace = inPlaceOptions(deps);
  return async (key, rctx) => {
    const cached = deps.cloneSets.getByKey(key);
    if (!cached) {
      deps.scaleExpectations.delete(key);
      deps.resourceVersions.delete(key);
      return;
    }
    const ctx: SyncContext = {
      key,
      cs: defaultCloneSet(cached),
      client: deps.client,
      scaleExpectations: deps.scaleExpectations,
      resourceVersions: deps.resourceVersions,
      events: deps.events,
      log: rctx.log,
      now: deps.clock.now(),
      options: deps.options,
      inPlace: await inPlace(),
      ...(deps.pubGuard ? { pubGuard: deps.pubGuard } : {}),
    };
    const problem = validation.problem(cached);
    if (problem !== undefined) return reportInvalid(deps, ctx, problem);
    if (!deps.scaleExpectations.satisfied(key)) {
      rctx.log.debug(deps.scaleExpectations.pending(key), 'waiting for our own creations/deletions to show');
      return { requeueAfter: deps.options.expectationRecheckMs };
    }
    return reconcileValid(deps, ctx, rctx);
  };
}

async function reportInvalid(
  deps: CloneSetReconcilerDeps,
  ctx: SyncContext,
  problem: string,
): Promise<ReconcileResult> {
  const message = `invalid CloneSet, not scaling or updating it: ${problem}`;
  ctx.events.event(ctx.cs, 'Warning', 'FailedValidation', message);
  const pods = owned(deps.pods, ctx.cs).filter(isPodActive);
  await writeStatus(ctx, pods, {
    current: ctx.cs.status?.currentRevision ?? '',
    update: ctx.cs.status?.updateRevision ?? '',
    collisionCount: ctx.cs.status?.collisionCount ?? 0,
    failures: { FailedScale: message },
  });
}

async function reconcileValid(
  deps: CloneSetReconcilerDeps,
  ctx: SyncContext,
  rctx: ReconcileContext,
): Promise<ReconcileResult> {
  const all = owned(deps.pods, ctx.cs);
  let active = all.filter(isPodActive);
  const inactive = all.filter((p) => !isPodActive(p));
  let claims = owned(deps.claims, ctx.cs).filter((c) => !c.metadata.deletionTimestamp);
  if (ctx.cs.spec.scaleStrategy?.disablePVCReuse) claims = await cleanupClaims(ctx, active, inactive, claims);
  active = await releasePods(ctx, active);

  const matches = labelSelectorMatcher(ctx.cs.spec.selector);
  const sorted = sortRevisions(owned(deps.revisions, ctx.cs).filter((r) => matches(r.metadata.labels)));
  const revs = await syncRevisions(ctx, sorted);
  // A watch event can beat the response of our own write, so the cache may already be ahead of
  // an expectation recorded after it: check what the cache holds now, as OpenKruise does.
  for (const obj of [deps.cloneSets.getByKey(ctx.key), ...all, ...sorted]) if (obj) deps.resourceVersions.observed(obj);
  if (!deps.resourceVersions.isSatisfied(ctx.key)) {
    rctx.log.debug('waiting for our own pod/revision updates to show');
    return { requeueAfter: deps.options.expectationRecheckMs };
  }

  const outcome = ctx.cs.metadata?.deletionTimestamp
    ? { failures: {} }
    : await sync(deps, ctx, { active, inactive, claims, revs });
  const written = await writeStatus(ctx, active, {
    current: revs.current.metadata.name,
    update: revs.update.metadata.name,
    collisionCount: revs.collisionCount,
    failures: outcome.failures,
  });
  await housekeeping(ctx, rctx, { all, revs });
  if (outcome.error !== undefined) throw asError(outcome.error);
  const available = nextAvailableIn(active, ctx.cs.spec.minReadySeconds ?? 0, ctx.now);
  const deadline = progressDeadlineIn(ctx.cs, written?.conditions ?? ctx.cs.status?.conditions, ctx.now);
  const requeueAfter = minDelay(minDelay(outcome.delayMs, available), deadline);
  return requeueAfter === undefined ? undefined : { requeueAfter };
}

interface SyncInputs {
  active: Pod[];
  inactive: Pod[];
  claims: PersistentVolumeClaim[];
  revs: ActiveRevisions;
}

function template(revision: ControllerRevision): { name: string; template: CloneSet['spec']['template'] } {
  const t = revisionTemplate(revision);
  if (!t) throw new AgentError('CLONESET_ERR_REVISION', `revision ${revision.metadata.name} has no pod template`);
  return { name: revision.metadata.name, template: t };
}

/** Scale, then (if scaling wrote nothing) update; failures become conditions, not exceptions. */
async function sync(deps: CloneSetReconcilerDeps, ctx: SyncContext, input: SyncInputs): Promise<SyncOutcome> {
  const { revs } = input;
  const outcome: SyncOutcome = { failures: {} };
  const fail = (type: CloneSetConditionType, err: unknown): void => {
    outcome.failures[type] = errorMessage(err);
    outcome.error ??= err;
    ctx.events.event(ctx.cs, 'Warning', type, errorMessage(err));
  };
  try {
    const plan = planScale({
      cs: ctx.cs,
      pods: input.active,
      inactivePods: input.inactive,
      pvcs: input.claims,
      currentRevision: revs.current.metadata.name,
      updateRevision: revs.update.metadata.name,
      now: ctx.now,
      options: ctx.options.plan,
      nodeLabels: deps.nodes ? (name) => deps.nodes!.get(undefined, name)?.metadata?.labels : undefined,
      random: deps.random,
    });
    const revisions = { current: template(revs.current), update: template(revs.update) };
    const scaled = await executeScale(ctx, { plan, revisions, claims: input.claims });
    if (scaled.error) fail('FailedScale', scaled.error);
    // Scale and update never run in one reconcile; a scale step that failed before writing
    // anything still lets the update go ahead, as in OpenKruise.
    if (scaled.modified) return outcome;
  } catch (err) {
    fail('FailedScale', err);
  }
  if (!updateStepRuns(ctx.cs)) return outcome;
  try {
    const refreshed = await refreshPods(ctx, input.active, revs.update.metadata.name);
    outcome.delayMs = refreshed.delayMs;
    if (refreshed.modified) return outcome;
    const chosen = selectPodsToUpdate({
      cs: ctx.cs,
      pods: input.active,
      currentRevision: revs.current,
      updateRevision: revs.update,
      now: ctx.now,
      options: ctx.options.plan,
    });
    const delay = await updatePods(ctx, { ...chosen, revisions: revs.revisions, dataOf: (r) => revisionData(r) });
    outcome.delayMs = minDelay(outcome.delayMs, delay);
  } catch (err) {
    fail('FailedUpdate', err);
  }
  return outcome;
}

function revisionData(revision: ControllerRevision): unknown {
  return typeof revision.data === 'string' ? (JSON.parse(revision.data) as unknown) : revision.data;
}

async function writeStatus(
  ctx: SyncContext,
  pods: readonly Pod[],
  s: { current: string; update: string; collisionCount: number; failures: Failures },
): Promise<CloneSetStatus> {
  const status = calculateStatus({
    cs: ctx.cs,
    pods,
    currentRevision: s.current,
    updateRevision: s.update,
    collisionCount: s.collisionCount,
    failures: s.failures,
    now: ctx.now,
  });
  if (!statusChanged(ctx.cs.status, status)) return status;
  let cs = ctx.cs;
  for (let attempt = 0; ; attempt++) {
    try {
      ctx.resourceVersions.expectUpdated(ctx.key, await ctx.client.updateStatus(cs, status));
      return status;
    } catch (err) {
      const conflict = (err as { status?: number }).status === 409;
      if (!conflict || attempt >= 3) {
        throw new AgentError('CLONESET_ERR_STATUS', `failed to update status of ${ctx.key}`, { cause: err });
      }
      cs = await ctx.client.getCloneSet(cs.metadata?.namespace ?? '', cs.metadata?.name ?? '');
    }
  }
}

/** Pruning and history are best effort: a failure is logged and retried on the next reconcile. */
async function housekeeping(
  ctx: SyncContext,
  rctx: ReconcileContext,
  input: { all: readonly Pod[]; revs: ActiveRevisions },
): Promise<void> {
  try {
    await prunePodsToDelete(ctx, input.all);
    await truncateHistory(ctx, {
      sorted: input.revs.revisions,
      pods: input.all,
      current: input.revs.current.metadata.name,
      update: input.revs.update.metadata.name,
    });
  } catch (err) {
    rctx.log.warn({ err }, 'housekeeping failed');
  }
}
