// The ceiling of bench:kruise: how fast the apiserver and kwok of a harness cluster on this
// machine go through the bench's phases when no controller stands between them and the writes.
// No controller runs. The bench makes the writes the CloneSet controller makes, built by the
// controller's own code (newPod, the in-place update's patch and readiness conditions), for every
// pod at once (at most CEILING_WRITES_IN_FLIGHT requests in flight over kept-alive HTTP/1.1
// connections, opened before each phase), and waits for the end state the other subjects' CloneSet
// status reports. It has no status: a pod informer of the bench counts the pods as the controller
// counts its status (isPodUpdateReady, hasRevision), read every 250 ms as their status is polled.
//
// The writes per pod:
// - scale-up: the create, then InPlaceUpdateReady True in its status (kwok readies a pod only once
//   its readiness gates are True, and the controller's pods carry that gate);
// - in-place update: InPlaceUpdateReady False with Ready False (the pod leaves the endpoints
//   first), the image patch with the revision labels and the in-place state annotation, and, once
//   kwok reports the new image running, InPlaceUpdateReady True (then kwok sets Ready);
// - scale-down: the delete (with the pod's uid as precondition).
// Not made, since no measured end state waits for them: the lifecycle-state patches (PreparingNormal
// → Normal, Updating → Normal), the ControllerRevisions, the CloneSet's status and events. The
// CloneSet itself is created and patched as for the other subjects, and owns the pods.
import { pino } from 'pino';
import { ANNOTATION_INPLACE_UPDATE_STATE, type CloneSet } from '@flotilla/api';
import { inPlaceUpdateIncomplete, patchSpecToPod, readState } from '../../../agent/src/controllers/cloneset/inplace.js';
import { newPod, revisionLabels } from '../../../agent/src/controllers/cloneset/new-pods.js';
import { hasRevision, isPodUpdateReady } from '../../../agent/src/controllers/cloneset/pods.js';
import { inPlaceReadyConditions } from '../../../agent/src/controllers/cloneset/readiness.js';
import type { Pod, PodCondition } from '../../../agent/src/kube/types.js';
import { Informer } from '../../../agent/src/runtime/informer.js';
import { kubeListWatcher } from '../../../agent/src/runtime/kube-list-watch.js';
import { formatTime } from '../../../agent/src/runtime/kube-time.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { createKubeRest, PatchType, type KubeRestClient } from '../../../agent/src/runtime/rest.js';
import { cloneSet, namespace, patchCloneSet, until } from '../cloneset/measure.js';
import { round, timeCreation, type PhaseCpu, type RunContext } from './side-by-side.js';
import { CEILING_WRITES_IN_FLIGHT } from './subjects.js';
import type { CeilingMeasures } from './summary.js';

/** The revisions the ceiling's pods are labelled with: names only, no ControllerRevision behind them. */
const REVISION = { v1: 'web-5d8c7f9b64', v2: 'web-7b6f4d9c85' } as const;
const IMAGE_V2 = 'registry.local/app:v2';

export interface CeilingPhases extends Omit<CeilingMeasures, 'subject' | 'round'> {
  subject: 'ceiling';
  pods: number;
  /**
   * Besides the measured times, `writesSeconds`: until the last of the bench's own writes of the
   * phase was answered (in the in-place update, those before kwok's part: the gate False and the
   * image patch). Far below the measured time, the phase waited on kwok, not on the apiserver.
   */
  scaleUp: { createdSeconds: number; readySeconds: number; writesSeconds: number };
  /** Also until kwok reported the new image running in every pod. */
  inPlaceUpdate: { seconds: number; imagesRunningSeconds: number; writesSeconds: number };
  scaleDown: { seconds: number; writesSeconds: number };
  /** Requests the bench sent in each phase (the CloneSet's create or patch included). */
  writes: { scaleUp: number; inPlaceUpdate: number; scaleDown: number };
  /** `controller` is the bench process: its writes and its instrument. */
  cpuMs: { scaleUp: PhaseCpu; inPlaceUpdate: PhaseCpu; scaleDown: PhaseCpu };
}

/** Runs `fn`s with at most `max` of them in flight; the others wait their turn in order. */
export function inFlight(max: number): <T>(fn: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (fn) => {
    if (running < max) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await fn();
    } finally {
      // A waiting call takes the slot over; only when none waits is it freed.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** The bench's writes: counted, at most CEILING_WRITES_IN_FLIGHT at once, over their own connections. */
class Writer {
  readonly #rest: KubeRestClient;
  readonly #slot = inFlight(CEILING_WRITES_IN_FLIGHT);
  #sent = 0;
  #failure: unknown;

  constructor(ctx: RunContext) {
    this.#rest = createKubeRest(ctx.cluster.kubeConfig(), {
      http2: false,
      maxSockets: CEILING_WRITES_IN_FLIGHT,
      maxFreeSockets: CEILING_WRITES_IN_FLIGHT,
      // Kept from one phase to the next (settle() takes up to half a minute), below the
      // apiserver's 90 s idle timeout.
      idleTimeoutMs: 80_000,
    });
  }

  /** Requests sent so far. */
  get sent(): number {
    return this.#sent;
  }

  /** Throws the first failed write, if any. */
  failed(): void {
    if (this.#failure !== undefined) throw new Error('a write of the ceiling failed', { cause: this.#failure });
  }

  /** Opens every connection before a phase, as a controller's are open before it acts. */
  async warm(ns: string): Promise<void> {
    await Promise.all(
      Array.from({ length: CEILING_WRITES_IN_FLIGHT }, () =>
        this.#rest.request({ method: 'GET', path: `/api/v1/namespaces/${ns}`, discardBody: true }),
      ),
    );
  }

  /** Runs one pod's writes, in order, in one slot; a failure is kept for failed() and rethrown. */
  pod(steps: (send: (req: Parameters<KubeRestClient['request']>[0]) => Promise<void>) => Promise<void>): Promise<void> {
    const send = async (req: Parameters<KubeRestClient['request']>[0]): Promise<void> => {
      this.#sent++;
      await this.#rest.request({ ...req, discardBody: true });
    };
    return this.#slot(() => steps(send)).catch((err: unknown) => {
      this.#failure ??= err;
      throw err;
    });
  }

  close(): void {
    this.#rest.close();
  }
}

const statusPatch = (pod: Pod, conditions: PodCondition[]) => ({
  method: 'PATCH' as const,
  path: resourcePath(Resources.pods, pod.metadata.namespace, pod.metadata.name, 'status'),
  contentType: PatchType.strategic,
  body: { status: { conditions } },
});

/**
 * The in-place update's pod patch, as the controller's update writes it: the image, the new
 * revision's labels and the state annotation recording the image IDs it replaces (patchSpecToPod
 * on a copy of the pod, sent as a strategic merge patch of what changed).
 */
function imagePatch(pod: Pod, now: number) {
  const copy = structuredClone(pod);
  const spec = { revision: REVISION.v2, containerImages: { main: IMAGE_V2 } };
  const state = {
    revision: REVISION.v2,
    updateTimestamp: formatTime(now),
    lastContainerStatuses: null,
    updateImages: true,
  };
  patchSpecToPod(copy, spec, state, now);
  return {
    method: 'PATCH' as const,
    path: resourcePath(Resources.pods, pod.metadata.namespace, pod.metadata.name),
    contentType: PatchType.strategic,
    body: {
      metadata: {
        labels: revisionLabels(REVISION.v2),
        annotations: {
          [ANNOTATION_INPLACE_UPDATE_STATE]: copy.metadata.annotations?.[ANNOTATION_INPLACE_UPDATE_STATE],
        },
      },
      spec: { containers: [{ name: 'main', image: IMAGE_V2 }] },
    },
  };
}

/**
 * Seconds from `t0` until every write settled. Settled, not all-or-nothing: a failure is kept by
 * the Writer and ends the phase's wait through failed(), and nothing is left unhandled meanwhile.
 */
async function secondsUntil(t0: number, writes: Promise<void>[]): Promise<number> {
  await Promise.allSettled(writes);
  return round((performance.now() - t0) / 1000);
}

/** The pod's new image runs, as the controller tells before marking it ready again. */
const imageRunning = (pod: Pod): boolean =>
  readState(pod)?.revision === REVISION.v2 && inPlaceUpdateIncomplete(pod) === undefined;

/** The ceiling's phases on a cluster where no controller runs; see the top of this file. */
export async function ceilingPhases(ctx: RunContext, pods: number, log: (msg: string) => void): Promise<CeilingPhases> {
  const { cluster, rest, measure } = ctx;
  const ns = await namespace(rest, 'bench');
  const writer = new Writer(ctx);
  const informer = new Informer<Pod>({
    name: 'pods',
    listWatch: kubeListWatcher(cluster.kubeConfig(), rest, Resources.pods, { namespace: ns }),
    logger: pino({ level: 'silent' }),
  });
  // Once kwok runs a pod's new image, its gate goes True: at once, from the watch event.
  let updating = false;
  const readied = new Set<string>();
  informer.addEventHandler({
    onUpdate: (_, pod) => {
      if (!updating || readied.has(pod.metadata.name) || !imageRunning(pod)) return;
      readied.add(pod.metadata.name);
      void writer.pod((send) => send(statusPatch(pod, inPlaceReadyConditions(pod, true, Date.now())))).catch(() => {});
    },
  });
  informer.start();
  try {
    await informer.waitForSync();
    const count = (check: (pod: Pod, now: number) => boolean): number => {
      const now = Date.now();
      return informer.list(ns).filter((pod) => check(pod, now)).length;
    };
    /** Polls the informer every 250 ms, as the others' status is polled, until `done`. */
    const untilPods = (what: string, done: () => boolean): Promise<void> =>
      until(
        what,
        () => {
          writer.failed();
          return done();
        },
        900_000,
        250,
      );

    await writer.warm(ns);
    await measure.settle();
    log(`scale 0 → ${pods}`);
    let sent = writer.sent;
    let creates: Promise<number> = Promise.resolve(0);
    const up = await timeCreation(ctx, ns, pods, {
      create: async () => {
        const t0 = performance.now();
        const cs = await rest.request<CloneSet>({
          method: 'POST',
          path: resourcePath(Resources.cloneSets, ns),
          body: cloneSet('web', pods),
        });
        const now = Date.now();
        const ids = Array.from({ length: pods }, (_, i) => i.toString(36).padStart(5, '0'));
        creates = secondsUntil(
          t0,
          ids.map((id) => {
            const pod = newPod({ cs, template: cs.spec.template, revision: REVISION.v1, id, now });
            return writer.pod(async (send) => {
              await send({ method: 'POST', path: resourcePath(Resources.pods, ns), body: pod });
              await send(statusPatch(pod, inPlaceReadyConditions(pod, true, now)));
            });
          }),
        );
      },
      failed: () => writer.failed(),
      ready: async () => {
        await creates;
        await untilPods('all pods ready', () => count((pod, at) => isPodUpdateReady(pod, 0, at)) === pods);
      },
    });
    const scaleUpWrites = writer.sent - sent + 1;
    log(`created in ${up.createdSeconds} s, ready in ${up.readySeconds} s`);

    await writer.warm(ns);
    await measure.settle();
    log(`in-place update of ${pods}`);
    sent = writer.sent;
    const updateMark = measure.cpuNow();
    const t1 = performance.now();
    await patchCloneSet(rest, ns, 'web', { image: IMAGE_V2 });
    updating = true;
    const now = Date.now();
    const updates = secondsUntil(
      t1,
      informer.list(ns).map((pod) =>
        writer.pod(async (send) => {
          await send(statusPatch(pod, inPlaceReadyConditions(pod, false, now)));
          await send(imagePatch(pod, now));
        }),
      ),
    );
    let imagesRunningSeconds = 0;
    await untilPods('all pods updated and ready', () => {
      if (imagesRunningSeconds === 0 && count(imageRunning) === pods)
        imagesRunningSeconds = (performance.now() - t1) / 1000;
      return count((pod, at) => hasRevision(pod, REVISION.v2) && isPodUpdateReady(pod, 0, at)) === pods;
    });
    const updateSeconds = (performance.now() - t1) / 1000;
    const updateCpu = measure.cpuSince(updateMark);
    const updateWritesSeconds = await updates;
    updating = false;
    const updateWrites = writer.sent - sent + 1;
    log(`updated in ${round(updateSeconds)} s (new images running after ${round(imagesRunningSeconds)} s)`);

    await writer.warm(ns);
    await measure.settle();
    log(`scale ${pods} → 0`);
    sent = writer.sent;
    const downMark = measure.cpuNow();
    const t2 = performance.now();
    await patchCloneSet(rest, ns, 'web', { replicas: 0 });
    const downWritesSeconds = await secondsUntil(
      t2,
      informer.list(ns).map((pod) =>
        writer.pod((send) =>
          send({
            method: 'DELETE',
            path: resourcePath(Resources.pods, ns, pod.metadata.name),
            body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: pod.metadata.uid } },
          }),
        ),
      ),
    );
    writer.failed();
    await until(
      'all pods gone',
      async () => {
        const left = await rest.request<{ items: unknown[] }>({
          method: 'GET',
          path: resourcePath(Resources.pods, ns),
          query: { limit: 1 },
        });
        return left.items.length === 0;
      },
      900_000,
      250,
    );
    const downSeconds = (performance.now() - t2) / 1000;
    const downCpu = measure.cpuSince(downMark);
    log(`scaled down in ${round(downSeconds)} s`);

    return {
      subject: 'ceiling',
      pods,
      scaleUp: { createdSeconds: up.createdSeconds, readySeconds: up.readySeconds, writesSeconds: await creates },
      inPlaceUpdate: {
        seconds: round(updateSeconds),
        imagesRunningSeconds: round(imagesRunningSeconds),
        writesSeconds: updateWritesSeconds,
      },
      scaleDown: { seconds: round(downSeconds), writesSeconds: downWritesSeconds },
      writes: { scaleUp: scaleUpWrites, inPlaceUpdate: updateWrites, scaleDown: writer.sent - sent + 1 },
      cpuMs: { scaleUp: up.cpu, inPlaceUpdate: updateCpu, scaleDown: downCpu },
    };
  } finally {
    await informer.stop();
    writer.close();
  }
}
