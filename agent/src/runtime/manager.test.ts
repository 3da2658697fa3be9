import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from './kube-object.js';
import { Manager, type ManagerLeaderElection } from './manager.js';
import { RuntimeMetrics } from './metrics.js';
import { HealthServer } from './health.js';
import { Resources } from './resource.js';
import { FakeClock, flush } from './testing/fake-clock.js';
import { FakeLeaseClient } from './testing/fake-lease-client.js';
import { FakeListWatcher } from './testing/fake-list-watch.js';

const silent = pino({ level: 'silent' });

function newManager(
  options: { clock?: FakeClock; leaseClient?: FakeLeaseClient; identity?: string; pods?: FakeListWatcher } = {},
) {
  const clock = options.clock ?? new FakeClock();
  const pods = options.pods ?? new FakeListWatcher();
  const reconciled: string[] = [];
  const leaderElection: ManagerLeaderElection | undefined = options.leaseClient
    ? {
        namespace: 'sys',
        name: 'agent',
        identity: options.identity ?? 'me',
        client: options.leaseClient,
        random: () => 0,
      }
    : undefined;
  const manager = new Manager({
    logger: silent,
    metrics: new RuntimeMetrics(new Registry()),
    listWatcherFor: () => pods,
    leaderElection,
    clock,
    cacheSyncTimeoutMs: 10_000,
  });
  const informer = manager.informer<KubeObject>({ resource: Resources.pods, namespace: 'ns' });
  const controller = manager.controller({
    name: 'test',
    reconcile: (key) => {
      reconciled.push(key);
      return Promise.resolve();
    },
  });
  controller.watch(informer);
  return { manager, pods, reconciled, clock, informer };
}

describe('Manager', () => {
  it('shares informers between equal requests', () => {
    const { manager, informer } = newManager();
    expect(manager.informer({ resource: Resources.pods, namespace: 'ns' })).toBe(informer);
    expect(manager.informer({ resource: Resources.pods, namespace: 'other' })).not.toBe(informer);
  });

  it('caches objects without managedFields by default', async () => {
    const { manager, pods, informer } = newManager();
    pods.upsert({ metadata: { name: 'a', namespace: 'ns', managedFields: [{ manager: 'kwok' }] } });
    const running = manager.start();
    await flush();
    expect(informer.get('ns', 'a')?.metadata).not.toHaveProperty('managedFields');
    await manager.stop('test');
    await running;
  });

  it('without leader election: syncs caches, runs controllers, and shuts down cleanly', async () => {
    const { manager, pods, reconciled } = newManager();
    pods.upsert({ metadata: { name: 'a', namespace: 'ns' } });
    const running = manager.start();
    await flush();
    expect(manager.hasSynced()).toBe(true);
    expect(manager.isLeader()).toBe(true);
    expect(reconciled).toEqual(['ns/a']);
    pods.upsert({ metadata: { name: 'b', namespace: 'ns' } });
    await flush();
    expect(reconciled).toEqual(['ns/a', 'ns/b']);
    await manager.stop('test');
    await expect(running).resolves.toBeUndefined();
    expect(pods.openWatches()).toBe(0);
    expect(() => manager.add({ name: 'late', needLeaderElection: false, start: () => {} })).toThrow(
      /before the manager starts/,
    );
  });

  it('runs controllers and leader runnables only on the leader; every-replica runnables everywhere', async () => {
    const clock = new FakeClock();
    const leaseClient = new FakeLeaseClient();
    const pods = new FakeListWatcher(); // one cluster, two replicas
    const a = newManager({ clock, leaseClient, identity: 'a', pods });
    const b = newManager({ clock, leaseClient, identity: 'b', pods });
    const started: string[] = [];
    for (const [id, m] of [
      ['a', a.manager],
      ['b', b.manager],
    ] as const) {
      m.add({ name: 'webhook', needLeaderElection: false, start: () => void started.push(`${id} webhook`) });
      m.add({ name: 'job', needLeaderElection: true, start: () => void started.push(`${id} job`) });
    }
    a.pods.upsert({ metadata: { name: 'x', namespace: 'ns' } });
    const runningA = a.manager.start();
    await flush();
    const runningB = b.manager.start();
    await clock.tick(5_000);
    expect([a.manager.isLeader(), b.manager.isLeader()]).toEqual([true, false]);
    expect(a.reconciled).toEqual(['ns/x']);
    expect(b.reconciled).toEqual([]);
    expect(started.sort()).toEqual(['a job', 'a webhook', 'b webhook']);

    await a.manager.stop('SIGTERM');
    await runningA;
    expect(leaseClient.stored('sys', 'agent')?.spec?.holderIdentity).toBe('');
    await clock.tick(2_000);
    expect(b.manager.isLeader()).toBe(true);
    expect(b.reconciled).toEqual(['ns/x']);
    await b.manager.stop('SIGTERM');
    await runningB;
  });

  it('fails start() when caches do not sync in time', async () => {
    const { manager, pods, clock } = newManager();
    for (let i = 0; i < 100; i++) pods.failNextList();
    const running = manager.start();
    const assertion = expect(running).rejects.toMatchObject({ code: 'AGENT_ERR_CACHE_SYNC' });
    await clock.tick(10_000);
    await assertion;
  });

  it('fails start() when leadership is lost, after stopping everything', async () => {
    const leaseClient = new FakeLeaseClient();
    const { manager, clock, pods } = newManager({ leaseClient });
    const running = manager.start();
    const assertion = expect(running).rejects.toMatchObject({ code: 'AGENT_ERR_LEADERSHIP_LOST' });
    await clock.tick(2_000);
    expect(manager.isLeader()).toBe(true);
    leaseClient.down = true;
    await clock.tick(12_000);
    await assertion;
    expect(manager.isLeader()).toBe(false);
    expect(pods.openWatches()).toBe(0);
  });

  it('stops everything when a runnable fails', async () => {
    const { manager } = newManager();
    manager.add({
      name: 'broken',
      needLeaderElection: false,
      start: () => Promise.reject(new Error('port in use')),
    });
    await expect(manager.start()).rejects.toMatchObject({
      code: 'AGENT_ERR_MANAGER',
      message: 'runnable broken failed',
    });
  });

  it('reports readiness from cache sync and turns unready once stopping', async () => {
    const registry = new Registry();
    const health = new HealthServer({ port: 0, host: '127.0.0.1', registry, logger: silent });
    const pods = new FakeListWatcher();
    pods.failNextList();
    const clock = new FakeClock();
    const manager = new Manager({
      logger: silent,
      metrics: new RuntimeMetrics(registry),
      listWatcherFor: () => pods,
      health,
      clock,
    });
    manager.informer({ resource: Resources.pods });
    let release!: () => void;
    manager.add({
      name: 'webhook',
      needLeaderElection: false,
      // Keeps serving until told to stop, then takes a moment, like a server closing connections.
      start: (signal) =>
        new Promise<void>((resolve) => signal.addEventListener('abort', () => (release = resolve), { once: true })),
    });
    const running = manager.start();
    await flush();
    const readyz = async () => (await fetch(`http://127.0.0.1:${manager.healthPort()}/readyz`)).status;
    expect(await readyz()).toBe(503);
    await clock.tick(2000); // the informer retries the failed list within 0.8-1.6 s
    expect(await readyz()).toBe(200);
    const stopping = manager.stop('test');
    await flush();
    expect(await readyz()).toBe(503);
    release();
    await stopping;
    await running;
    expect(manager.healthPort()).toBeUndefined();
  });

  it('bounds the whole shutdown by the shutdown timeout', async () => {
    const clock = new FakeClock();
    const pods = new FakeListWatcher();
    pods.upsert({ metadata: { name: 'stuck', namespace: 'ns' } });
    let aborted = false;
    const manager = new Manager({
      logger: silent,
      metrics: new RuntimeMetrics(new Registry()),
      listWatcherFor: () => pods,
      clock,
      shutdownTimeoutMs: 5000,
    });
    const c = manager.controller({
      name: 'stuck',
      reconcile: (_key, ctx) =>
        new Promise((resolve) =>
          ctx.signal.addEventListener('abort', () => {
            aborted = true;
            resolve();
          }),
        ),
    });
    c.watch(manager.informer({ resource: Resources.pods }));
    manager.add({ name: 'deaf', needLeaderElection: false, start: () => new Promise<void>(() => {}) });
    const running = manager.start();
    await flush();
    let stopped = false;
    const stopping = manager.stop('test').then(() => (stopped = true));
    await clock.tick(4999);
    expect([aborted, stopped]).toEqual([false, false]);
    await clock.tick(1);
    expect(aborted).toBe(true);
    await clock.tick(1000);
    await stopping;
    await running;
    expect(stopped).toBe(true);
  });
});
