import type { BroadcastJob } from '@flotilla/api';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../errors.js';
import type { MutablePod, Pod } from '../../kube/types.js';
import type { ReconcileContext } from '../../runtime/controller.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { formatTime } from '../../runtime/kube-time.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import type { BroadcastJobClient } from './client.js';
import { broadcastJobReconciler } from './controller.js';
import { assignedNode } from './pod-template.js';

/** An in-memory cluster: what the clients write, the listers read (no informer lag unless asked). */
class World {
  readonly clock = new FakeClock(Date.parse('2026-03-01T12:00:00Z'));
  readonly scale = new ScaleExpectations({ clock: this.clock });
  readonly pods: Pod[] = [];
  readonly events: string[] = [];
  readonly deletedJobs: string[] = [];
  job: BroadcastJob | undefined;
  failCreatesOn = new Set<string>();
  #rv = 1;

  constructor(spec: Partial<BroadcastJob['spec']> = {}) {
    this.job = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'BroadcastJob',
      metadata: { name: 'j', namespace: 'ns', uid: 'job-uid', resourceVersion: '1' },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'm', image: 'i' }] } }, ...spec },
    };
  }

  readonly client: BroadcastJobClient = {
    createPod: (pod: MutablePod) => {
      const node = assignedNode(pod as Pod);
      if (this.failCreatesOn.has(node)) return Promise.reject(new KubeApiError(403, 'exceeded quota'));
      const created = { ...pod, metadata: { ...pod.metadata, name: `j-${node}`, uid: `u-${node}` } } as Pod;
      this.pods.push(created);
      return Promise.resolve(created);
    },
    deletePod: (pod) => {
      this.pods.splice(this.pods.indexOf(pod), 1);
      return Promise.resolve();
    },
    updateStatus: (job) => {
      this.job = { ...job, metadata: { ...job.metadata, resourceVersion: String(++this.#rv) } };
      return Promise.resolve(this.job);
    },
    deleteJob: (job) => {
      this.deletedJobs.push(job.metadata!.name!);
      this.job = undefined;
      return Promise.resolve();
    },
  };

  reconciler(): () => ReturnType<ReturnType<typeof broadcastJobReconciler>> {
    const reconcile = broadcastJobReconciler({
      jobs: { get: () => this.job },
      podsOwnedBy: () => [...this.pods],
      nodes: () => ['a', 'b', 'c'].map((name) => ({ metadata: { name } })),
      client: this.client,
      scale: this.scale,
      resourceVersions: new ResourceVersionExpectations({ clock: this.clock }),
      events: { event: (_obj, _type, reason) => this.events.push(reason) },
      clock: this.clock,
      options: { expectationRequeueMs: 1000 },
    });
    const ctx: ReconcileContext = {
      signal: new AbortController().signal,
      log: pino({ level: 'silent' }),
      namespace: 'ns',
      name: 'j',
    };
    return () => reconcile('ns/j', ctx);
  }

  /** The pod informer shows every pod (meets the creation expectations). */
  observePods(): void {
    for (const pod of this.pods) this.scale.creationObserved('ns/j', assignedNode(pod));
  }

  finish(phase: 'Succeeded' | 'Failed'): void {
    for (const pod of this.pods) pod.status = { phase };
  }
}

describe('broadcastJobReconciler', () => {
  it('creates the planned pods, waits for the informer to show them, then completes and writes it once', async () => {
    const w = new World({ parallelism: 2 });
    const reconcile = w.reconciler();
    await reconcile();
    expect(w.pods.map(assignedNode)).toEqual(['a', 'b']);
    expect(w.job?.status).toMatchObject({ active: 2, desired: 3, phase: 'running' });
    expect(await reconcile()).toEqual({ requeueAfter: 1000 }); // creations not yet seen
    w.observePods();
    w.finish('Succeeded');
    await reconcile();
    expect(w.pods.map(assignedNode)).toEqual(['a', 'b', 'c']);
    w.observePods();
    w.finish('Succeeded');
    await reconcile();
    expect(w.job?.status).toMatchObject({
      phase: 'completed',
      succeeded: 3,
      completionTime: formatTime(w.clock.now()),
    });
    const written = w.job?.metadata?.resourceVersion;
    await reconcile();
    expect(w.job?.metadata?.resourceVersion).toBe(written);
    expect(w.events.filter((e) => e === 'JobComplete')).toHaveLength(1);
  });

  it('counts only the pods it created as active when a create fails, and says why', async () => {
    const w = new World();
    w.failCreatesOn.add('a');
    await w.reconciler()();
    expect(w.pods).toEqual([]); // the first batch (one pod) failed: the rest waits for the next pass
    expect(w.job?.status).toMatchObject({ active: 0, desired: 3 });
    expect(w.events).toEqual(['FailedCreate']);
  });

  it('deletes a finished job after ttlSecondsAfterFinished, and not before', async () => {
    const w = new World({ completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 10 } });
    w.job!.status = {
      completionTime: formatTime(w.clock.now() - 4000),
      conditions: [{ type: 'Complete', status: 'True' }],
      phase: 'completed',
    };
    const reconcile = w.reconciler();
    expect(await reconcile()).toEqual({ requeueAfter: 6000 });
    w.clock.advance(6000);
    await reconcile();
    expect(w.deletedJobs).toEqual(['j']);
  });
});
