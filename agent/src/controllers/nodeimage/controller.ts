/**
 * The NodeImage controller's reconcile: keeps one NodeImage per Node, named like it and labelled
 * like it, and keeps its spec and status tidy (planNodeImageSpec / planNodeImageStatus decide,
 * this file only reads and writes in order). Keyed by node name.
 */
import { KRUISE_API_VERSION, type ImagePullJob, type NodeImage, type ObjectReference } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import type { Clock } from '../../runtime/clock.js';
import type { Reconciler } from '../../runtime/controller.js';
import type { NodeImageScope } from '../../kube/nodeimage.js';
import type { NodeImageClient } from '../../kube/nodeimage-client.js';
import type { Lister } from '../../runtime/cache.js';
import { retryOnConflict } from '../../runtime/conflict.js';
import { referencedObject, type EventRecording } from '../../runtime/events.js';
import { nodeImageAction, planNodeImageSpec, planNodeImageStatus, type NodeLike, type StatusPlan } from './plan.js';

export interface NodeImageControllerOptions {
  /** How long a Node must have been Ready before it gets a NodeImage; OpenKruise: 30 s. */
  creationDelayMs: number;
  /** How long a tag may wait for the node daemon's first status; OpenKruise: 10 min. */
  responseTimeoutMs: number;
  /** Shortest requeue while waiting for a TTL or timeout, plus up to 2 s of jitter; OpenKruise: 3 s. */
  minRequeueMs: number;
  /** The Nodes and ImagePullJobs this instance sees; default everything. A Node leaving it counts as gone. */
  scope?: NodeImageScope;
}

export const DEFAULT_NODEIMAGE_OPTIONS: NodeImageControllerOptions = {
  creationDelayMs: 30_000,
  responseTimeoutMs: 10 * 60_000,
  minRequeueMs: 3000,
};

export interface NodeImageReconcilerDeps {
  nodes: Lister<NodeLike>;
  nodeImages: Lister<NodeImage>;
  jobs: Lister<ImagePullJob>;
  client: NodeImageClient;
  events: EventRecording;
  clock: Clock;
  options: NodeImageControllerOptions;
  random?: () => number;
}

export const REASON_PULL_IMAGE_FAILED = 'PullImageFailed';

/** Builds the reconcile function of the NodeImage controller. */
export function nodeImageReconciler(deps: NodeImageReconcilerDeps): Reconciler {
  const random = deps.random ?? Math.random;
  return async (key, ctx) => {
    const name = ctx.name;
    const node = deps.nodes.get(undefined, name);
    const cached = deps.nodeImages.get(undefined, name);
    const action = nodeImageAction(node, cached, deps.clock.now(), deps.options.creationDelayMs);
    switch (action.type) {
      case 'none':
        return;
      case 'wait':
        return { requeueAfter: action.afterMs };
      case 'delete':
        ctx.log.info('node is gone; deleting its NodeImage');
        await deps.client.delete(name, cached?.metadata?.uid);
        return;
      case 'create':
        await deps.client.create({
          apiVersion: KRUISE_API_VERSION,
          kind: 'NodeImage',
          metadata: { name, labels: action.labels },
          spec: {},
        });
        ctx.log.info('created NodeImage');
        return;
      case 'sync':
        break;
    }
    const specChanged = await syncSpec(deps, name, node, ctx.log);
    // A spec change comes back as a watch event; the status is judged against the new spec then.
    if (specChanged.changed) return;
    const statusWait = await syncStatus(deps, cached!, ctx.log);
    const wait = Math.min(specChanged.requeueAfterMs ?? Infinity, statusWait ?? Infinity);
    if (wait === Infinity) return;
    return { requeueAfter: Math.max(wait, deps.options.minRequeueMs + Math.floor(random() * 2000)) };
  };
}

type Log = Parameters<Reconciler>[1]['log'];

/** Read-modify-write of labels and spec on the live object (the cache may lag behind writers). */
async function syncSpec(
  deps: NodeImageReconcilerDeps,
  name: string,
  node: NodeLike | undefined,
  log: Log,
): Promise<{ changed: boolean; requeueAfterMs: number | undefined }> {
  const ownerAlive = (ref: ObjectReference): boolean => {
    const job = deps.jobs.get(ref.namespace, ref.name ?? '');
    return job !== undefined && job.metadata?.uid === ref.uid;
  };
  return retryOnConflict(async () => {
    const live = await deps.client.get(name);
    if (!live) return { changed: false, requeueAfterMs: undefined };
    const plan = planNodeImageSpec(live, node, ownerAlive, deps.clock.now());
    if (!plan.changed) return { changed: false, requeueAfterMs: plan.requeueAfterMs };
    await deps.client.update({
      ...live,
      metadata: { ...live.metadata, labels: plan.labels },
      spec: { ...live.spec, images: plan.images },
    });
    log.info({ changes: plan.messages }, 'updated NodeImage spec');
    return { changed: true, requeueAfterMs: undefined };
  });
}

/** Writes the status when tags timed out; a 409 (the daemon wrote meanwhile) retries via the queue. */
async function syncStatus(deps: NodeImageReconcilerDeps, cached: NodeImage, log: Log): Promise<number | undefined> {
  const plan = planNodeImageStatus(cached, deps.clock.now(), deps.options.responseTimeoutMs);
  if (plan.status) {
    try {
      await deps.client.updateStatus({ ...cached, status: plan.status });
    } catch (err) {
      // The daemon wrote meanwhile; its write comes back as a watch event and a fresh pass.
      if (isKubeStatus(err, 409)) return plan.requeueAfterMs;
      throw err;
    }
    log.info({ failed: plan.failed.map((f) => `${f.image}:${f.tag.tag}`) }, 'updated NodeImage status');
    emitFailures(deps.events, cached, plan.failed);
  }
  return plan.requeueAfterMs;
}

function emitFailures(events: EventRecording, nodeImage: NodeImage, failed: StatusPlan['failed']): void {
  const node = nodeImage.metadata?.name ?? '';
  for (const f of failed) {
    const message = `Failed to pull image ${f.image}:${f.tag.tag} on node ${node} for ${f.message}`;
    for (const owner of f.tag.ownerReferences ?? []) {
      events.event(referencedObject(owner), 'Warning', REASON_PULL_IMAGE_FAILED, message);
    }
    events.event(nodeImage, 'Warning', REASON_PULL_IMAGE_FAILED, message);
  }
}
