/**
 * The runtime's informer against a real apiserver: list then watch, add/update/delete, plain JSON
 * objects, selectors, and no lost events across a dropped watch connection or a 410 relist.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { Informer, Resources, RuntimeMetrics, type DeleteInfo, type KubeObject } from '@flotilla/agent/runtime';
import { eventually, mergePatch, simplePod, testNamespace } from '../helpers/kube.js';
import { ControlledListWatcher, metricValue, runtimeEnv } from './support.js';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const env = runtimeEnv();
const { k } = env;
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

/** Records handler calls as `add name`, `update name`, `delete name` (`delete? name` for tombstones). */
function record<T extends KubeObject>(informer: Informer<T>): string[] {
  const seen: string[] = [];
  informer.addEventHandler({
    onAdd: (o) => seen.push(`add ${o.metadata?.name}`),
    onUpdate: (old, o) => {
      if (old.metadata?.resourceVersion !== o.metadata?.resourceVersion) seen.push(`update ${o.metadata?.name}`);
    },
    onDelete: (o, info: DeleteInfo) =>
      seen.push(`${info.finalStateUnknown ? 'delete?' : 'delete'} ${o.metadata?.name}`),
  });
  return seen;
}

/** Drops the CA bundle configmap the controller manager puts into every namespace. */
function ours(names: string[]): string[] {
  return names.filter((n) => !n.endsWith('kube-root-ca.crt'));
}

function start<T extends KubeObject>(informer: Informer<T>): Informer<T> {
  informer.start();
  stops.push(() => informer.stop());
  return informer;
}

async function createConfigMap(ns: string, name: string, data: Record<string, string> = {}, labels = {}) {
  await k.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name, labels }, data } });
}

describe('Informer against a real apiserver', () => {
  it('lists and watches configmaps and pods: adds, updates and deletes, as plain JSON', async () => {
    const ns = await testNamespace(k, 'inf-basic');
    await createConfigMap(ns, 'before', { a: '1' });
    await createConfigMap(ns, 'before-2');
    const cms = start(
      new Informer<ConfigMap>({
        name: 'cms',
        listWatch: env.listWatcher(Resources.configMaps, { namespace: ns }),
        logger: env.logger,
        pageSize: 1, // pages through continue tokens
      }),
    );
    const pods = start(
      new Informer<KubeObject>({
        name: 'pods',
        listWatch: env.listWatcher(Resources.pods, { namespace: ns }),
        logger: env.logger,
      }),
    );
    const seen = record(cms);
    const podsSeen = record(pods);
    await Promise.all([cms.waitForSync(), pods.waitForSync()]);
    expect(seen).toContain('add before');

    await createConfigMap(ns, 'after', { b: '1' });
    await k.core.patchNamespacedConfigMap({ name: 'after', namespace: ns, body: { data: { b: '2' } } }, mergePatch);
    await k.core.deleteNamespacedConfigMap({ name: 'before', namespace: ns });
    await k.core.createNamespacedPod({ namespace: ns, body: simplePod('p', 'registry.local/app:v1') });
    await eventually('configmap events', async () =>
      Promise.resolve(seen.includes('delete before') && seen.includes('update after')),
    );
    await eventually('pod add', async () => Promise.resolve(podsSeen.includes('add p')));
    expect(ours(seen)).toEqual(['add before', 'add before-2', 'add after', 'update after', 'delete before']);

    const listed = cms.get(ns, 'after')!;
    expect(listed.data).toEqual({ b: '2' });
    expect(cms.get(ns, 'before')).toBeUndefined();
    // Same plain shape from list and watch: apiVersion/kind set, timestamps as strings, frozen.
    for (const obj of [...cms.list(), ...pods.list()]) {
      expect(obj.apiVersion).toBe('v1');
      expect(['ConfigMap', 'Pod']).toContain(obj.kind);
      expect(typeof obj.metadata?.creationTimestamp).toBe('string');
      expect(Object.isFrozen(obj.metadata)).toBe(true);
    }
  });

  it('passes label and field selectors to the server', async () => {
    const ns = await testNamespace(k, 'inf-sel');
    await createConfigMap(ns, 'web', {}, { app: 'web' });
    await createConfigMap(ns, 'db', {}, { app: 'db' });
    const byLabel = start(
      new Informer({
        name: 'web',
        listWatch: env.listWatcher(Resources.configMaps, { namespace: ns, labelSelector: 'app=web' }),
        logger: env.logger,
      }),
    );
    const byField = start(
      new Informer({
        name: 'db',
        listWatch: env.listWatcher(Resources.configMaps, { namespace: ns, fieldSelector: 'metadata.name=db' }),
        logger: env.logger,
      }),
    );
    await Promise.all([byLabel.waitForSync(), byField.waitForSync()]);
    expect(byLabel.keys()).toEqual([`${ns}/web`]);
    expect(byField.keys()).toEqual([`${ns}/db`]);
    await createConfigMap(ns, 'web-2', {}, { app: 'web' });
    await eventually('web-2 seen', async () => Promise.resolve(byLabel.keys().length === 2));
    expect(byField.keys()).toEqual([`${ns}/db`]);
  });

  it('resumes after a dropped watch connection without losing events made while it was down', async () => {
    const ns = await testNamespace(k, 'inf-drop');
    const registry = new Registry();
    const lw = new ControlledListWatcher(env.listWatcher(Resources.configMaps, { namespace: ns }));
    const informer = start(
      new Informer<ConfigMap>({
        name: 'cms',
        listWatch: lw,
        logger: env.logger,
        metrics: new RuntimeMetrics(registry).informer('cms'),
        backoff: { initialMs: 1500, maxMs: 1500, jitter: 0 },
      }),
    );
    const seen = record(informer);
    await informer.waitForSync();
    await createConfigMap(ns, 'one');
    await eventually('one seen', async () => Promise.resolve(seen.includes('add one')));

    lw.breakWatch();
    // While the informer backs off, the cluster changes.
    await createConfigMap(ns, 'two');
    await k.core.deleteNamespacedConfigMap({ name: 'one', namespace: ns });
    await eventually('events from the gap', async () =>
      Promise.resolve(seen.includes('add two') && seen.includes('delete one')),
    );
    expect(lw.lists).toBe(1); // resumed from its resourceVersion, no relist needed
    expect(lw.watchResourceVersions).toHaveLength(2);
    expect(await metricValue(registry, 'flotilla_agent_informer_restarts_total', { informer: 'cms' })).toBe(1);
  });

  it('resumes from its resourceVersion when the server ends a watch at its timeout', async () => {
    const ns = await testNamespace(k, 'inf-timeout');
    const lw = new ControlledListWatcher(env.listWatcher(Resources.configMaps, { namespace: ns }));
    const informer = start(
      new Informer<ConfigMap>({ name: 'cms', listWatch: lw, logger: env.logger, watchTimeoutSeconds: 1 }),
    );
    const seen = record(informer);
    await informer.waitForSync();
    await eventually('a watch to time out and reopen', async () =>
      Promise.resolve(lw.watchResourceVersions.length >= 3),
    );
    await createConfigMap(ns, 'after-timeouts');
    await eventually('event after reopening', async () => Promise.resolve(seen.includes('add after-timeouts')));
    expect(lw.lists).toBe(1);
  });

  it('relists after 410 Gone and reports objects deleted meanwhile as tombstones', async () => {
    const ns = await testNamespace(k, 'inf-gone');
    const registry = new Registry();
    const lw = new ControlledListWatcher(env.listWatcher(Resources.configMaps, { namespace: ns }));
    const informer = start(
      new Informer<ConfigMap>({
        name: 'cms',
        listWatch: lw,
        logger: env.logger,
        metrics: new RuntimeMetrics(registry).informer('cms'),
        backoff: { initialMs: 1500, maxMs: 1500, jitter: 0 },
      }),
    );
    const seen = record(informer);
    await informer.waitForSync();
    await createConfigMap(ns, 'doomed');
    await createConfigMap(ns, 'changed', { v: '1' });
    await eventually('both seen', async () =>
      Promise.resolve(informer.get(ns, 'doomed') && informer.get(ns, 'changed')),
    );

    // Cut the watch; the next one finds its resourceVersion expired.
    lw.expireNextWatch();
    lw.breakWatch();
    await k.core.deleteNamespacedConfigMap({ name: 'doomed', namespace: ns });
    await k.core.patchNamespacedConfigMap({ name: 'changed', namespace: ns, body: { data: { v: '2' } } }, mergePatch);
    await createConfigMap(ns, 'born');
    await eventually('relist', async () => Promise.resolve(lw.lists === 2 && seen.includes('add born')));
    expect(seen).toContain('delete? doomed');
    expect(seen).toContain('update changed');
    expect(informer.get(ns, 'changed')?.data).toEqual({ v: '2' });
    expect(ours(informer.keys()).sort()).toEqual([`${ns}/born`, `${ns}/changed`]);
    expect(await metricValue(registry, 'flotilla_agent_informer_relists_total', { informer: 'cms' })).toBe(1);
    // The informer keeps watching after the relist.
    await createConfigMap(ns, 'later');
    await eventually('later seen', async () => Promise.resolve(seen.includes('add later')));
  });

  it('receives objects larger than a TLS record with multi-byte text intact (watch lines span chunks)', async () => {
    const ns = await testNamespace(k, 'inf-big');
    const informer = start(
      new Informer<ConfigMap>({
        name: 'cms',
        listWatch: env.listWatcher(Resources.configMaps, { namespace: ns }),
        logger: env.logger,
      }),
    );
    await informer.waitForSync();
    // 2-, 3- and 4-byte characters, 200 KB in all: many chunks, cut inside characters.
    const text = 'grüße 日本語 🚀 '.repeat(8000);
    await createConfigMap(ns, 'big', { text });
    await eventually('big configmap seen', async () => Promise.resolve(informer.get(ns, 'big')));
    expect(informer.get(ns, 'big')?.data?.text).toBe(text);
  });
});
