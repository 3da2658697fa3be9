/**
 * Carries out the scale plan (scale-plan.ts). Creations and deletions are recorded in the scale
 * expectations *before* each request and given up when the request fails, so a cache that lags
 * behind our own writes never makes the next reconcile create or delete a pod twice.
 *
 * Pods are created with a slow start, as OpenKruise's DoItSlowly does, so a broken template or an
 * exhausted quota costs a request or a few, not hundreds: the creations started never exceed
 * 1 + 2 × (creations succeeded so far), at most `maxConcurrentCreates` in flight, and nothing new
 * starts after the first failure (requests in flight finish; the first failure is returned).
 * When requests complete together this is exactly DoItSlowly's batches of 1, 2, 4, ..., with the
 * same bound on wasted requests, but without its barrier: DoItSlowly waits for the slowest
 * request of a batch before starting the next, and each success here opens room for two more at
 * once (test/bench/cloneset). Each pod's PVCs are created before the pod.
 */
import { LifecycleState } from '@flotilla/api';
import { AgentError, asError, errorMessage, isKubeStatus } from '../../errors.js';
import { newClaims, newPod, podName } from './new-pods.js';
import { setLifecycleState } from './pod-writes.js';
import { instanceId } from './pods.js';
import type { PodToCreate, PodToRemove, ScalePlan } from './scale-plan.js';
import type { SyncContext } from './sync-context.js';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.js';
import type { Template } from './types.js';

/** The revision each new pod is created from. */
export interface ScaleRevisions {
  current: { name: string; template: Template };
  update: { name: string; template: Template };
}

async function createClaims(
  ctx: SyncContext,
  claims: PersistentVolumeClaim[],
  existing: ReadonlySet<string>,
): Promise<void> {
  for (const claim of claims) {
    if (existing.has(claim.metadata.name)) continue;
    ctx.scaleExpectations.expectCreations(ctx.key, [claim.metadata.name]);
    try {
      await ctx.client.createClaim(claim);
    } catch (err) {
      ctx.scaleExpectations.lowerExpectations(ctx.key, { creations: [claim.metadata.name] });
      // Left over from an earlier attempt: the claim is there, which is all the pod needs.
      if (isKubeStatus(err, 409)) continue;
      ctx.events.event(
        ctx.cs,
        'Warning',
        'FailedCreate',
        `failed to create pvc ${claim.metadata.name}: ${errorMessage(err)}`,
      );
      throw new AgentError('CLONESET_ERR_CREATE', `failed to create pvc ${claim.metadata.name}`, { cause: err });
    }
  }
}

async function createOne(ctx: SyncContext, pod: Pod, existingClaims: ReadonlySet<string>): Promise<void> {
  await createClaims(ctx, newClaims(ctx.cs, instanceId(pod)), existingClaims);
  try {
    await ctx.client.createPod(pod);
  } catch (err) {
    ctx.events.event(
      ctx.cs,
      'Warning',
      'FailedCreate',
      `failed to create pod ${pod.metadata.name}: ${errorMessage(err)}`,
    );
    throw new AgentError('CLONESET_ERR_CREATE', `failed to create pod ${pod.metadata.name}: ${errorMessage(err)}`, {
      cause: err,
    });
  }
  ctx.events.event(ctx.cs, 'Normal', 'SuccessfulCreate', `succeed to create pod ${pod.metadata.name}`);
}

/** What the scale step wrote before it finished or failed. */
interface Progress {
  modified: boolean;
}

/**
 * Creates the pods with an ack-clocked slow start (see the top of the file), noting any creation
 * in `progress`. Throws the first failure once every request in flight has finished.
 */
async function createPods(
  ctx: SyncContext,
  toCreate: readonly PodToCreate[],
  revisions: ScaleRevisions,
  existingClaims: ReadonlySet<string>,
  progress: Progress,
): Promise<void> {
  const names = toCreate.map((c) => podName(ctx.cs, c.id));
  ctx.scaleExpectations.expectCreations(ctx.key, names);
  // Each pod is built when its creation starts: building a thousand up front held the first
  // request back by tens of milliseconds (and their garbage), right when the slow start is slowest.
  const build = (c: PodToCreate): Pod => {
    const rev = c.revision === 'current' ? revisions.current : revisions.update;
    return newPod({ cs: ctx.cs, template: rev.template, revision: rev.name, id: c.id, now: ctx.now });
  };
  const limit = Math.max(1, ctx.options.maxConcurrentCreates);
  let started = 0;
  let succeeded = 0;
  let inFlight = 0;
  let failure: { err: unknown } | undefined;
  await new Promise<void>((resolve) => {
    const pump = (): void => {
      while (failure === undefined && started < toCreate.length && inFlight < limit && started < 1 + 2 * succeeded) {
        const i = started++;
        let pod: Pod;
        try {
          pod = build(toCreate[i]!);
        } catch (err) {
          failure ??= { err };
          ctx.scaleExpectations.lowerExpectations(ctx.key, { creations: [names[i]!] });
          break;
        }
        inFlight++;
        createOne(ctx, pod, existingClaims).then(
          () => {
            succeeded++;
            progress.modified = true;
            settled();
          },
          (err: unknown) => {
            failure ??= { err };
            ctx.scaleExpectations.lowerExpectations(ctx.key, { creations: [pod.metadata.name] });
            settled();
          },
        );
      }
      if (inFlight === 0) resolve();
    };
    const settled = (): void => {
      inFlight--;
      pump();
    };
    pump();
  });
  // Pods never started will never be observed either.
  ctx.scaleExpectations.lowerExpectations(ctx.key, { creations: names.slice(started) });
  if (failure !== undefined) throw asError(failure.err);
}

async function deletePodAndClaims(ctx: SyncContext, pod: Pod, claims: readonly PersistentVolumeClaim[]): Promise<void> {
  ctx.scaleExpectations.expectDeletions(ctx.key, [pod.metadata.name]);
  try {
    if (!(await ctx.client.deletePod(pod)))
      ctx.scaleExpectations.lowerExpectations(ctx.key, { deletions: [pod.metadata.name] });
  } catch (err) {
    ctx.scaleExpectations.lowerExpectations(ctx.key, { deletions: [pod.metadata.name] });
    ctx.events.event(
      ctx.cs,
      'Warning',
      'FailedDelete',
      `failed to delete pod ${pod.metadata.name}: ${errorMessage(err)}`,
    );
    throw new AgentError('CLONESET_ERR_DELETE', `failed to delete pod ${pod.metadata.name}`, { cause: err });
  }
  ctx.events.event(ctx.cs, 'Normal', 'SuccessfulDelete', `succeed to delete pod ${pod.metadata.name}`);
  // The pod's volumes go with it; a pod that vanished some other way leaves them for reuse.
  for (const claim of claims.filter((c) => instanceId(c) === instanceId(pod) && instanceId(pod) !== '')) {
    ctx.scaleExpectations.expectDeletions(ctx.key, [claim.metadata.name]);
    try {
      if (!(await ctx.client.deleteClaim(claim))) {
        ctx.scaleExpectations.lowerExpectations(ctx.key, { deletions: [claim.metadata.name] });
      }
    } catch (err) {
      ctx.scaleExpectations.lowerExpectations(ctx.key, { deletions: [claim.metadata.name] });
      ctx.events.event(
        ctx.cs,
        'Warning',
        'FailedDelete',
        `failed to delete pvc ${claim.metadata.name}: ${errorMessage(err)}`,
      );
      throw new AgentError('CLONESET_ERR_DELETE', `failed to delete pvc ${claim.metadata.name}`, { cause: err });
    }
  }
}

async function removePods(
  ctx: SyncContext,
  pods: readonly PodToRemove[],
  claims: readonly PersistentVolumeClaim[],
  progress: Progress,
): Promise<void> {
  const hook = ctx.cs.spec.lifecycle?.preDelete;
  for (const { pod, how } of pods) {
    if (how === 'preparingDelete') {
      const markPodNotReady = hook?.markPodNotReady;
      if (await setLifecycleState(ctx, pod, LifecycleState.PreparingDelete, { markPodNotReady }))
        progress.modified = true;
      continue;
    }
    await deletePodAndClaims(ctx, pod, claims);
    progress.modified = true;
  }
}

export interface ScaleInputs {
  plan: ScalePlan;
  revisions: ScaleRevisions;
  claims: readonly PersistentVolumeClaim[];
}

/**
 * What the scale step did: whether it wrote anything (then the update step waits for the next
 * reconcile, as in OpenKruise) and the failure that stopped it, if any.
 */
export interface ScaleOutcome {
  modified: boolean;
  error?: Error;
}

/** Carries out the plan. Never throws: a failure is returned with what was written before it. */
export async function executeScale(ctx: SyncContext, inputs: ScaleInputs): Promise<ScaleOutcome> {
  const progress: Progress = { modified: false };
  try {
    await run(ctx, inputs, progress);
    return { modified: progress.modified };
  } catch (err) {
    return { modified: progress.modified, error: asError(err) };
  }
}

async function run(ctx: SyncContext, { plan, revisions, claims }: ScaleInputs, progress: Progress): Promise<void> {
  if (plan.scaleUpLimited !== undefined) {
    ctx.events.event(
      ctx.cs,
      'Warning',
      'ScaleUpLimited',
      `scaleUp is limited because of scaleStrategy.maxUnavailable, limit: ${plan.scaleUpLimited}`,
    );
  }
  const action = plan.action;
  switch (action.kind) {
    case 'none':
      return;
    case 'cancelDelete':
      for (const pod of action.pods) {
        if (await setLifecycleState(ctx, pod, LifecycleState.PreparingNormal)) progress.modified = true;
      }
      return;
    case 'create':
      return createPods(ctx, action.pods, revisions, new Set(claims.map((c) => c.metadata.name)), progress);
    case 'remove':
      return removePods(ctx, action.pods, claims, progress);
  }
}
