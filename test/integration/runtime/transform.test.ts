/**
 * The manager's informers against a real apiserver cache objects without managedFields, and a
 * controller that updates a cached copy (PUT, as the CloneSet controller does for in-place
 * updates) leaves the server's managedFields intact: the apiserver keeps them when an update
 * carries none.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { Manager, resourcePath, Resources, RuntimeMetrics, type KubeObject } from '@flotilla/agent/runtime';
import { eventually, simplePod, testNamespace } from '../helpers/kube.js';
import { runtimeEnv } from './support.js';

interface Pod extends KubeObject {
  metadata: NonNullable<KubeObject['metadata']>;
  spec: { containers: { name: string; image: string }[] };
}

function managers(pod: Pod): string[] {
  return ((pod.metadata.managedFields ?? []) as { manager?: string }[]).map((f) => f.manager ?? '');
}

const env = runtimeEnv();
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

describe('informer transforms against a real apiserver', () => {
  it('caches pods without managedFields; a PUT of a cached copy keeps them on the server', async () => {
    const ns = await testNamespace(env.k, 'transform');
    await env.k.core.createNamespacedPod({ namespace: ns, body: simplePod('p', 'registry.local/app:v1') });
    const manager = new Manager({
      logger: env.logger,
      metrics: new RuntimeMetrics(new Registry()),
      listWatcherFor: (resource, options) => env.listWatcher(resource, options),
    });
    const pods = manager.informer<Pod>({ resource: Resources.pods, namespace: ns });
    const done = manager.start();
    stops.push(async () => {
      await manager.stop('test over');
      await done;
    });
    const at = resourcePath(Resources.pods, ns, 'p');
    const server = await env.rest.request<Pod>({ method: 'GET', path: at });
    expect(server.metadata.managedFields?.length).toBeGreaterThan(0);
    const cached = await eventually('pod cached', () => Promise.resolve(pods.get(ns, 'p')));
    expect(cached.metadata).not.toHaveProperty('managedFields');
    expect(cached.metadata.uid).toBe(server.metadata.uid);

    // A full update from the cached copy, as an in-place image update is written.
    const copy = structuredClone(cached);
    copy.metadata.labels = { ...copy.metadata.labels, touched: 'yes' };
    copy.spec.containers[0]!.image = 'registry.local/app:v2';
    await env.rest.request<Pod>({ method: 'PUT', path: at, body: copy });
    const after = await env.rest.request<Pod>({ method: 'GET', path: at });
    expect(managers(after)).toEqual(expect.arrayContaining(managers(server)));
    expect(after.spec.containers[0]!.image).toBe('registry.local/app:v2');
    const updated = await eventually('update cached', () =>
      Promise.resolve(pods.get(ns, 'p')?.metadata.labels?.touched === 'yes' && pods.get(ns, 'p')),
    );
    expect(updated.metadata).not.toHaveProperty('managedFields');
  });
});
