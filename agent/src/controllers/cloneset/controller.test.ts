import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../runtime/clock.js';
import type { ReconcileContext } from '../../runtime/controller.js';
import type { EventRecorder } from '../../runtime/events.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { Informer } from '../../runtime/informer.js';
import type { KubeObject } from '../../runtime/kube-object.js';
import { FakeListWatcher } from '../../runtime/testing/fake-list-watch.js';
import { cloneSetReconciler } from './controller.js';
import { FakeClient } from './testing/fake-client.js';
import { pod } from './testing/fixtures.js';
import type { ControllerRevision, PersistentVolumeClaim, Pod } from '../../kube/types.js';
import type { CloneSet } from './types.js';

const log = pino({ level: 'silent' });
const informers: Informer<KubeObject>[] = [];
afterEach(async () => {
  await Promise.all(informers.splice(0).map((i) => i.stop()));
});

async function informer<T extends KubeObject>(lw: FakeListWatcher): Promise<Informer<T>> {
  const i = new Informer<T>({ name: lw.description, listWatch: lw, logger: log });
  informers.push(i as unknown as Informer<KubeObject>);
  i.start();
  await i.waitForSync();
  return i;
}

function cloneSet(replicas: number, selector = 'web'): CloneSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'cs', namespace: 'ns', uid: 'cs-uid', generation: 1 },
    spec: {
      replicas,
      selector: { matchLabels: { app: selector } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'app:v1' }] } },
    },
  };
}

async function fixture(cs: CloneSet) {
  const sets = new FakeListWatcher('CloneSetList', 'apps.kruise.io/v1alpha1');
  const podStore = new FakeListWatcher();
  sets.upsert(cs);
  const client = new FakeClient();
  const events: string[] = [];
  const scaleExpectations = new ScaleExpectations();
  const pods = await informer<Pod>(podStore);
  const reconcile = cloneSetReconciler({
    cloneSets: await informer<CloneSet>(sets),
    pods,
    claims: await informer<PersistentVolumeClaim>(new FakeListWatcher('PersistentVolumeClaimList')),
    revisions: await informer<ControllerRevision>(new FakeListWatcher('ControllerRevisionList', 'apps/v1')),
    client,
    scaleExpectations,
    // Our status writes are never fed back into this fake cache: let those expectations lapse at once.
    resourceVersions: new ResourceVersionExpectations({ timeoutMs: 0 }),
    events: {
      event: (_o: unknown, type: string, reason: string, msg: string) => events.push(`${type} ${reason}: ${msg}`),
    } as unknown as EventRecorder,
    clock: systemClock,
    options: {
      maxConcurrentCreates: 8,
      maxConcurrentWrites: 8,
      expectationRecheckMs: 1000,
      plan: {},
      inPlaceVerticalScaling: false,
    },
  });
  const ctx = { log, name: 'cs', namespace: 'ns', signal: new AbortController().signal } as ReconcileContext;
  // The informer tells the expectations what it sees, as index.ts wires it.
  pods.addEventHandler({ onAdd: (p) => scaleExpectations.creationObserved('ns/cs', p.metadata.name) });
  return { client, events, podStore, scaleExpectations, run: () => reconcile('ns/cs', ctx) };
}

describe('cloneSetReconciler', () => {
  it('never creates more pods than replicas while the cache lags behind its own creations', async () => {
    const f = await fixture(cloneSet(3));
    await f.run();
    expect(f.client.ops('createPod')).toHaveLength(3);
    // The cache has not shown the pods yet: the expectations hold the next reconciles back.
    expect(f.scaleExpectations.pending('ns/cs').creations).toHaveLength(3);
    expect(await f.run()).toEqual({ requeueAfter: 1000 });
    expect(await f.run()).toEqual({ requeueAfter: 1000 });
    expect(f.client.ops('createPod')).toHaveLength(3);
    // Now the watch delivers them: nothing more to create.
    for (const call of f.client.calls.filter((c) => c.op === 'createPod')) f.podStore.upsert(call.body as Pod);
    await new Promise((r) => setTimeout(r, 20));
    expect(f.scaleExpectations.satisfied('ns/cs')).toBe(true);
    expect(await f.run()).toBeUndefined();
    expect(f.client.ops('createPod')).toHaveLength(3);
  });

  it('writes status with observedGeneration, revisions and counts, and the revision before any pod', async () => {
    const f = await fixture(cloneSet(2));
    await f.run();
    expect(f.client.calls[0]?.op).toBe('createRevision');
    const status = f.client.calls.find((c) => c.op === 'updateStatus')?.body;
    expect(status).toMatchObject({
      observedGeneration: 1,
      replicas: 0,
      expectedUpdatedReplicas: 2,
      collisionCount: 0,
      labelSelector: 'app=web',
    });
  });

  it('an invalid CloneSet gets FailedScale naming the field and a Warning event, and no pods', async () => {
    const f = await fixture(cloneSet(2, 'other'));
    await f.run();
    expect(f.client.ops('createPod')).toEqual([]);
    const status = f.client.calls.find((c) => c.op === 'updateStatus')?.body as {
      conditions: { type: string; message: string }[];
    };
    expect(status.conditions[0]).toMatchObject({
      type: 'FailedScale',
      message: expect.stringContaining('spec.template.metadata.labels'),
    });
    expect(f.events.some((e) => e.startsWith('Warning FailedValidation: invalid CloneSet'))).toBe(true);
  });

  describe('updateStrategy.type OnDelete, as OpenKruise v1.9.0 runs it', () => {
    const owned = (name: string): Pod => {
      // At a revision that is no longer the CloneSet's, lacking InPlaceUpdateReady, in no lifecycle state.
      const p = pod({ name, revision: 'cs-old' });
      p.metadata.ownerReferences = [
        { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'cs', uid: 'cs-uid', controller: true },
      ];
      return p;
    };
    const withType = (replicas: number, type: string): CloneSet => {
      const cs = cloneSet(replicas);
      cs.spec.updateStrategy = { type };
      return cs;
    };
    const podWrites = (f: { client: FakeClient }): string[] =>
      f.client.ops().filter((op) => /^(updatePod|patchPod|deletePod)/.test(op));

    it('ReCreate (for contrast) refreshes and replaces old pods', async () => {
      const f = await fixture(withType(2, 'ReCreate'));
      f.podStore.upsert(owned('a'));
      f.podStore.upsert(owned('b'));
      await new Promise((r) => setTimeout(r, 20));
      await f.run();
      expect(podWrites(f)).not.toEqual([]);
    });

    it('is accepted by the controller (its webhook refuses it) and leaves every old pod untouched', async () => {
      const f = await fixture(withType(2, 'OnDelete'));
      f.podStore.upsert(owned('a'));
      f.podStore.upsert(owned('b'));
      await new Promise((r) => setTimeout(r, 20));
      await f.run();
      await f.run();
      expect(podWrites(f)).toEqual([]);
      expect(f.events.filter((e) => e.startsWith('Warning'))).toEqual([]);
      const status = f.client.calls.find((c) => c.op === 'updateStatus')?.body as {
        updatedReplicas: number;
        conditions?: unknown[];
      };
      expect(status.updatedReplicas).toBe(0);
      expect(status.conditions ?? []).toEqual([]);
    });

    it('still scales: a missing pod is created at the update revision', async () => {
      const f = await fixture(withType(3, 'OnDelete'));
      f.podStore.upsert(owned('a'));
      f.podStore.upsert(owned('b'));
      await new Promise((r) => setTimeout(r, 20));
      await f.run();
      const created = f.client.calls.filter((c) => c.op === 'createPod').map((c) => c.body as Pod);
      expect(created).toHaveLength(1);
      const revision = f.client.calls.find((c) => c.op === 'createRevision')?.name;
      expect(created[0]?.metadata.labels?.['controller-revision-hash']).toBe(revision);
      expect(podWrites(f)).toEqual([]);
    });
  });
});
