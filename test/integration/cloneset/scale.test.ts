/**
 * CloneSet scaling against a real apiserver with kwok nodes: pods and their markings, revisions,
 * scale in order, minReadySeconds pacing, specified deletes with a preDelete hook, podsToDelete.
 * Our versions of OpenKruise's "scales in normal cases", "scales with minReadySeconds and
 * scaleStrategy", "pods should be ready when paused=true" and "specific delete a Pod".
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cloneSetRevision, defaultCloneSet } from '@flotilla/api';
import { eventually } from '../helpers/kube.js';
import {
  cloneSet,
  condition,
  createCloneSet,
  env,
  events,
  getCloneSet,
  isReady,
  livePods,
  namespace,
  patchCloneSet,
  patchPod,
  revisions,
  settled,
  startController,
  statusReaches,
  type RunningController,
} from './harness.js';

const e = env();
const running: RunningController[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

async function setup(prefix: string): Promise<string> {
  const ns = await namespace(e, prefix);
  running.push(await startController(e, ns));
  return ns;
}

describe('CloneSet scaling', () => {
  it('scales out: pods named <cs>-<id> with revision labels, instance id, lifecycle, owner and readiness gate', async () => {
    const ns = await setup('cs-scale');
    const created = await createCloneSet(e, ns, cloneSet('web', { replicas: 3 }));
    const cs = await settled(e, ns, 'web', 3);

    // Revision name and hash are OpenKruise's for the defaulted CloneSet.
    const expected = cloneSetRevision(defaultCloneSet(created), 0);
    expect(cs.status).toMatchObject({
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      updatedReplicas: 3,
      updatedReadyReplicas: 3,
      updatedAvailableReplicas: 3,
      expectedUpdatedReplicas: 3,
      updateRevision: expected.name,
      currentRevision: expected.name,
      collisionCount: 0,
      labelSelector: 'app=web',
      observedGeneration: 1,
    });
    const [revision] = await revisions(e, ns);
    expect(revision?.metadata.name).toBe(expected.name);
    expect(revision?.metadata.labels).toEqual({ app: 'web', 'controller.kubernetes.io/hash': expected.hash });
    expect(revision?.revision).toBe(1);

    const pods = await livePods(e, ns, 'web');
    expect(pods).toHaveLength(3);
    for (const p of pods) {
      const id = p.metadata.labels!['apps.kruise.io/cloneset-instance-id']!;
      expect(id).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      expect(p.metadata.name).toBe(`web-${id}`);
      expect(p.metadata.generateName).toBe('web-');
      expect(p.metadata.labels).toMatchObject({
        'controller-revision-hash': expected.name,
        'pod-template-hash': expected.hash,
        'lifecycle.apps.kruise.io/state': 'Normal',
      });
      expect(p.metadata.annotations?.['lifecycle.apps.kruise.io/timestamp']).toBeTruthy();
      expect(p.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: 'CloneSet', name: 'web', uid: cs.metadata!.uid, controller: true }),
      ]);
      expect(p.spec.readinessGates).toEqual([{ conditionType: 'InPlaceUpdateReady' }]);
      expect(condition(p, 'InPlaceUpdateReady')).toBe('True');
      expect(isReady(p)).toBe(true);
    }
    expect((await events(e, ns, 'web')).filter((ev) => ev.reason === 'SuccessfulCreate')).toHaveLength(3);
  });

  it('scales in to the desired count, deleting the pod with the lowest deletion cost first', async () => {
    const ns = await setup('cs-scalein');
    await createCloneSet(e, ns, cloneSet('web', { replicas: 3 }));
    await settled(e, ns, 'web', 3);
    const [cheap, ...rest] = await livePods(e, ns, 'web');
    await patchPod(e, ns, cheap!.metadata.name, {
      metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '-100' } },
    });
    for (const p of rest) {
      await patchPod(e, ns, p.metadata.name, {
        metadata: { annotations: { 'controller.kubernetes.io/pod-deletion-cost': '100' } },
      });
    }
    await patchCloneSet(e, ns, 'web', { spec: { replicas: 2 } });
    await settled(e, ns, 'web', 2);
    const left = (await livePods(e, ns, 'web')).map((p) => p.metadata.name).sort();
    expect(left).toEqual(rest.map((p) => p.metadata.name).sort());

    await patchCloneSet(e, ns, 'web', { spec: { replicas: 0 } });
    await statusReaches(e, ns, 'web', 'no pods', (s) => s.replicas === 0);
    await eventually('pods gone', async () => (await livePods(e, ns, 'web')).length === 0);
  });

  it('pods become ready while paused (paused only stops updates)', async () => {
    const ns = await setup('cs-paused');
    await createCloneSet(e, ns, cloneSet('web', { replicas: 2, updateStrategy: { paused: true } }));
    await settled(e, ns, 'web', 2);
  });

  it('minReadySeconds with scaleStrategy.maxUnavailable=1 creates each pod minReadySeconds after the previous became ready', async () => {
    const ns = await setup('cs-minready');
    const minReadySeconds = 3;
    await createCloneSet(
      e,
      ns,
      cloneSet('web', { replicas: 3, minReadySeconds, scaleStrategy: { maxUnavailable: 1 } }),
    );
    await statusReaches(e, ns, 'web', '3 available', (s) => s.availableReplicas === 3, 60_000);
    const pods = (await livePods(e, ns, 'web')).sort(
      (a, b) => Date.parse(a.metadata.creationTimestamp!) - Date.parse(b.metadata.creationTimestamp!),
    );
    const readyAt = (p: (typeof pods)[number]): number =>
      Date.parse(p.status!.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime!);
    for (let i = 1; i < pods.length; i++) {
      const gap = (Date.parse(pods[i]!.metadata.creationTimestamp!) - readyAt(pods[i - 1]!)) / 1000;
      expect(gap).toBeGreaterThanOrEqual(minReadySeconds);
      expect(gap).toBeLessThanOrEqual(minReadySeconds + 2);
    }
    const limited = (await events(e, ns, 'web')).filter((ev) => ev.reason === 'ScaleUpLimited');
    expect(limited[0]?.message).toBe('scaleUp is limited because of scaleStrategy.maxUnavailable, limit: 1');
  });

  it('specified delete with a preDelete hook: PreparingDelete, no replacement, then deleted and replaced once unhooked', async () => {
    const ns = await setup('cs-predelete');
    const hook = { 'example.com/hold': 'true' };
    const cs = cloneSet('web', {
      replicas: 2,
      lifecycle: { preDelete: { labelsHandler: hook } },
    });
    cs.spec.template.metadata!.labels = { ...cs.spec.template.metadata!.labels, ...hook };
    await createCloneSet(e, ns, cs);
    await settled(e, ns, 'web', 2);
    const [victim] = await livePods(e, ns, 'web');
    const name = victim!.metadata.name;
    await patchPod(e, ns, name, { metadata: { labels: { 'apps.kruise.io/specified-delete': 'true' } } });

    await eventually('victim PreparingDelete', async () => {
      const p = (await livePods(e, ns, 'web')).find((x) => x.metadata.name === name);
      return p?.metadata.labels?.['lifecycle.apps.kruise.io/state'] === 'PreparingDelete';
    });
    // Held by the hook: still there, and no replacement is created meanwhile.
    await new Promise((r) => setTimeout(r, 1500));
    expect((await livePods(e, ns, 'web')).map((p) => p.metadata.name)).toContain(name);
    expect(await livePods(e, ns, 'web')).toHaveLength(2);
    expect((await getCloneSet(e, ns, 'web')).status?.availableReplicas).toBe(1);

    await patchPod(e, ns, name, { metadata: { labels: { 'example.com/hold': null } } });
    await eventually('victim deleted and replaced', async () => {
      const names = (await livePods(e, ns, 'web')).map((p) => p.metadata.name);
      return !names.includes(name) && names.length === 2;
    });
    await settled(e, ns, 'web', 2);
  });

  it('podsToDelete deletes the named pod, replaces it, and the name is pruned from the list', async () => {
    const ns = await setup('cs-podstodelete');
    await createCloneSet(e, ns, cloneSet('web', { replicas: 2 }));
    await settled(e, ns, 'web', 2);
    const [victim] = await livePods(e, ns, 'web');
    await patchCloneSet(e, ns, 'web', { spec: { scaleStrategy: { podsToDelete: [victim!.metadata.name] } } });
    await eventually('podsToDelete pruned', async () => {
      const cs = await getCloneSet(e, ns, 'web');
      return (cs.spec.scaleStrategy?.podsToDelete ?? []).length === 0;
    });
    const names = (await settled(e, ns, 'web', 2)) && (await livePods(e, ns, 'web')).map((p) => p.metadata.name);
    expect(names).not.toContain(victim!.metadata.name);
    const deleted = (await events(e, ns, 'web')).filter((ev) => ev.reason === 'SuccessfulDelete');
    expect(deleted.map((ev) => ev.message)).toContain(`succeed to delete pod ${victim!.metadata.name}`);
  });
});
