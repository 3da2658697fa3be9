import { describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import type { WorkloadKind } from '@flotilla/api';
import { createDriftGuard, createSerial, driftOf } from './drift.js';
import { stampManifest } from './desired-decision.js';
import { createHubLinkMetrics } from './metrics.js';
import type { KubeApplier, KubeObject, ObjectRef } from './types.js';

/** An apiserver in memory: generation bumps when the spec changes, as the real one does. */
function fakeKube(): KubeApplier & { objects: Map<string, KubeObject>; applies: number } {
  const objects = new Map<string, KubeObject>();
  const key = (r: ObjectRef): string => `${r.namespace}/${r.name}`;
  const kube = {
    objects,
    applies: 0,
    apply(ref: ObjectRef, manifest: KubeObject) {
      kube.applies++;
      const prev = objects.get(key(ref));
      const changed = JSON.stringify(prev?.spec) !== JSON.stringify(manifest.spec);
      const generation = (prev?.metadata?.generation ?? 0) + (changed || !prev ? 1 : 0);
      const obj = structuredClone({ ...manifest, metadata: { ...manifest.metadata, generation } });
      objects.set(key(ref), obj);
      return Promise.resolve(structuredClone(obj));
    },
    get: (ref: ObjectRef) => Promise.resolve(structuredClone(objects.get(key(ref)))),
    delete: (ref: ObjectRef) => Promise.resolve(void objects.delete(key(ref))),
    listManaged: (_kind: WorkloadKind) => Promise.resolve([...objects.values()].map((o) => structuredClone(o))),
    serverVersion: () => Promise.resolve('v1.36.0'),
  };
  return kube;
}

const ref: ObjectRef = { kind: 'CloneSet', namespace: 'apps', name: 'web' };
const manifest = (replicas: number, generation: number): KubeObject =>
  stampManifest({ kind: 'CloneSet', metadata: { name: 'web', namespace: 'apps' }, spec: { replicas } }, generation);

function setup(): {
  kube: ReturnType<typeof fakeKube>;
  guard: ReturnType<typeof createDriftGuard>;
  metrics: ReturnType<typeof createHubLinkMetrics>;
} {
  const kube = fakeKube();
  const metrics = createHubLinkMetrics(new Registry());
  const guard = createDriftGuard({ kube, serial: createSerial(), logger: pino({ level: 'silent' }), metrics });
  return { kube, guard, metrics };
}

describe('drift guard', () => {
  it('leaves an object that is as applied alone', async () => {
    const { kube, guard } = setup();
    await guard.apply(ref, manifest(2, 1), 1);
    await guard.check('CloneSet', await kube.listManaged('CloneSet'));
    expect(kube.applies).toBe(1);
  });

  it.each([
    ['deleted', (o: Map<string, KubeObject>) => o.delete('apps/web'), 'gone'],
    [
      'spec changed',
      (o: Map<string, KubeObject>) => {
        const obj = o.get('apps/web')!;
        o.set('apps/web', { ...obj, spec: { replicas: 7 }, metadata: { ...obj.metadata, generation: 2 } });
      },
      'spec-changed',
    ],
  ])('re-applies an object %s behind the hub', async (_what, tamper, reason) => {
    const { kube, guard, metrics } = setup();
    await guard.apply(ref, manifest(2, 1), 1);
    tamper(kube.objects);
    await guard.check('CloneSet', await kube.listManaged('CloneSet'));
    expect(kube.objects.get('apps/web')?.spec).toEqual({ replicas: 2 });
    expect(kube.objects.get('apps/web')?.metadata?.labels?.['flotilla.io/managed-by']).toBe('hub');
    expect((await metrics.driftRepaired.get()).values).toEqual([
      expect.objectContaining({ labels: { reason }, value: 1 }),
    ]);
    // Repaired means as applied: the next pass does nothing.
    const applies = kube.applies;
    await guard.check('CloneSet', await kube.listManaged('CloneSet'));
    expect(kube.applies).toBe(applies);
  });

  it('releases an object whose managed-by label was removed: no repair, no longer guarded', async () => {
    const { kube, guard, metrics } = setup();
    await guard.apply(ref, manifest(2, 1), 1);
    const obj = kube.objects.get('apps/web')!;
    kube.objects.set('apps/web', { ...obj, spec: { replicas: 9 }, metadata: { ...obj.metadata, labels: {} } });
    const applies = kube.applies;
    await guard.check('CloneSet', await kube.listManaged('CloneSet'));
    expect(kube.applies).toBe(applies);
    expect(kube.objects.get('apps/web')?.metadata?.labels).toEqual({});
    expect(kube.objects.get('apps/web')?.spec).toEqual({ replicas: 9 });
    expect(guard.size()).toBe(0);
    expect((await metrics.released.get()).values[0]?.value).toBe(1);
    expect((await metrics.driftRepaired.get()).values).toEqual([]);
    // Released for good: the label coming back later is not drift either.
    await guard.check('CloneSet', await kube.listManaged('CloneSet'));
    expect(kube.applies).toBe(applies);
  });

  it('never writes an older manifest over a newer one applied since the listing', async () => {
    const { kube, guard } = setup();
    await guard.apply(ref, manifest(2, 1), 1);
    kube.objects.delete('apps/web');
    const staleListing = await kube.listManaged('CloneSet');
    await guard.apply(ref, manifest(3, 2), 2);
    await guard.check('CloneSet', staleListing);
    expect(kube.objects.get('apps/web')?.spec).toEqual({ replicas: 3 });
  });

  it('forgets pruned objects', async () => {
    const { kube, guard } = setup();
    await guard.apply(ref, manifest(2, 1), 1);
    await guard.delete(ref);
    await guard.check('CloneSet', []);
    expect(kube.objects.size).toBe(0);
    expect(guard.size()).toBe(0);
  });

  it('forgets an object on request, leaving whatever is there alone', async () => {
    const { kube, guard } = setup();
    await guard.apply(ref, manifest(2, 1), 1);
    kube.objects.delete('apps/web');
    guard.forget(ref);
    await guard.check('CloneSet', []);
    expect(kube.objects.size).toBe(0);
  });

  it('tells the kinds of drift apart', () => {
    const applied = { ref, manifest: manifest(2, 1), generation: 1, kubeGeneration: 1 };
    const obj = { ...manifest(2, 1), metadata: { ...manifest(2, 1).metadata, generation: 1 } };
    expect(driftOf(applied, obj)).toBeUndefined();
    expect(driftOf(applied, undefined)).toBe('gone');
    expect(driftOf(applied, { ...obj, metadata: { ...obj.metadata, generation: 3 } })).toBe('spec-changed');
    expect(driftOf(applied, manifest(2, 5))).toBe('generation-changed');
  });
});

describe('createSerial', () => {
  it('runs tasks one at a time in order, past failures', async () => {
    const serial = createSerial();
    const log: string[] = [];
    const slow = serial.run(async () => {
      await new Promise((r) => setTimeout(r, 20));
      log.push('a');
    });
    const failing = serial.run(() => Promise.reject(new Error('b')));
    const last = serial.run(() => Promise.resolve(log.push('c')));
    await slow;
    await expect(failing).rejects.toThrow('b');
    await last;
    expect(log).toEqual(['a', 'c']);
  });
});
