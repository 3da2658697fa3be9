import type { ImagePullJob, NodeImage } from '@flotilla/api';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../errors.js';
import type { ReconcileContext } from '../../runtime/controller.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { formatTime } from '../../runtime/kube-time.js';
import { FakeClock } from '../../runtime/testing/fake-clock.js';
import type { JobClient, SecretClient } from './client.js';
import { imagePullJobReconciler } from './controller.js';
import type { SecretLike } from './secrets-plan.js';
import type { NodeImageClient } from '../../kube/nodeimage-client.js';

const FINALIZER = 'apps.kruise.io/deletion-protection';
const IMAGE = 'reg.example.com/app';

/** An in-memory cluster: the informer caches and the clients see the same objects. */
class World {
  readonly clock = new FakeClock(Date.parse('2026-03-01T12:00:00Z'));
  readonly jobs = new Map<string, ImagePullJob>();
  readonly nodeImages = new Map<string, NodeImage>();
  readonly secrets = new Map<string, SecretLike>();
  readonly deletedJobs: string[] = [];
  readonly events: string[] = [];
  readonly secretCreations = new ScaleExpectations({ clock: this.clock });
  /** The namespaces the secrets informers cover (FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES); all when undefined. */
  secretNamespaces: string[] | undefined;
  #rv = 100;

  stamp<T extends { metadata?: { resourceVersion?: string } }>(obj: T): T {
    const copy = structuredClone(obj);
    copy.metadata = { ...copy.metadata, resourceVersion: String(++this.#rv) };
    return copy;
  }

  addJob(spec: Partial<ImagePullJob['spec']>, meta: Partial<NonNullable<ImagePullJob['metadata']>> = {}): ImagePullJob {
    const job = this.stamp<ImagePullJob>({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ImagePullJob',
      metadata: { name: 'j', namespace: 'ns', uid: 'job-uid', ...meta },
      spec: { image: `${IMAGE}:v1`, ...spec },
    });
    this.jobs.set('ns/j', job);
    return job;
  }

  addNode(name: string): void {
    this.nodeImages.set(
      name,
      this.stamp<NodeImage>({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'NodeImage',
        metadata: { name, uid: `ni-${name}` },
        spec: {},
      }),
    );
  }

  /** What the node daemon would report for the job's tag on `node`. */
  report(node: string, phase: 'Succeeded' | 'Failed'): void {
    const ni = this.nodeImages.get(node)!;
    const tag = ni.spec.images![IMAGE]!.tags[0]!;
    const done = { tag: tag.tag, phase, version: tag.version, completionTime: formatTime(this.clock.now()) };
    this.nodeImages.set(
      node,
      this.stamp({ ...ni, status: { desired: 1, imageStatuses: { [IMAGE]: { tags: [done] } } } }),
    );
  }

  job(): ImagePullJob | undefined {
    return this.jobs.get('ns/j');
  }

  reconciler() {
    const stale = (current: { metadata?: { resourceVersion?: string } } | undefined, sent: typeof current): void => {
      if (current?.metadata?.resourceVersion !== sent?.metadata?.resourceVersion)
        throw new KubeApiError(409, 'conflict');
    };
    const nodeImages: NodeImageClient = {
      get: (name) => Promise.resolve(structuredClone(this.nodeImages.get(name))),
      create: () => Promise.reject(new Error('unused')),
      update: (ni) => {
        stale(this.nodeImages.get(ni.metadata!.name!), ni);
        const stored = this.stamp(ni);
        this.nodeImages.set(ni.metadata!.name!, stored);
        return Promise.resolve(stored);
      },
      updateStatus: () => Promise.reject(new Error('unused')),
      delete: () => Promise.resolve(),
    };
    const jobClient: JobClient = {
      updateStatus: (job) => {
        stale(this.job(), job);
        const stored = this.stamp({ ...this.job()!, status: job.status });
        this.jobs.set('ns/j', stored);
        return Promise.resolve(stored);
      },
      setFinalizers: (job, finalizers) => {
        stale(this.job(), job);
        const stored = this.stamp({ ...this.job()!, metadata: { ...this.job()!.metadata, finalizers } });
        this.jobs.set('ns/j', stored);
        return Promise.resolve(stored);
      },
      delete: (job) => {
        this.deletedJobs.push(job.metadata!.name!);
        this.jobs.delete('ns/j');
        return Promise.resolve();
      },
    };
    let copies = 0;
    const secretClient: SecretClient = {
      create: (s) => {
        const stored = this.stamp({
          ...s,
          metadata: { ...s.metadata, name: `${s.metadata!.generateName}${++copies}` },
        });
        this.secrets.set(`${stored.metadata.namespace}/${stored.metadata.name}`, stored);
        // As the secrets informer would on the ADDED event.
        this.secretCreations.creationObserved(
          'ns/j',
          stored.metadata.annotations!['imagepulljobs.kruise.io/source-key']!,
        );
        return Promise.resolve(stored);
      },
      update: (s) => {
        const stored = this.stamp(s);
        this.secrets.set(`${s.metadata!.namespace}/${s.metadata!.name}`, stored);
        return Promise.resolve(stored);
      },
      delete: (s) => {
        this.secrets.delete(`${s.metadata!.namespace}/${s.metadata!.name}`);
        return Promise.resolve();
      },
      ensureNamespace: () => Promise.resolve(),
    };
    const reconcile = imagePullJobReconciler({
      jobs: { get: (ns, name) => this.jobs.get(`${ns}/${name}`) },
      secrets: {
        namespaces: this.secretNamespaces,
        get: (ns, name) => this.secrets.get(`${ns}/${name}`),
        list: (ns) => [...this.secrets.values()].filter((s) => s.metadata?.namespace === ns),
      },
      targets: {
        nodeImages: () => [...this.nodeImages.values()],
        nodeImage: (name) => this.nodeImages.get(name),
        pods: () => [],
      },
      nodeImages,
      jobClient,
      secretClient,
      resourceVersions: new ResourceVersionExpectations({ clock: this.clock }),
      secretCreations: this.secretCreations,
      events: { event: (obj, type, reason, message) => this.events.push(`${type} ${reason} ${message}`) },
      clock: this.clock,
      random: () => 0,
      options: {
        daemonConfigNamespace: 'cfg',
        ttlMargin: { baseSeconds: 0, jitterSeconds: 0 },
        expectationRequeueMs: 1000,
      },
    });
    const ctx: ReconcileContext = {
      signal: new AbortController().signal,
      log: pino({ level: 'silent' }),
      namespace: 'ns',
      name: 'j',
    };
    return () => reconcile('ns/j', ctx);
  }
}

const owners = (w: World): string[] =>
  [...w.nodeImages.values()].filter((ni) => ni.spec.images?.[IMAGE]).map((ni) => ni.metadata!.name!);

describe('imagePullJobReconciler', () => {
  it('adds the finalizer, hands the image to one node at a time, and completes', async () => {
    const w = new World();
    ['a', 'b', 'c'].forEach((n) => w.addNode(n));
    w.addJob({ parallelism: 1 });
    const reconcile = w.reconciler();

    await reconcile();
    expect(w.job()!.metadata!.finalizers).toEqual([FINALIZER]);
    expect(owners(w)).toEqual(['a']);
    expect(w.job()!.status).toMatchObject({
      desired: 3,
      active: 0,
      succeeded: 0,
      message: 'job is running, progress 0.0%',
    });

    await reconcile();
    expect(owners(w)).toEqual(['a']); // a is pulling: the window is full
    expect(w.job()!.status).toMatchObject({ active: 1 });

    w.report('a', 'Succeeded');
    await reconcile();
    expect(owners(w)).toEqual(['a', 'b']);
    w.report('b', 'Failed');
    await reconcile();
    await reconcile();
    w.report('c', 'Succeeded');
    await reconcile();
    expect(w.job()!.status).toMatchObject({
      desired: 3,
      active: 0,
      succeeded: 2,
      failed: 1,
      failedNodes: ['b'],
      completionTime: formatTime(w.clock.now()),
      message: 'job has completed',
    });
    // The next pass releases the job: the finalizer goes, no TTL means it stays.
    expect(await reconcile()).toBeUndefined();
    expect(w.job()!.metadata!.finalizers).toEqual([]);
  });

  it('deletes a finished job ttlSecondsAfterFinished after completion', async () => {
    const w = new World();
    w.addNode('a');
    w.addJob({ completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 30 } });
    const reconcile = w.reconciler();
    await reconcile();
    await reconcile();
    w.report('a', 'Succeeded');
    await reconcile();
    expect(w.job()!.status?.completionTime).toBeDefined();
    w.clock.advance(10_000);
    expect(await reconcile()).toEqual({ requeueAfter: 20_000 });
    w.clock.advance(20_000);
    await reconcile();
    expect(w.deletedJobs).toEqual(['j']);
  });

  it('says which namespaces it reads when a pull secret lies outside them', async () => {
    const w = new World();
    w.secretNamespaces = ['cfg', 'team-a'];
    w.addNode('a');
    w.addJob({ pullSecrets: ['reg'] });
    await w.reconciler()();
    expect(w.events).toContain(
      "Warning PullSecretNotFound pull secret ns/reg not readable: the agent reads pull secrets only in namespaces cfg, team-a (FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES, the chart's imagePullJob.pullSecretNamespaces)",
    );
  });

  it('copies pull secrets for the daemon, lists them on the node, and releases them when done', async () => {
    const w = new World();
    w.addNode('a');
    w.secrets.set('ns/reg', {
      metadata: { name: 'reg', namespace: 'ns', uid: 'src' },
      data: { '.dockerconfigjson': 'e30=' },
    });
    w.addJob({ pullSecrets: ['reg', 'absent'] });
    const reconcile = w.reconciler();
    await reconcile();
    const copy = w.secrets.get('cfg/reg-1');
    expect(copy?.metadata?.annotations?.['imagepulljobs.kruise.io/references']).toBe('ns/j');
    expect(w.nodeImages.get('a')!.spec.images![IMAGE]!.pullSecrets).toEqual([{ namespace: 'cfg', name: 'reg-1' }]);
    expect(w.events).toContain('Warning PullSecretNotFound pull secret ns/absent not found');

    w.clock.advance(1000);
    await reconcile(); // the cache has seen the copy: nothing new is created
    expect([...w.secrets.keys()].filter((k) => k.startsWith('cfg/'))).toEqual(['cfg/reg-1']);
    w.report('a', 'Succeeded');
    await reconcile();
    await reconcile();
    expect(w.secrets.has('cfg/reg-1')).toBe(false);
  });

  it('fails everything unfinished at activeDeadlineSeconds and asks to be woken for it', async () => {
    const w = new World();
    w.addNode('a');
    w.addNode('b');
    w.addJob({ parallelism: 1, completionPolicy: { type: 'Always', activeDeadlineSeconds: 60 } });
    const reconcile = w.reconciler();
    expect(await reconcile()).toEqual({ requeueAfter: 60_000 });
    w.clock.advance(60_000);
    await reconcile();
    expect(w.job()!.status).toMatchObject({
      failed: 2,
      failedNodes: ['a', 'b'],
      message: 'job exceeds activeDeadlineSeconds',
    });
  });

  it('reports an image reference it cannot use instead of retrying forever', async () => {
    const w = new World();
    w.addNode('a');
    w.addJob({ image: 'Not An Image' });
    expect(await w.reconciler()()).toBeUndefined();
    expect(w.job()!.status?.message).toMatch(/^invalid image Not An Image: /);
    expect(owners(w)).toEqual([]);
  });
});
