/**
 * CloneSet updates against a real apiserver with kwok nodes (an in-place image change there keeps
 * the UID, reports a new imageID and bumps restartCount, as a kubelet would). Our versions of
 * OpenKruise's "in-place update images", "two container images with priorities",
 * `partition="99%", replicas=4` and "recreate" scenarios, plus surge, grace, hooks, rollback,
 * paused, a numeric partition, order and weight priorities and the revision history limit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CloneSet } from '@flotilla/api';
import { Watch } from '@kubernetes/client-node';
import { eventually } from '../helpers/kube.js';
import {
  cloneSet,
  condition,
  createCloneSet,
  env,
  events,
  getCloneSet,
  inPlaceState,
  livePods,
  namespace,
  patchCloneSet,
  patchPod,
  revisions,
  settled,
  startController,
  statusReaches,
  type Pod,
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

const uids = (pods: Pod[]): string[] => pods.map((p) => p.metadata.uid!).sort();
const image = (v: string): unknown => ({ spec: { template: { spec: { containers: [{ name: 'main', image: v }] } } } });

/**
 * Follows the namespace's pods through a watch, so every intermediate state is seen (sampling
 * misses a surge pod that lives for less than a sample period on a fast machine). `record()`
 * starts collecting the live (not terminating) pods after each change; `stop()` returns them.
 */
async function trackPods(ns: string): Promise<{ live(): Pod[]; record(): void; stop(): Pod[][] }> {
  const pods = new Map<string, Pod>();
  const states: Pod[][] = [];
  let recording = false;
  const live = (): Pod[] => [...pods.values()].filter((p) => !p.metadata.deletionTimestamp);
  const watch = await new Watch(e.k.kc).watch(
    `/api/v1/namespaces/${ns}/pods`,
    {},
    (type: string, obj: Pod) => {
      if (type === 'DELETED') pods.delete(obj.metadata.uid!);
      else if (type === 'ADDED' || type === 'MODIFIED') pods.set(obj.metadata.uid!, obj);
      if (recording) states.push(live());
    },
    () => undefined,
  );
  return {
    live,
    record: () => (recording = true),
    stop: () => {
      watch.abort();
      return states;
    },
  };
}

/**
 * Labels three pods `rank=<ranks[i]>`, updates them in place one at a time under
 * `priorityStrategy`, and resolves the ranks in the order the pods were updated.
 */
async function updateOrder(
  prefix: string,
  priorityStrategy: NonNullable<CloneSet['spec']['updateStrategy']>['priorityStrategy'],
  ranks: string[],
): Promise<string[]> {
  const ns = await setup(prefix);
  await createCloneSet(
    e,
    ns,
    cloneSet('web', {
      replicas: ranks.length,
      // minReadySeconds spaces the updates at least a second apart, so their second-precision
      // timestamps tell the order.
      minReadySeconds: 1,
      updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: 1, priorityStrategy },
    }),
  );
  await settled(e, ns, 'web', ranks.length);
  const pods = await livePods(e, ns, 'web');
  for (const [i, p] of pods.entries()) {
    await patchPod(e, ns, p.metadata.name, { metadata: { labels: { rank: ranks[i] } } });
  }
  // The controller must have seen the labels before the update starts.
  await new Promise((r) => setTimeout(r, 1000));
  await patchCloneSet(e, ns, 'web', image('registry.local/app:v2'));
  await settled(e, ns, 'web', ranks.length);
  const order = (await livePods(e, ns, 'web'))
    .map((p) => ({ rank: p.metadata.labels!.rank!, at: Date.parse(inPlaceState(p).updateTimestamp) }))
    .sort((a, b) => a.at - b.at);
  expect(new Set(order.map((o) => o.at)).size).toBe(ranks.length);
  return order.map((o) => o.rank);
}

describe('CloneSet update', () => {
  it('InPlaceIfPossible: image change in place keeps the UID, bumps restartCount, records the state', async () => {
    const ns = await setup('cs-inplace');
    await createCloneSet(e, ns, cloneSet('web', { replicas: 2, updateStrategy: { type: 'InPlaceIfPossible' } }));
    await settled(e, ns, 'web', 2);
    const before = await livePods(e, ns, 'web');
    // A watch sees every state: InPlaceUpdateReady=False can last less than a sample period.
    const tracker = await trackPods(ns);
    await eventually('the watch holds the 2 pods', () => Promise.resolve(tracker.live().length === 2));
    tracker.record();
    await patchCloneSet(e, ns, 'web', {
      spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.local/app:v2' }] } } },
    });
    const cs = await settled(e, ns, 'web', 2);
    const samples = tracker.stop();
    const after = await livePods(e, ns, 'web');
    expect(uids(after)).toEqual(uids(before));
    for (const p of after) {
      const status = p.status!.containerStatuses![0]!;
      expect(p.spec.containers[0]!.image).toBe('registry.local/app:v2');
      expect(status.restartCount).toBe(1);
      expect(status.imageID).not.toBe(before[0]!.status!.containerStatuses![0]!.imageID);
      expect(p.metadata.labels).toMatchObject({
        'controller-revision-hash': cs.status!.updateRevision,
        'lifecycle.apps.kruise.io/state': 'Normal',
      });
      const state = inPlaceState(p);
      expect(state).toMatchObject({ revision: cs.status!.updateRevision, updateImages: true });
      expect(state.lastContainerStatuses?.main?.imageID).toContain('registry.local/app:v1@sha256:');
      expect(condition(p, 'InPlaceUpdateReady')).toBe('True');
    }
    // maxUnavailable 20% of 2 rounds up to 1: never both pods out at once.
    expect(
      Math.max(...samples.map((s) => s.filter((p) => condition(p, 'Ready') !== 'True').length)),
    ).toBeLessThanOrEqual(1);
    expect(samples.some((s) => s.some((p) => condition(p, 'InPlaceUpdateReady') === 'False'))).toBe(true);
    const inPlace = (await events(e, ns, 'web')).filter((ev) => ev.reason === 'SuccessfulUpdatePodInPlace');
    expect(inPlace).toHaveLength(2);
  });

  it('InPlaceIfPossible recreates pods when more than images changed', async () => {
    const ns = await setup('cs-recreate');
    await createCloneSet(e, ns, cloneSet('web', { replicas: 2, updateStrategy: { type: 'InPlaceIfPossible' } }));
    await settled(e, ns, 'web', 2);
    const before = await livePods(e, ns, 'web');
    await patchCloneSet(e, ns, 'web', {
      spec: {
        template: {
          spec: { containers: [{ name: 'main', image: 'registry.local/app:v1', env: [{ name: 'A', value: '1' }] }] },
        },
      },
    });
    await settled(e, ns, 'web', 2);
    const after = await livePods(e, ns, 'web');
    expect(uids(after).some((u) => uids(before).includes(u))).toBe(false);
    expect((await events(e, ns, 'web')).some((ev) => ev.reason === 'SuccessfulUpdatePodReCreate')).toBe(true);
  });

  it('ReCreate with maxSurge=1, maxUnavailable=0: replacements first, never more than replicas + 1 pods', async () => {
    const ns = await setup('cs-surge');
    await createCloneSet(
      e,
      ns,
      cloneSet('web', { replicas: 3, updateStrategy: { type: 'ReCreate', maxSurge: 1, maxUnavailable: 0 } }),
    );
    await settled(e, ns, 'web', 3);
    const tracker = await trackPods(ns);
    await eventually('the watch holds the 3 pods', () => Promise.resolve(tracker.live().length === 3));
    tracker.record();
    await patchCloneSet(e, ns, 'web', image('registry.local/app:v2'));
    await settled(e, ns, 'web', 3);
    const states = tracker.stop();
    expect(Math.max(...states.map((s) => s.length))).toBe(4);
    // maxUnavailable 0: at least 3 ready pods after every change.
    expect(
      Math.min(...states.map((s) => s.filter((p) => condition(p, 'Ready') === 'True').length)),
    ).toBeGreaterThanOrEqual(3);
  });

  it('partition "99%" of 4 replicas updates exactly one pod', async () => {
    const ns = await setup('cs-partition');
    await createCloneSet(
      e,
      ns,
      cloneSet('web', { replicas: 4, updateStrategy: { type: 'InPlaceIfPossible', partition: '99%' } }),
    );
    await settled(e, ns, 'web', 4);
    await patchCloneSet(e, ns, 'web', image('registry.local/app:v2'));
    const cs = await statusReaches(
      e,
      ns,
      'web',
      'one pod updated and ready',
      (s, c) => s.observedGeneration === c.metadata?.generation && s.updatedReadyReplicas === 1,
    );
    expect(cs.status).toMatchObject({ replicas: 4, updatedReplicas: 1, expectedUpdatedReplicas: 1 });
    expect(cs.status!.currentRevision).not.toBe(cs.status!.updateRevision);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await getCloneSet(e, ns, 'web')).status?.updatedReplicas).toBe(1);
    expect(
      (await livePods(e, ns, 'web')).filter((p) => p.spec.containers[0]!.image === 'registry.local/app:v2'),
    ).toHaveLength(1);
  });

  it('paused holds an update back; a numeric partition keeps that many pods old; partition 0 finishes it', async () => {
    const ns = await setup('cs-paused-update');
    await createCloneSet(
      e,
      ns,
      cloneSet('web', { replicas: 3, updateStrategy: { type: 'InPlaceIfPossible', partition: 1, paused: true } }),
    );
    await settled(e, ns, 'web', 3);
    await patchCloneSet(e, ns, 'web', image('registry.local/app:v2'));
    const held = await statusReaches(
      e,
      ns,
      'web',
      'new generation observed',
      (s, c) => s.observedGeneration === c.metadata?.generation && s.updateRevision !== s.currentRevision,
    );
    expect(held.status).toMatchObject({ replicas: 3, updatedReplicas: 0, expectedUpdatedReplicas: 2 });
    await new Promise((r) => setTimeout(r, 1500));
    const images = async (): Promise<string[]> =>
      (await livePods(e, ns, 'web')).map((p) => p.spec.containers[0]!.image ?? '').sort();
    expect(await images()).toEqual(['registry.local/app:v1', 'registry.local/app:v1', 'registry.local/app:v1']);

    await patchCloneSet(e, ns, 'web', { spec: { updateStrategy: { paused: false } } });
    await statusReaches(
      e,
      ns,
      'web',
      'two pods updated and ready',
      (s, c) => s.observedGeneration === c.metadata?.generation && s.updatedReadyReplicas === 2,
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect((await getCloneSet(e, ns, 'web')).status?.updatedReplicas).toBe(2);
    expect(await images()).toEqual(['registry.local/app:v1', 'registry.local/app:v2', 'registry.local/app:v2']);

    await patchCloneSet(e, ns, 'web', { spec: { updateStrategy: { partition: 0 } } });
    await settled(e, ns, 'web', 3);
    expect(await images()).toEqual(['registry.local/app:v2', 'registry.local/app:v2', 'registry.local/app:v2']);
  });

  it('revisionHistoryLimit: unused revisions beyond the limit are deleted, oldest first', async () => {
    const ns = await setup('cs-history');
    await createCloneSet(
      e,
      ns,
      cloneSet('web', { replicas: 1, revisionHistoryLimit: 1, updateStrategy: { type: 'InPlaceIfPossible' } }),
    );
    await settled(e, ns, 'web', 1);
    for (const v of ['v2', 'v3', 'v4']) {
      await patchCloneSet(e, ns, 'web', image(`registry.local/app:${v}`));
      await settled(e, ns, 'web', 1);
    }
    const cs = await getCloneSet(e, ns, 'web');
    // The live revision (v4) plus one unused one, the newest of v1..v3.
    const kept = await eventually('history truncated', async () => {
      const revs = await revisions(e, ns);
      return revs.length === 2 && revs;
    });
    expect(kept.map((r) => r.revision).sort()).toEqual([3, 4]);
    expect(kept.map((r) => r.metadata.name)).toContain(cs.status!.updateRevision);
  });

  it('orderPriority: pods are updated one by one in priority order (highest suffix first)', async () => {
    const order = await updateOrder('cs-order', { orderPriority: [{ orderedKey: 'rank' }] }, ['r-1', 'r-2', 'r-3']);
    expect(order).toEqual(['r-3', 'r-2', 'r-1']);
  });

  it('weightPriority: pods are updated one by one, the highest sum of matching weights first', async () => {
    const weightPriority = [
      { weight: 50, matchSelector: { matchLabels: { rank: 'gold' } } },
      { weight: 10, matchSelector: { matchLabels: { rank: 'silver' } } },
    ];
    const order = await updateOrder('cs-weight', { weightPriority }, ['silver', 'bronze', 'gold']);
    expect(order).toEqual(['gold', 'silver', 'bronze']);
  });

  it('two containers with priorities: the higher-priority container updates first, the other after it is ready', async () => {
    const ns = await setup('cs-priority');
    const cs = cloneSet('web', { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible' } });
    cs.spec.template.spec!.containers = [
      { name: 'nginx', image: 'registry.local/nginx:v1' },
      { name: 'redis', image: 'registry.local/redis:v1', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }] },
    ];
    await createCloneSet(e, ns, cs);
    await settled(e, ns, 'web', 1);
    await patchCloneSet(e, ns, 'web', {
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'nginx', image: 'registry.local/nginx:v2' },
              {
                name: 'redis',
                image: 'registry.local/redis:v2',
                env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '10' }],
              },
            ],
          },
        },
      },
    });
    await settled(e, ns, 'web', 1);
    const [p] = await livePods(e, ns, 'web');
    const state = inPlaceState(p!);
    expect(state.containerBatchesRecord?.map((b) => b.containers)).toEqual([['redis'], ['nginx']]);
    expect(p!.status!.containerStatuses!.map((s) => [s.name, s.restartCount])).toEqual([
      ['nginx', 1],
      ['redis', 1],
    ]);
  });

  it('inPlaceUpdateStrategy.gracePeriodSeconds: not ready first, images changed after the grace period', async () => {
    const ns = await setup('cs-grace');
    await createCloneSet(
      e,
      ns,
      cloneSet('web', {
        replicas: 1,
        updateStrategy: { type: 'InPlaceIfPossible', inPlaceUpdateStrategy: { gracePeriodSeconds: 3 } },
      }),
    );
    await settled(e, ns, 'web', 1);
    await patchCloneSet(e, ns, 'web', image('registry.local/app:v2'));
    const waiting = await eventually('grace annotation', async () => {
      const [p] = await livePods(e, ns, 'web');
      return p?.metadata.annotations?.['apps.kruise.io/inplace-update-grace'] !== undefined && p;
    });
    expect(waiting.spec.containers[0]!.image).toBe('registry.local/app:v1');
    expect(condition(waiting, 'InPlaceUpdateReady')).toBe('False');
    // Counts can look settled while the pod still waits out its grace period; wait for the
    // images to be applied (the grace annotation replaced by the update state) first.
    await eventually('grace period over and images applied', async () => {
      const [p] = await livePods(e, ns, 'web');
      return (
        p?.metadata.annotations?.['apps.kruise.io/inplace-update-grace'] === undefined &&
        p?.spec.containers[0]?.image === 'registry.local/app:v2'
      );
    });
    await settled(e, ns, 'web', 1);
    const [p] = await livePods(e, ns, 'web');
    const state = inPlaceState(p!);
    const waited = Date.parse(state.containerBatchesRecord![0]!.timestamp) - Date.parse(state.updateTimestamp);
    expect(waited).toBeGreaterThanOrEqual(3000);
    expect(p!.metadata.annotations!['apps.kruise.io/inplace-update-grace']).toBeUndefined();
  });

  it('inPlaceUpdate hook: PreparingUpdate until unhooked, then Updating, Updated, and Normal once re-hooked', async () => {
    const ns = await setup('cs-hook');
    const hook = { 'example.com/serving': 'true' };
    const cs = cloneSet('web', {
      replicas: 1,
      updateStrategy: { type: 'InPlaceIfPossible' },
      lifecycle: { inPlaceUpdate: { labelsHandler: hook } },
    });
    cs.spec.template.metadata!.labels = { ...cs.spec.template.metadata!.labels, ...hook };
    await createCloneSet(e, ns, cs);
    await settled(e, ns, 'web', 1);
    await patchCloneSet(e, ns, 'web', image('registry.local/app:v2'));
    const state = async (): Promise<string | undefined> =>
      (await livePods(e, ns, 'web'))[0]?.metadata.labels?.['lifecycle.apps.kruise.io/state'];
    await eventually('PreparingUpdate', async () => (await state()) === 'PreparingUpdate');
    await new Promise((r) => setTimeout(r, 1000));
    const [held] = await livePods(e, ns, 'web');
    expect(held!.spec.containers[0]!.image).toBe('registry.local/app:v1');
    await patchPod(e, ns, held!.metadata.name, { metadata: { labels: { 'example.com/serving': null } } });
    await eventually('Updated (hook not back yet)', async () => (await state()) === 'Updated');
    expect((await livePods(e, ns, 'web'))[0]!.spec.containers[0]!.image).toBe('registry.local/app:v2');
    await patchPod(e, ns, held!.metadata.name, { metadata: { labels: hook } });
    await eventually('Normal', async () => (await state()) === 'Normal');
    await settled(e, ns, 'web', 1);
  });

  it('a template label change is applied in place without restarting containers', async () => {
    const ns = await setup('cs-meta');
    await createCloneSet(e, ns, cloneSet('web', { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible' } }));
    await settled(e, ns, 'web', 1);
    const [before] = await livePods(e, ns, 'web');
    await patchCloneSet(e, ns, 'web', { spec: { template: { metadata: { labels: { tier: 'gold' } } } } });
    await settled(e, ns, 'web', 1);
    const [after] = await livePods(e, ns, 'web');
    expect(after!.metadata.uid).toBe(before!.metadata.uid);
    expect(after!.metadata.labels?.tier).toBe('gold');
    expect(after!.status!.containerStatuses![0]!.restartCount).toBe(0);
  });

  it('rolling back to an earlier template reuses its revision with a bumped revision number', async () => {
    const ns = await setup('cs-rollback');
    await createCloneSet(e, ns, cloneSet('web', { replicas: 1, updateStrategy: { type: 'InPlaceIfPossible' } }));
    const first = await settled(e, ns, 'web', 1);
    await patchCloneSet(e, ns, 'web', image('registry.local/app:v2'));
    await settled(e, ns, 'web', 1);
    await patchCloneSet(e, ns, 'web', image('registry.local/app:v1'));
    const back = await settled(e, ns, 'web', 1);
    expect(back.status!.updateRevision).toBe(first.status!.updateRevision);
    const byName = new Map((await revisions(e, ns)).map((r) => [r.metadata.name, r.revision]));
    expect(byName.size).toBe(2);
    expect(byName.get(first.status!.updateRevision!)).toBe(3);
  });
});
