/**
 * The ImagePullJob controller's reconcile, in OpenKruise's order: finalize finished or deleted
 * jobs (release pull secret copies, drop the finalizer, delete after ttlSecondsAfterFinished),
 * otherwise copy the pull secrets, compute the status from the target NodeImages, hand the image
 * to the next nodes the parallelism window allows, and write the status if it changed. The
 * decisions are in targets.ts, status.ts, sync-plan.ts and secrets-plan.ts.
 */
import { defaultImagePullJob, FINALIZER_DELETION_PROTECTION, type ImagePullJob } from '@flotilla/api';
import type { Clock } from '../../runtime/clock.js';
import type { ReconcileContext, Reconciler, ReconcileResult } from '../../runtime/controller.js';
import type { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { formatTime, parseTime } from '../../runtime/kube-time.js';
import type { JobClient, SecretClient } from './client.js';
import { syncJobSecrets, type SecretLister } from './secret-sync.js';
import { calculateStatus } from './status.js';
import {
  addJobToNodeImage,
  nodesToSync,
  parallelismOf,
  tagPullPolicy,
  type TagRequest,
  type TtlMargin,
} from './sync-plan.js';
import { targetNodeImages, type TargetSources } from './targets.js';
import { retryOnConflict } from '../../runtime/conflict.js';
import type { NodeImageClient } from '../../kube/nodeimage-client.js';
import { type NodeImageScope, toNodeImageRef } from '../../kube/nodeimage.js';
import type { EventRecording } from '../../runtime/events.js';
import type { Lister } from '../../runtime/cache.js';
import { sameJson } from '../../runtime/kube-object.js';

export interface ImagePullJobControllerOptions {
  /** Namespace the node daemon reads pull secrets from; OpenKruise: kruise-daemon-config. */
  daemonConfigNamespace: string;
  /** Margin added to the TTL written into NodeImage tags. */
  ttlMargin: TtlMargin;
  /** How soon to look again while the cache lags behind this controller's own writes. */
  expectationRequeueMs: number;
  /** Restricts the NodeImages and jobs this instance sees (sharding, tests); default everything. */
  scope?: NodeImageScope;
  /**
   * Namespaces whose pull secrets the controller may read (it watches Secrets only there and in
   * the daemon config namespace); undefined reads them in every namespace, as OpenKruise does.
   * Least-privilege installs list the namespaces that use pullSecrets, so the agent needs no
   * cluster-wide read access to Secrets; a job elsewhere reports PullSecretNotFound.
   */
  pullSecretNamespaces?: readonly string[];
}

export interface ImagePullJobReconcilerDeps {
  jobs: Lister<ImagePullJob>;
  secrets: SecretLister;
  targets: TargetSources;
  nodeImages: NodeImageClient;
  jobClient: JobClient;
  secretClient: SecretClient;
  /** Jobs and NodeImages this controller wrote, until the informers show those versions. */
  resourceVersions: ResourceVersionExpectations;
  /** Pull secret copies this controller created, until the secrets informer shows them. */
  secretCreations: ScaleExpectations;
  events: EventRecording;
  clock: Clock;
  random: () => number;
  options: ImagePullJobControllerOptions;
}

/** Builds the reconcile function of the ImagePullJob controller. */
export function imagePullJobReconciler(deps: ImagePullJobReconcilerDeps): Reconciler {
  return async (key, ctx) => {
    const cached = deps.jobs.get(ctx.namespace, ctx.name);
    if (!cached) {
      deps.resourceVersions.delete(key);
      deps.secretCreations.delete(key);
      return;
    }
    // The watch event of a write may arrive before the write's answer recorded the expectation;
    // what the cache holds now counts as observed (OpenKruise calls Observe before IsSatisfied).
    deps.resourceVersions.observed(cached);
    for (const ni of deps.targets.nodeImages()) deps.resourceVersions.observed(ni);
    if (!deps.resourceVersions.isSatisfied(key) || !deps.secretCreations.satisfied(key)) {
      return { requeueAfter: deps.options.expectationRequeueMs };
    }
    // Jobs may be stored without the webhook's defaults; the controller reads them defaulted.
    const job = defaultImagePullJob(cached, { addProtectionFinalizer: false });
    if (job.metadata?.deletionTimestamp) return finalize(cached, job, deps, ctx);
    if (job.status?.completionTime) {
      await finalize(cached, job, deps, ctx);
      return afterCompletion(cached, job, deps, ctx);
    }
    const live = await ensureFinalizer(cached, deps);
    return syncRunning(live, { ...job, metadata: live.metadata }, deps, ctx);
  };
}

async function syncRunning(
  cached: ImagePullJob,
  job: ImagePullJob,
  deps: ImagePullJobReconcilerDeps,
  ctx: ReconcileContext,
): Promise<ReconcileResult> {
  const now = deps.clock.now();
  const image = toNodeImageRef(job.spec.image);
  if (!image.ok) {
    // The webhook rejects such jobs; one stored without it gets told why nothing happens.
    return writeStatus(cached, { desired: 0, message: `invalid image ${job.spec.image}: ${image.reason}` }, deps, ctx);
  }
  const secrets = await syncJobSecrets(job, true, secretDeps(deps, ctx));
  const targets = targetNodeImages(job, deps.targets);
  const { status, notSynced } = calculateStatus(job, image, targets, secrets, now);
  const toSync = nodesToSync(notSynced, parallelismOf(job, status.desired), status.active ?? 0);
  await syncNodeImages({ job, image, secrets }, toSync, deps, ctx);
  const result = await writeStatus(cached, status, deps, ctx);
  const deadline = job.spec.completionPolicy?.activeDeadlineSeconds;
  if (job.spec.completionPolicy?.type !== 'Never' && deadline !== undefined && !status.completionTime) {
    const left = parseTime(status.startTime)! + deadline * 1000 - now;
    return { requeueAfter: Math.max(left, 1000) };
  }
  return result;
}

/** Adds the job's tag to each NodeImage in `names`, reading each afresh (the daemon writes too). */
async function syncNodeImages(
  pull: Pick<TagRequest, 'job' | 'image' | 'secrets'>,
  names: readonly string[],
  deps: ImagePullJobReconcilerDeps,
  ctx: ReconcileContext,
): Promise<void> {
  if (names.length === 0) return;
  const pullPolicy = tagPullPolicy(pull.job, deps.options.ttlMargin, deps.random);
  const key = jobKey(pull.job);
  for (const name of names) {
    await retryOnConflict(async () => {
      const live = await deps.nodeImages.get(name);
      if (!live) return;
      const next = addJobToNodeImage(live, { ...pull, pullPolicy, now: formatTime(deps.clock.now()) });
      if (!next) return;
      deps.resourceVersions.expectUpdated(key, await deps.nodeImages.update(next));
    });
  }
  ctx.log.info({ nodes: names, image: `${pull.image.name}:${pull.image.tag}` }, 'handed the image to nodes');
}

async function writeStatus(
  cached: ImagePullJob,
  status: ImagePullJob['status'],
  deps: ImagePullJobReconcilerDeps,
  ctx: ReconcileContext,
): Promise<ReconcileResult> {
  if (sameJson(cached.status, status)) return;
  const updated = await deps.jobClient.updateStatus({ ...cached, status });
  deps.resourceVersions.expectUpdated(jobKey(cached), updated);
  ctx.log.debug({ status }, 'updated status');
}

/** OpenKruise adds the protection finalizer itself too, so secret copies are released on deletion. */
async function ensureFinalizer(cached: ImagePullJob, deps: ImagePullJobReconcilerDeps): Promise<ImagePullJob> {
  const finalizers = cached.metadata?.finalizers ?? [];
  if (finalizers.includes(FINALIZER_DELETION_PROTECTION)) return cached;
  const updated = await deps.jobClient.setFinalizers(cached, [...finalizers, FINALIZER_DELETION_PROTECTION]);
  deps.resourceVersions.expectUpdated(jobKey(cached), updated);
  return updated;
}

function jobKey(job: ImagePullJob): string {
  return `${job.metadata?.namespace}/${job.metadata?.name}`;
}

/** Releases the pull secret copies and removes the finalizer, once. */
async function finalize(
  cached: ImagePullJob,
  job: ImagePullJob,
  deps: ImagePullJobReconcilerDeps,
  ctx: ReconcileContext,
): Promise<void> {
  const finalizers = cached.metadata?.finalizers ?? [];
  if (!finalizers.includes(FINALIZER_DELETION_PROTECTION)) return;
  await syncJobSecrets(job, false, secretDeps(deps, ctx));
  const rest = finalizers.filter((f) => f !== FINALIZER_DELETION_PROTECTION);
  deps.resourceVersions.expectUpdated(jobKey(cached), await deps.jobClient.setFinalizers(cached, rest));
  ctx.log.info('released pull secrets and removed the protection finalizer');
}

/** A finished job is deleted ttlSecondsAfterFinished after its completion. */
async function afterCompletion(
  cached: ImagePullJob,
  job: ImagePullJob,
  deps: ImagePullJobReconcilerDeps,
  ctx: ReconcileContext,
): Promise<ReconcileResult> {
  const ttl = job.spec.completionPolicy?.ttlSecondsAfterFinished;
  if (ttl === undefined) return;
  const left = parseTime(job.status?.completionTime)! + ttl * 1000 - deps.clock.now();
  if (left > 0) return { requeueAfter: left };
  ctx.log.info({ ttlSecondsAfterFinished: ttl }, 'deleting finished job after its TTL');
  await deps.jobClient.delete(cached);
}

function secretDeps(deps: ImagePullJobReconcilerDeps, ctx: ReconcileContext): Parameters<typeof syncJobSecrets>[2] {
  return {
    secrets: deps.secrets,
    client: deps.secretClient,
    expectations: deps.secretCreations,
    events: deps.events,
    namespace: deps.options.daemonConfigNamespace,
    log: ctx.log,
  };
}
