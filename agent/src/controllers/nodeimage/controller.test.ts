import type { ImagePullJob, NodeImage } from '@flotilla/api';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../errors.js';
import type { ReconcileContext } from '../../runtime/controller.js';
import { formatTime } from '../../runtime/kube-time.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import { nodeImageReconciler } from './controller.js';
import type { NodeLike } from './plan.js';
import type { NodeImageClient } from '../../kube/nodeimage-client.js';

const job = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ImagePullJob', namespace: 'ns', name: 'j', uid: 'u1' };

class World {
  readonly clock = new FakeClock(Date.parse('2026-03-01T12:00:00Z'));
  readonly nodes = new Map<string, NodeLike>();
  readonly nodeImages = new Map<string, NodeImage>();
  readonly jobs = new Map<string, ImagePullJob>();
  readonly events: string[] = [];
  readonly calls: string[] = [];
  /** The next status write fails with 409, as when the daemon wrote first. */
  conflictOnStatus = false;
  #rv = 1;

  node(name: string, labels: Record<string, string>, readySecondsAgo = 3600): void {
    const since = formatTime(this.clock.now() - readySecondsAgo * 1000);
    this.nodes.set(name, {
      metadata: { name, labels },
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: since }] },
    });
  }

  put(ni: NodeImage): NodeImage {
    const stored = structuredClone(ni);
    stored.metadata = { ...stored.metadata, resourceVersion: String(++this.#rv) };
    this.nodeImages.set(ni.metadata!.name!, stored);
    return stored;
  }

  reconcile(name: string) {
    const client: NodeImageClient = {
      get: (n) => Promise.resolve(structuredClone(this.nodeImages.get(n))),
      create: (ni) => {
        this.calls.push(`create ${ni.metadata!.name} ${JSON.stringify(ni.metadata!.labels)}`);
        return Promise.resolve(this.put(ni));
      },
      update: (ni) => {
        this.calls.push(`update ${ni.metadata!.name}`);
        return Promise.resolve(this.put(ni));
      },
      updateStatus: (ni) => {
        if (this.conflictOnStatus) return Promise.reject(new KubeApiError(409, 'conflict'));
        this.calls.push(`status ${ni.metadata!.name}`);
        return Promise.resolve(this.put(ni));
      },
      delete: (n) => {
        this.calls.push(`delete ${n}`);
        this.nodeImages.delete(n);
        return Promise.resolve();
      },
    };
    const reconcile = nodeImageReconciler({
      nodes: { get: (_ns, n) => this.nodes.get(n) },
      nodeImages: { get: (_ns, n) => this.nodeImages.get(n) },
      jobs: { get: (ns, n) => this.jobs.get(`${ns}/${n}`) },
      client,
      events: {
        event: (obj, type, reason, message) =>
          this.events.push(`${obj.kind}/${obj.metadata?.name} ${reason}: ${message}`),
      },
      clock: this.clock,
      options: { creationDelayMs: 30_000, responseTimeoutMs: 600_000, minRequeueMs: 3000 },
      random: () => 0,
    });
    const ctx: ReconcileContext = {
      signal: new AbortController().signal,
      log: pino({ level: 'silent' }),
      namespace: undefined,
      name,
    };
    return reconcile(name, ctx);
  }
}

describe('nodeImageReconciler', () => {
  it('creates the NodeImage with the node labels once the node has been Ready for the delay', async () => {
    const w = new World();
    w.node('n1', { zone: 'a' }, 10);
    expect(await w.reconcile('n1')).toEqual({ requeueAfter: 20_000 });
    w.clock.advance(20_000);
    await w.reconcile('n1');
    expect(w.calls).toEqual(['create n1 {"zone":"a"}']);
  });

  it('follows label changes, and deletes the NodeImage with its node', async () => {
    const w = new World();
    w.node('n1', { zone: 'a' });
    await w.reconcile('n1');
    w.node('n1', { zone: 'b' });
    await w.reconcile('n1');
    expect(w.nodeImages.get('n1')!.metadata!.labels).toEqual({ zone: 'b' });
    w.nodes.delete('n1');
    await w.reconcile('n1');
    expect(w.calls.at(-1)).toBe('delete n1');
    expect(w.nodeImages.has('n1')).toBe(false);
  });

  it('drops tags of deleted jobs and tells the owners of tags the daemon never answered', async () => {
    const w = new World();
    w.node('n1', {});
    const tag = (t: string, createdSecondsAgo: number) => ({
      tag: t,
      version: 0,
      createdAt: formatTime(w.clock.now() - createdSecondsAgo * 1000),
      ownerReferences: [job],
    });
    w.jobs.set('ns/j', {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: { uid: 'u1' },
      spec: { image: 'x' },
    });
    w.put({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'NodeImage',
      metadata: { name: 'n1', labels: {} },
      spec: { images: { app: { tags: [tag('old', 700), tag('new', 30)] } } },
    });
    // The daemon answered nothing for 700 s: that tag fails; the other is still within time.
    expect(await w.reconcile('n1')).toEqual({ requeueAfter: 570_000 });
    expect(w.nodeImages.get('n1')!.status).toMatchObject({ desired: 2, failed: 1 });
    expect(w.events).toEqual([
      'ImagePullJob/j PullImageFailed: Failed to pull image app:old on node n1 for node has not responded for a long time',
      'NodeImage/n1 PullImageFailed: Failed to pull image app:old on node n1 for node has not responded for a long time',
    ]);
    w.jobs.clear();
    await w.reconcile('n1');
    expect(w.nodeImages.get('n1')!.spec.images).toEqual({});
  });

  it('leaves a status conflict to the next watch event instead of failing', async () => {
    const w = new World();
    w.node('n1', {});
    await w.reconcile('n1');
    w.conflictOnStatus = true;
    await expect(w.reconcile('n1')).resolves.toBeUndefined();
  });
});
