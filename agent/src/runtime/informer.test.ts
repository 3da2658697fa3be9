import { pino } from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { AgentError } from '../errors.js';
import { Informer, type DeleteInfo, type InformerMetrics } from './informer.js';
import type { KubeObject } from './kube-object.js';
import { FakeClock, flush } from './testing/fake-clock.js';
import { FakeListWatcher } from './testing/fake-list-watch.js';

const silent = pino({ level: 'silent' });

interface Pod extends KubeObject {
  spec?: { nodeName?: string };
  data?: string;
}

function pod(name: string, extra: Partial<Pod> = {}, ns = 'ns'): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns, labels: { app: 'web' } }, ...extra };
}

class Recorder {
  events: string[] = [];
  tombstones: string[] = [];
  handler = {
    onAdd: (o: Pod) => this.events.push(`add ${o.metadata!.name}`),
    onUpdate: (old: Pod, o: Pod) => this.events.push(`update ${o.metadata!.name}${old === o ? ' (resync)' : ''}`),
    onDelete: (o: Pod, info: DeleteInfo) => {
      this.events.push(`delete ${o.metadata!.name}`);
      if (info.finalStateUnknown) this.tombstones.push(o.metadata!.name!);
    },
  };
  take(): string[] {
    return this.events.splice(0);
  }
}

class CountingMetrics implements InformerMetrics {
  relists = 0;
  restarts = 0;
  watches = 0;
  incRelists(): void {
    this.relists++;
  }
  incRestarts(): void {
    this.restarts++;
  }
  incWatches(): void {
    this.watches++;
  }
}

function setup(options: { resyncMs?: number; relistMs?: number; pageSize?: number; transform?: (p: Pod) => Pod } = {}) {
  const lw = new FakeListWatcher();
  const clock = new FakeClock();
  const metrics = new CountingMetrics();
  const rec = new Recorder();
  const informer = new Informer<Pod>({
    name: 'pods',
    listWatch: lw,
    logger: silent,
    clock,
    metrics,
    random: () => 0,
    backoff: { initialMs: 100, maxMs: 1000, jitter: 0 },
    ...options,
  });
  informer.addEventHandler(rec.handler);
  return { lw, clock, metrics, rec, informer };
}

describe('Informer', () => {
  it('lists, syncs, then sees adds, updates and deletes from the watch', async () => {
    const { lw, rec, informer } = setup();
    lw.upsert(pod('a'));
    lw.upsert(pod('b', { spec: { nodeName: 'node-1' } }));
    await startAndSync(informer);
    expect(informer.hasSynced()).toBe(true);
    expect(rec.take()).toEqual(['add a', 'add b']);
    lw.upsert(pod('c'));
    lw.upsert(pod('a', { data: 'changed' }));
    lw.delete('ns', 'b');
    await flush();
    expect(rec.take()).toEqual(['add c', 'update a', 'delete b']);
    expect(informer.get('ns', 'a')?.data).toBe('changed');
    expect(informer.get('ns', 'b')).toBeUndefined();
    expect(
      informer
        .list('ns')
        .map((p) => p.metadata!.name)
        .sort(),
    ).toEqual(['a', 'c']);
    expect(informer.lastSyncResourceVersion()).toBe(lw.currentResourceVersion());
    expect(lw.calls.list).toBe(1);
    await informer.stop();
    expect(lw.openWatches()).toBe(0);
  });

  it('hands out plain frozen objects with apiVersion and kind, from list and watch alike', async () => {
    const { lw, informer } = setup();
    lw.upsert({ ...pod('a'), metadata: { name: 'a', namespace: 'ns', creationTimestamp: new Date(0) as never } });
    await startAndSync(informer);
    lw.upsert(pod('b'));
    await flush();
    const a = informer.get('ns', 'a')!;
    const b = informer.get('ns', 'b')!;
    expect([a.apiVersion, a.kind, b.apiVersion, b.kind]).toEqual(['v1', 'Pod', 'v1', 'Pod']);
    expect(a.metadata!.creationTimestamp).toBe('1970-01-01T00:00:00Z');
    expect(Object.isFrozen(a) && Object.isFrozen(a.metadata) && Object.isFrozen(b.metadata!.labels)).toBe(true);
    expect(() => {
      (a.metadata!.labels as Record<string, string>).app = 'x';
    }).toThrow(TypeError);
    await informer.stop();
  });

  it('transforms objects from list and watch before caching and before handlers see them', async () => {
    const { lw, informer, rec } = setup({
      transform: (p) => {
        delete p.data;
        return p;
      },
    });
    const seen: (string | undefined)[] = [];
    informer.addEventHandler({ onAdd: (p) => seen.push(p.data), onUpdate: (_o, p) => seen.push(p.data) });
    lw.upsert(pod('a', { data: 'big' }));
    await startAndSync(informer);
    lw.upsert(pod('b', { data: 'big' }));
    const stored = lw.upsert(pod('a', { data: 'bigger' })) as Pod;
    await flush();
    expect(rec.take()).toEqual(['add a', 'add b', 'update a']);
    expect(seen).toEqual([undefined, undefined, undefined]);
    expect(informer.list('ns').map((p) => p.data)).toEqual([undefined, undefined]);
    expect(Object.isFrozen(informer.get('ns', 'a'))).toBe(true);
    // The store's own objects are never touched.
    expect(stored.data).toBe('bigger');
    await informer.stop();
  });

  it('caches fresh JSON from the list/watcher as it is, without copying it first', async () => {
    const listed = { metadata: { name: 'a', namespace: 'ns', resourceVersion: '1' } };
    const watched = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'b', namespace: 'ns', resourceVersion: '2' } };
    let emit: ((e: { type: string; object: unknown }) => void) | undefined;
    const informer = new Informer<Pod>({
      name: 'pods',
      logger: silent,
      listWatch: {
        description: 'fresh',
        freshJson: true,
        list: () => Promise.resolve({ apiVersion: 'v1', kind: 'PodList', items: [listed], resourceVersion: '1' }),
        watch: (o) => {
          emit = (e) => o.onEvent(e);
          let end!: () => void;
          return Promise.resolve({ done: new Promise<void>((r) => (end = r)), abort: () => end() });
        },
      },
    });
    await startAndSync(informer);
    await flush();
    emit!({ type: 'ADDED', object: watched });
    expect(informer.get('ns', 'a')).toBe(listed);
    expect(informer.get('ns', 'b')).toBe(watched);
    expect(listed).toMatchObject({ apiVersion: 'v1', kind: 'Pod' });
    expect(Object.isFrozen(listed) && Object.isFrozen(watched.metadata)).toBe(true);
    await informer.stop();
  });

  it('pages through a large list', async () => {
    const { lw, informer, rec } = setup({ pageSize: 2 });
    for (const n of ['a', 'b', 'c', 'd', 'e']) lw.upsert(pod(n));
    await startAndSync(informer);
    expect(lw.calls.list).toBe(3);
    expect(rec.take()).toHaveLength(5);
    await informer.stop();
  });

  it('resumes a cleanly closed watch from the last resourceVersion without relisting or losing events', async () => {
    const { lw, rec, informer, metrics } = setup();
    lw.upsert(pod('a'));
    await startAndSync(informer);
    lw.upsert(pod('b'));
    await flush();
    const rvBefore = informer.lastSyncResourceVersion()!;
    rec.take();
    lw.breakWatches();
    lw.upsert(pod('c')); // happens while no watch is open
    await flush();
    expect(rec.take()).toEqual(['add c']);
    expect(lw.calls.list).toBe(1);
    expect(lw.calls.watchResourceVersions.at(-1)).toBe(rvBefore);
    expect(metrics).toMatchObject({ relists: 0, restarts: 0, watches: lw.calls.watchResourceVersions.length });
    expect(metrics.watches).toBe(2);
    await informer.stop();
  });

  it('follows bookmarks so a resumed watch starts after them', async () => {
    const { lw, informer } = setup();
    await startAndSync(informer);
    lw.upsert(pod('x'));
    lw.delete('ns', 'x');
    lw.bookmark();
    await flush();
    expect(informer.lastSyncResourceVersion()).toBe(lw.currentResourceVersion());
    await informer.stop();
  });

  it('relists on 410 Gone and reports objects that vanished meanwhile as tombstones', async () => {
    const { lw, rec, informer, metrics, clock } = setup();
    lw.upsert(pod('a'));
    lw.upsert(pod('b'));
    await startAndSync(informer);
    rec.take();
    lw.breakWatches(new AgentError('AGENT_ERR_WATCH', 'connection reset'));
    lw.delete('ns', 'a');
    lw.upsert(pod('b', { data: 'v2' }));
    lw.upsert(pod('c'));
    lw.compact();
    await flush();
    expect(rec.events).toEqual([]); // backing off after the reset
    // 100 ms after the reset, a watch from the old version gets 410; since no event arrived after
    // the last list, the relist backs off once more (200 ms) before listing.
    await clock.tick(300);
    expect(rec.take().sort()).toEqual(['add c', 'delete a', 'update b']);
    expect(rec.tombstones).toEqual(['a']);
    expect(metrics).toMatchObject({ relists: 1, restarts: 1 });
    expect(informer.get('ns', 'b')?.data).toBe('v2');
    await informer.stop();
  });

  it('relists when the watch stream reports 410 in an ERROR event', async () => {
    const { lw, informer, metrics } = setup();
    await startAndSync(informer);
    lw.upsert(pod('a'));
    lw.sendError(410);
    await flush();
    expect(lw.calls.list).toBe(2);
    expect(metrics).toMatchObject({ relists: 1, restarts: 0 });
    await informer.stop();
  });

  it('backs off instead of spinning when a watch from a fresh list expires before any event', async () => {
    const { lw, informer, clock } = setup();
    await startAndSync(informer);
    lw.sendError(410);
    await flush();
    expect(lw.calls.list).toBe(1);
    await clock.tick(100);
    expect(lw.calls.list).toBe(2);
    await informer.stop();
  });

  it('restarts after other watch errors with growing, capped backoff', async () => {
    const { lw, informer, metrics, clock } = setup();
    await startAndSync(informer);
    for (let i = 0; i < 6; i++) lw.failNextWatch();
    lw.breakWatches(new Error('boom'));
    await flush();
    const retryTimes: number[] = [];
    const t0 = clock.now();
    for (let i = 0; i < 7; i++) {
      const before = lw.calls.watch;
      while (lw.calls.watch === before) await clock.tick(50);
      retryTimes.push(clock.now() - t0);
    }
    // attempt delays 100, 200, 400, 800, 1000, 1000, 1000 (cumulative, in 50 ms ticks)
    expect(retryTimes).toEqual([100, 300, 700, 1500, 2500, 3500, 4500]);
    expect(metrics.restarts).toBe(7);
    expect(lw.openWatches()).toBe(1);
    await informer.stop();
  });

  it('restarts a watch silent for its timeout plus a grace period, and only then', async () => {
    const { lw, informer, clock, metrics } = setup();
    // random 0: the watch asks for a 300 s server-side timeout; silence is tolerated 60 s beyond it.
    await startAndSync(informer);
    for (let i = 0; i < 10; i++) {
      await clock.tick(200_000);
      lw.upsert(pod(`p${i}`));
      await flush();
    }
    expect(lw.calls.watch).toBe(1);
    expect(metrics.restarts).toBe(0);
    await clock.tick(359_999);
    expect(lw.calls.watch).toBe(1);
    await clock.tick(1);
    await clock.tick(1000);
    expect(metrics.restarts).toBe(1);
    expect(lw.calls.watch).toBe(2);
    await informer.stop();
  });

  it('retries a failing first list and syncs once it succeeds', async () => {
    const { lw, informer, clock, metrics } = setup();
    lw.upsert(pod('a'));
    lw.failNextList();
    informer.start();
    await flush();
    expect(informer.hasSynced()).toBe(false);
    await clock.tick(100);
    await informer.waitForSync();
    expect(informer.list()).toHaveLength(1);
    expect(metrics).toMatchObject({ relists: 0, restarts: 1 });
    await informer.stop();
  });

  it('treats a handler that throws as that handler’s problem only', async () => {
    const { lw, informer, rec } = setup();
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    lw.upsert(pod('a'));
    await startAndSync(informer);
    lw.upsert(pod('b'));
    await flush();
    expect(rec.take()).toEqual(['add a', 'add b']);
    await informer.stop();
  });

  it('delivers existing objects to a handler registered late, and stops calling it once removed', async () => {
    const { lw, informer } = setup();
    lw.upsert(pod('a'));
    await startAndSync(informer);
    const late = new Recorder();
    const remove = informer.addEventHandler(late.handler);
    expect(late.take()).toEqual(['add a']);
    remove();
    lw.upsert(pod('b'));
    await flush();
    expect(late.take()).toEqual([]);
    await informer.stop();
  });

  it('replays the cache as updates on resync and relists on the relist timer', async () => {
    const { lw, informer, rec, clock, metrics } = setup({ resyncMs: 1000, relistMs: 5000 });
    lw.upsert(pod('a'));
    await startAndSync(informer);
    rec.take();
    await clock.tick(1000);
    expect(rec.take()).toEqual(['update a (resync)']);
    await clock.tick(4000);
    expect(lw.calls.list).toBe(2);
    expect(metrics.relists).toBe(1);
    expect(rec.take()).toEqual(['update a (resync)', 'update a (resync)', 'update a (resync)', 'update a (resync)']);
    await informer.stop();
    expect(clock.pending()).toBe(0);
  });

  it('rejects waitForSync when stopped or aborted before syncing', async () => {
    const { lw, informer } = setup();
    lw.failNextList();
    informer.start();
    const ac = new AbortController();
    const aborted = informer.waitForSync(ac.signal);
    ac.abort();
    await expect(aborted).rejects.toMatchObject({ code: 'AGENT_ERR_CACHE_SYNC' });
    const waiting = informer.waitForSync();
    await informer.stop();
    await expect(waiting).rejects.toMatchObject({ code: 'AGENT_ERR_CACHE_SYNC' });
    await expect(informer.waitForSync()).rejects.toMatchObject({ code: 'AGENT_ERR_CACHE_SYNC' });
  });

  it('leaves no abort listener on the signal once synced (the manager shares one across informers)', async () => {
    const { lw, informer } = setup();
    lw.upsert(pod('a'));
    const ac = new AbortController();
    const added = vi.spyOn(ac.signal, 'addEventListener');
    const removed = vi.spyOn(ac.signal, 'removeEventListener');
    const synced = informer.waitForSync(ac.signal);
    expect(added).toHaveBeenCalledTimes(1);
    await startAndSync(informer);
    await synced;
    expect(removed).toHaveBeenCalledWith('abort', added.mock.calls[0]![1]);
    await informer.stop();
  });

  it('indexes by owner uid, node name and custom indexers', async () => {
    const { lw, informer } = setup();
    informer.addIndexer('byImage', (p) => [(p as { image?: string }).image ?? 'none']);
    const owner = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'cs', uid: 'u-1', controller: true };
    lw.upsert(
      pod('a', { metadata: { name: 'a', namespace: 'ns', ownerReferences: [owner] }, spec: { nodeName: 'n1' } }),
    );
    lw.upsert(pod('b', { spec: { nodeName: 'n1' } }));
    await startAndSync(informer);
    expect(informer.byIndex('byOwnerUid', 'u-1').map((p) => p.metadata!.name)).toEqual(['a']);
    expect(informer.byIndex('byNodeName', 'n1')).toHaveLength(2);
    expect(informer.byIndex('byImage', 'none')).toHaveLength(2);
    expect(informer.list(undefined, 'app=web')).toHaveLength(1);
    await informer.stop();
  });
});

/** Starts the informer and waits until its first watch is open. */
async function startAndSync(informer: Informer<Pod>): Promise<void> {
  informer.start();
  await informer.waitForSync();
  await flush();
}
