import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Controller, type ReconcileContext, type ReconcileResult } from './controller.js';
import { enqueueOwner } from './handlers.js';
import { Informer } from './informer.js';
import type { KubeObject } from './kube-object.js';
import type { ReconcileOutcome } from './metrics.js';
import { ItemExponentialRateLimiter } from './rate-limiter.js';
import { FakeClock, flush } from './testing/fake-clock.js';
import { FakeListWatcher } from './testing/fake-list-watch.js';

const silent = pino({ level: 'silent' });

function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

type Script = (key: string, ctx: ReconcileContext) => Promise<ReconcileResult>;

function setup(script: Script, workers = 2) {
  const clock = new FakeClock();
  const calls: string[] = [];
  const outcomes: ReconcileOutcome[] = [];
  let running = 0;
  let maxRunning = 0;
  const perKey = new Map<string, number>();
  let sameKeyOverlap = false;
  const controller = new Controller({
    name: 'test',
    logger: silent,
    clock,
    workers,
    rateLimiter: new ItemExponentialRateLimiter(5, 1000),
    reconcileMetrics: { observe: (o) => outcomes.push(o) },
    reconcile: async (key, ctx) => {
      calls.push(key);
      running++;
      maxRunning = Math.max(maxRunning, running);
      perKey.set(key, (perKey.get(key) ?? 0) + 1);
      if (perKey.get(key)! > 1) sameKeyOverlap = true;
      try {
        return await script(key, ctx);
      } finally {
        running--;
        perKey.set(key, perKey.get(key)! - 1);
      }
    },
  });
  return { controller, clock, calls, outcomes, stats: () => ({ maxRunning, sameKeyOverlap }) };
}

describe('Controller', () => {
  it('reconciles keys mapped from informer events, including owners of child objects', async () => {
    const { controller, calls } = setup(() => Promise.resolve());
    const parents = new FakeListWatcher('CloneSetList', 'apps.kruise.io/v1alpha1');
    const pods = new FakeListWatcher();
    const parentInformer = new Informer({ name: 'clonesets', listWatch: parents, logger: silent });
    const podInformer = new Informer<KubeObject>({ name: 'pods', listWatch: pods, logger: silent });
    controller.watch(parentInformer);
    controller.watch(podInformer, enqueueOwner({ group: 'apps.kruise.io', kind: 'CloneSet' }));
    parents.upsert({ metadata: { name: 'web', namespace: 'ns' } });
    parentInformer.start();
    podInformer.start();
    await Promise.all([parentInformer.waitForSync(), podInformer.waitForSync()]);
    controller.start();
    await flush();
    expect(calls).toEqual(['ns/web']);
    const owner = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'u', controller: true };
    pods.upsert({ metadata: { name: 'web-1', namespace: 'ns', ownerReferences: [owner] } });
    pods.upsert({ metadata: { name: 'stray', namespace: 'ns' } });
    await flush();
    expect(calls).toEqual(['ns/web', 'ns/web']);
    await controller.stop({ deadlineMs: 1000 });
    await Promise.all([parentInformer.stop(), podInformer.stop()]);
  });

  it('queues nothing for an update the watch predicate rejects; adds and deletes always count', async () => {
    const { controller, calls } = setup(() => Promise.resolve());
    const sets = new FakeListWatcher('SidecarSetList', 'apps.kruise.io/v1alpha1');
    const informer = new Informer<KubeObject>({ name: 'sidecarsets', listWatch: sets, logger: silent });
    controller.watch(informer, undefined, {
      updated: (old, obj) => old.metadata?.generation !== obj.metadata?.generation,
    });
    informer.start();
    await informer.waitForSync();
    controller.start();
    sets.upsert({ metadata: { name: 'a', generation: 1 } });
    await flush();
    expect(calls).toEqual(['a']);
    sets.upsert({ metadata: { name: 'a', generation: 1 }, status: { matchedPods: 3 } } as KubeObject);
    await flush();
    expect(calls).toEqual(['a']);
    sets.upsert({ metadata: { name: 'a', generation: 2 } });
    await flush();
    expect(calls).toEqual(['a', 'a']);
    sets.delete(undefined, 'a');
    await flush();
    expect(calls).toEqual(['a', 'a', 'a']);
    await controller.stop({ deadlineMs: 1000 });
    await informer.stop();
  });

  it('batches the events of a delayed watch into one reconcile per window', async () => {
    const { controller, calls, clock } = setup(() => Promise.resolve());
    const pods = new FakeListWatcher();
    const informer = new Informer<KubeObject>({ name: 'pods', listWatch: pods, logger: silent, clock });
    controller.watch(informer, (pod) => [`set-of-${pod.metadata?.name?.split('-')[0]}`], { delayMs: 500 });
    informer.start();
    await informer.waitForSync();
    controller.start();
    for (let i = 0; i < 5; i++) pods.upsert({ metadata: { name: `a-${i}`, namespace: 'ns' } });
    await flush();
    await clock.tick(499);
    expect(calls).toEqual([]);
    pods.upsert({ metadata: { name: 'a-5', namespace: 'ns' } });
    await clock.tick(1);
    expect(calls).toEqual(['set-of-a']);
    pods.upsert({ metadata: { name: 'a-6', namespace: 'ns' } });
    await clock.tick(500);
    expect(calls).toEqual(['set-of-a', 'set-of-a']);
    await controller.stop({ deadlineMs: 1000 });
    await informer.stop();
  });

  it('never reconciles one key concurrently, but runs different keys in parallel', async () => {
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    const { controller, calls, stats } = setup((key) => {
      const gate = deferred();
      gates.set(`${key}#${calls.filter((c) => c === key).length}`, gate);
      return gate.promise;
    });
    controller.start();
    controller.enqueue('ns/a');
    controller.enqueue('ns/b');
    await flush();
    controller.enqueue('ns/a');
    controller.enqueue('ns/a');
    await flush();
    expect(calls).toEqual(['ns/a', 'ns/b']);
    gates.get('ns/a#1')!.resolve();
    await flush();
    expect(calls).toEqual(['ns/a', 'ns/b', 'ns/a']);
    gates.get('ns/a#2')!.resolve();
    gates.get('ns/b#1')!.resolve();
    await flush();
    expect(stats()).toEqual({ maxRunning: 2, sameKeyOverlap: false });
    await controller.stop({ deadlineMs: 1000 });
  });

  it('retries a failing reconcile with growing backoff and forgets the backoff on success', async () => {
    let failures = 3;
    const { controller, calls, clock, outcomes } = setup(() => {
      if (failures-- > 0) return Promise.reject(new Error('apiserver said no'));
      return Promise.resolve();
    });
    controller.start();
    controller.enqueue('ns/a');
    await flush();
    expect(calls).toHaveLength(1);
    await clock.tick(4);
    expect(calls).toHaveLength(1);
    await clock.tick(1); // 5 ms
    expect(calls).toHaveLength(2);
    await clock.tick(10); // 10 ms
    expect(calls).toHaveLength(3);
    await clock.tick(20); // 20 ms
    expect(calls).toHaveLength(4);
    expect(outcomes).toEqual(['error', 'error', 'error', 'success']);
    expect(controller.queue.numRequeues('ns/a')).toBe(0);
    await controller.stop({ deadlineMs: 1000 });
  });

  it('requeues after the delay a reconcile asks for', async () => {
    let first = true;
    const { controller, calls, clock, outcomes } = setup(() => {
      const result = first ? { requeueAfter: 30_000 } : undefined;
      first = false;
      return Promise.resolve(result);
    });
    controller.start();
    controller.enqueue('ns/a');
    await flush();
    await clock.tick(29_999);
    expect(calls).toHaveLength(1);
    await clock.tick(1);
    expect(calls).toHaveLength(2);
    expect(outcomes).toEqual(['requeue_after', 'success']);
    await controller.stop({ deadlineMs: 1000 });
  });

  it('stops taking work and lets in-flight reconciles finish before the deadline', async () => {
    const gate = deferred();
    let signal: AbortSignal | undefined;
    const { controller, calls, clock } = setup((_key, ctx) => {
      signal = ctx.signal;
      return gate.promise;
    });
    controller.start();
    controller.enqueue('ns/a');
    await flush();
    let stopped: boolean | undefined;
    const stopping = controller.stop({ deadlineMs: 5000 }).then((r) => (stopped = r));
    controller.enqueue('ns/b');
    await clock.tick(1000);
    expect(stopped).toBeUndefined();
    gate.resolve();
    await stopping;
    expect(stopped).toBe(true);
    expect(signal!.aborted).toBe(false);
    expect(calls).toEqual(['ns/a']);
  });

  it('aborts reconciles still running at the deadline', async () => {
    const { controller, clock } = setup(
      (_key, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve())),
    );
    controller.start();
    controller.enqueue('ns/a');
    await flush();
    const stopping = controller.stop({ deadlineMs: 5000 });
    await clock.tick(5000);
    expect(await stopping).toBe(false);
  });

  it('aborts at once when leadership is lost', async () => {
    let signal: AbortSignal | undefined;
    const { controller } = setup((_key, ctx) => {
      signal = ctx.signal;
      return new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
    });
    controller.start();
    controller.enqueue('ns/a');
    await flush();
    expect(await controller.stop({ deadlineMs: 60_000, abortInFlight: true })).toBe(true);
    expect(signal!.aborted).toBe(true);
  });
});
