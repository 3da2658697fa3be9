/**
 * Advanced StatefulSet on a real apiserver with kwok nodes, one cluster for the file and one
 * namespace per scenario: OrderedReady and Parallel creation, reserveOrdinals, in-place update
 * under a partition, a Parallel update within maxUnavailable, PVC retention on scale-in, the
 * preDelete and inPlaceUpdate lifecycle hooks (with markPodNotReady), unorderedUpdate's
 * priorityStrategy, minReadySeconds, a create refused by a quota (FailedCreatePod), and adoption
 * of a set, revision and pods written the way OpenKruise v1.9 writes them. The test
 * clusters have no volume provisioner, so pods with claims stay Pending; only objects are checked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  cloneSetRevision,
  LABEL_CONTROLLER_HASH,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_POD_INDEX,
  LABEL_STATEFULSET_POD_NAME,
  KRUISE_V1BETA1_API_VERSION,
} from '@flotilla/api';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { PatchType } from '../../../agent/src/runtime/rest.js';
import { eventually } from '../helpers/kube.js';
import {
  claims,
  condition,
  createSet,
  env,
  getSet,
  isReady,
  livePods,
  namespace,
  patchSet,
  revisions,
  startController,
  statefulSet,
  statusReaches,
  type Pod,
  type RunningController,
} from './harness.js';

const e = env();
const running: RunningController[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

const names = (pods: Pod[]): string[] => pods.map((p) => p.metadata.name).sort();
const uids = (pods: Pod[]): Record<string, string> =>
  Object.fromEntries(pods.map((p) => [p.metadata.name, p.metadata.uid ?? '']));
const revisionOf = (p: Pod): string => p.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? '';
const allReady = (status: { replicas: number; readyReplicas: number }, n: number): boolean =>
  status.replicas === n && status.readyReplicas === n;

async function setUp(prefix: string): Promise<string> {
  const ns = await namespace(e, prefix);
  running.push(await startController(e, ns));
  return ns;
}

describe('Advanced StatefulSet', () => {
  it('OrderedReady creates web-0, web-1, web-2 one after the other, each once the one before is ready', async () => {
    const ns = await setUp('asts-ordered');
    await createSet(e, ns, statefulSet('web'));
    const samples: string[][] = [];
    await eventually('three ready pods', async () => {
      const pods = await livePods(e, ns, 'web');
      samples.push(names(pods));
      // A pod beyond the first not-ready one must never exist.
      const sorted = [...pods].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
      const firstNotReady = sorted.findIndex((p) => !isReady(p));
      if (firstNotReady >= 0) expect(sorted.length).toBe(firstNotReady + 1);
      return pods.length === 3 && pods.every(isReady);
    });
    for (const s of samples) expect(['web-0', 'web-1', 'web-2'].slice(0, s.length)).toEqual(s);
    const pods = await livePods(e, ns, 'web');
    for (const p of pods) {
      expect(p.metadata.labels?.[LABEL_STATEFULSET_POD_NAME]).toBe(p.metadata.name);
      expect(p.metadata.labels?.[LABEL_POD_INDEX]).toBe(p.metadata.name.slice(-1));
      expect(p.spec.hostname).toBe(p.metadata.name);
      expect(p.metadata.ownerReferences?.[0]).toMatchObject({
        apiVersion: KRUISE_V1BETA1_API_VERSION,
        controller: true,
      });
    }
    await statusReaches(
      e,
      ns,
      'web',
      'three ready, one revision',
      (s) => allReady(s, 3) && s.currentRevision === s.updateRevision,
    );
  });

  it('Parallel creates every pod at once; reserveOrdinals skips ordinals and scale-in removes the highest', async () => {
    const ns = await setUp('asts-parallel');
    await createSet(e, ns, statefulSet('web', { podManagementPolicy: 'Parallel', replicas: 3, reserveOrdinals: [1] }));
    const created = await eventually('three pods', async () => {
      const pods = await livePods(e, ns, 'web');
      return pods.length === 3 && pods;
    });
    expect(names(created)).toEqual(['web-0', 'web-2', 'web-3']);
    await statusReaches(e, ns, 'web', 'three ready', (s) => allReady(s, 3));
    await patchSet(e, ns, 'web', { spec: { replicas: 2, reserveOrdinals: [1, 2] } });
    await eventually('web-0 and web-3 left', async () => {
      const pods = await livePods(e, ns, 'web');
      return names(pods).join() === 'web-0,web-3';
    });
    expect(uids(await livePods(e, ns, 'web'))['web-3']).toBe(uids(created)['web-3']);
  });

  it('updates in place from the highest ordinal down to the partition, keeping the pods', async () => {
    const ns = await setUp('asts-inplace');
    const set = statefulSet('web', {
      updateStrategy: { rollingUpdate: { partition: 1, podUpdatePolicy: 'InPlaceIfPossible' } },
    });
    await createSet(e, ns, set);
    const before = await statusReaches(e, ns, 'web', 'three ready', (s) => allReady(s, 3));
    const oldRevision = before.status!.updateRevision!;
    const original = uids(await livePods(e, ns, 'web'));
    await patchSet(e, ns, 'web', {
      spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.local/app:v2' }] } } },
    });
    const after = await statusReaches(
      e,
      ns,
      'web',
      'two pods updated and ready',
      (s) => s.updateRevision !== oldRevision && s.updatedReplicas === 2 && s.updatedReadyReplicas === 2,
    );
    const pods = await livePods(e, ns, 'web');
    expect(uids(pods)).toEqual(original);
    const byName = Object.fromEntries(pods.map((p) => [p.metadata.name, p]));
    expect(revisionOf(byName['web-0']!)).toBe(oldRevision);
    for (const name of ['web-1', 'web-2']) {
      expect(revisionOf(byName[name]!)).toBe(after.status!.updateRevision);
      expect(byName[name]!.spec.containers[0]!.image).toBe('registry.local/app:v2');
      expect(condition(byName[name]!, 'InPlaceUpdateReady')).toBe('True');
    }
    expect(after.status!.currentRevision).toBe(oldRevision);
  });

  it('Parallel rolling update recreates pods two at a time with maxUnavailable 2', async () => {
    const ns = await setUp('asts-maxunavail');
    await createSet(
      e,
      ns,
      statefulSet('web', {
        podManagementPolicy: 'Parallel',
        replicas: 4,
        updateStrategy: { rollingUpdate: { maxUnavailable: 2 } },
      }),
    );
    const before = await statusReaches(e, ns, 'web', 'four ready', (s) => allReady(s, 4));
    await patchSet(e, ns, 'web', {
      spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.local/app:v2' }] } } },
    });
    let mostUnavailable = 0;
    await eventually(
      'all four recreated at the new revision and ready',
      async () => {
        const set = await getSet(e, ns, 'web');
        const pods = await livePods(e, ns, 'web');
        const unavailable = 4 - pods.filter(isReady).length;
        mostUnavailable = Math.max(mostUnavailable, unavailable);
        const update = set.status?.updateRevision;
        return (
          update !== before.status!.updateRevision &&
          pods.length === 4 &&
          pods.every((p) => isReady(p) && revisionOf(p) === update)
        );
      },
      60_000,
      50,
    );
    expect(mostUnavailable).toBeGreaterThan(0);
    expect(mostUnavailable).toBeLessThanOrEqual(2);
  });

  it('creates a claim per ordinal, owned by the set with whenDeleted Delete; scale-in deletes it with whenScaled Delete, keeps it with Retain', async () => {
    const ns = await setUp('asts-pvc');
    const volumeClaimTemplates = [
      {
        metadata: { name: 'data' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    ];
    await createSet(
      e,
      ns,
      statefulSet('del', {
        podManagementPolicy: 'Parallel',
        replicas: 2,
        volumeClaimTemplates,
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
      }),
    );
    await createSet(e, ns, statefulSet('keep', { podManagementPolicy: 'Parallel', replicas: 2, volumeClaimTemplates }));
    const live = async (): Promise<string[]> =>
      (await claims(e, ns))
        .filter((c) => !c.metadata.deletionTimestamp)
        .map((c) => c.metadata.name)
        .sort();
    await eventually('four claims', async () => (await live()).length === 4);
    const pod = (await livePods(e, ns, 'del')).find((p) => p.metadata.name === 'del-0')!;
    expect(pod.spec.volumes).toContainEqual({ name: 'data', persistentVolumeClaim: { claimName: 'data-del-0' } });
    await patchSet(e, ns, 'del', { spec: { replicas: 1 } });
    await patchSet(e, ns, 'keep', { spec: { replicas: 1 } });
    await eventually(
      'del-1 and keep-1 gone',
      async () =>
        names(await livePods(e, ns, 'del')).join() === 'del-0' &&
        names(await livePods(e, ns, 'keep')).join() === 'keep-0',
    );
    await eventually('data-del-1 deleted', async () => !(await live()).includes('data-del-1'));
    expect(await live()).toEqual(['data-del-0', 'data-keep-0', 'data-keep-1']);
    // whenDeleted: Delete makes the set an owner of its claims; Retain leaves them unowned.
    const owners = Object.fromEntries(
      (await claims(e, ns))
        .filter((c) => !c.metadata.deletionTimestamp)
        .map((c) => [c.metadata.name, (c.metadata.ownerReferences ?? []).map((r) => r.kind)]),
    );
    expect(owners).toEqual({ 'data-del-0': ['StatefulSet'], 'data-keep-0': [], 'data-keep-1': [] });
  });

  it('holds a pod the preDelete hook names in PreparingDelete, and deletes it once the hook is released', async () => {
    const ns = await setUp('asts-hook');
    await createSet(
      e,
      ns,
      statefulSet('web', {
        podManagementPolicy: 'Parallel',
        replicas: 2,
        lifecycle: { preDelete: { labelsHandler: { 'example.com/hold': 'true' } } },
      }),
    );
    await statusReaches(e, ns, 'web', 'two ready', (s) => allReady(s, 2));
    const hold = (value: string | null) =>
      e.rest.request({
        method: 'PATCH',
        path: resourcePath(Resources.pods, ns, 'web-1'),
        contentType: PatchType.merge,
        body: { metadata: { labels: { 'example.com/hold': value } } },
      });
    await hold('true');
    await patchSet(e, ns, 'web', { spec: { replicas: 1 } });
    const held = await eventually('web-1 in PreparingDelete', async () => {
      const p = (await livePods(e, ns, 'web')).find((x) => x.metadata.name === 'web-1');
      return p?.metadata.labels?.['lifecycle.apps.kruise.io/state'] === 'PreparingDelete' && p;
    });
    expect(held.metadata.deletionTimestamp).toBeUndefined();
    await hold(null);
    await eventually('web-1 deleted', async () => names(await livePods(e, ns, 'web')).join() === 'web-0');
  });

  it('marks a pod the preDelete hook holds not ready (markPodNotReady) through KruisePodReady', async () => {
    const ns = await setUp('asts-notready');
    const set = statefulSet('web', {
      podManagementPolicy: 'Parallel',
      replicas: 2,
      lifecycle: { preDelete: { labelsHandler: { 'example.com/hold': 'true' }, markPodNotReady: true } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [{ name: 'main', image: 'registry.local/app:v1' }],
          readinessGates: [{ conditionType: 'InPlaceUpdateReady' }, { conditionType: 'KruisePodReady' }],
        },
      },
    });
    await createSet(e, ns, set);
    await eventually('two pods', async () => (await livePods(e, ns, 'web')).length === 2);
    await e.rest.request({
      method: 'PATCH',
      path: resourcePath(Resources.pods, ns, 'web-1'),
      contentType: PatchType.merge,
      body: { metadata: { labels: { 'example.com/hold': 'true' } } },
    });
    await patchSet(e, ns, 'web', { spec: { replicas: 1 } });
    const held = await eventually('web-1 in PreparingDelete and not ready', async () => {
      const p = (await livePods(e, ns, 'web')).find((x) => x.metadata.name === 'web-1');
      const ready = p?.status?.conditions?.find((c) => c.type === 'KruisePodReady');
      return p?.metadata.labels?.['lifecycle.apps.kruise.io/state'] === 'PreparingDelete' && ready?.status === 'False'
        ? ready
        : false;
    });
    expect(JSON.parse(held.message ?? '[]')).toEqual([{ userAgent: 'Lifecycle', key: 'preDeleteHook' }]);
  });

  it('holds an in-place update in PreparingUpdate marked not ready, and clears the mark once Updated', async () => {
    const ns = await setUp('asts-inplace-hook');
    const hook = { 'example.com/drain': 'wait' };
    await createSet(
      e,
      ns,
      statefulSet('web', {
        replicas: 1,
        updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
        lifecycle: { inPlaceUpdate: { labelsHandler: hook, markPodNotReady: true } },
        template: {
          metadata: { labels: { app: 'web', ...hook } },
          spec: {
            containers: [{ name: 'main', image: 'registry.local/app:v1' }],
            readinessGates: [{ conditionType: 'InPlaceUpdateReady' }, { conditionType: 'KruisePodReady' }],
          },
        },
      }),
    );
    await eventually('web-0', async () => (await livePods(e, ns, 'web')).length === 1);
    await patchSet(e, ns, 'web', {
      spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.local/app:v2' }] } } },
    });
    const kruiseReady = (p: Pod) => p.status?.conditions?.find((c) => c.type === 'KruisePodReady');
    const held = await eventually('web-0 in PreparingUpdate, not ready', async () => {
      const [p] = await livePods(e, ns, 'web');
      return p?.metadata.labels?.['lifecycle.apps.kruise.io/state'] === 'PreparingUpdate' &&
        kruiseReady(p)?.status === 'False'
        ? p
        : false;
    });
    expect(held.spec.containers[0]!.image).toBe('registry.local/app:v1');
    expect(JSON.parse(kruiseReady(held)!.message ?? '[]')).toEqual([{ userAgent: 'Lifecycle', key: 'preUpdateHook' }]);
    await e.rest.request({
      method: 'PATCH',
      path: resourcePath(Resources.pods, ns, 'web-0'),
      contentType: PatchType.merge,
      body: { metadata: { labels: { 'example.com/drain': null } } },
    });
    const updated = await eventually('web-0 Updated and ready again', async () => {
      const [p] = await livePods(e, ns, 'web');
      return p?.metadata.labels?.['lifecycle.apps.kruise.io/state'] === 'Updated' && kruiseReady(p)?.status === 'True'
        ? p
        : false;
    });
    expect([updated.metadata.uid, updated.spec.containers[0]!.image]).toEqual([
      held.metadata.uid,
      'registry.local/app:v2',
    ]);
  });

  it('Parallel unorderedUpdate takes the pod of the highest priority weight first, and keeps partition pods old', async () => {
    const ns = await setUp('asts-priority');
    await createSet(
      e,
      ns,
      statefulSet('web', {
        podManagementPolicy: 'Parallel',
        replicas: 3,
        updateStrategy: {
          rollingUpdate: {
            partition: 2,
            unorderedUpdate: {
              priorityStrategy: {
                weightPriority: [{ weight: 50, matchSelector: { matchLabels: { tier: 'canary' } } }],
              },
            },
          },
        },
      }),
    );
    const before = await statusReaches(e, ns, 'web', 'three ready', (s) => allReady(s, 3));
    await e.rest.request({
      method: 'PATCH',
      path: resourcePath(Resources.pods, ns, 'web-0'),
      contentType: PatchType.merge,
      body: { metadata: { labels: { tier: 'canary' } } },
    });
    await eventually('the canary label in the controller’s view', async () => {
      const p = (await livePods(e, ns, 'web')).find((x) => x.metadata.name === 'web-0');
      return p?.metadata.labels?.tier === 'canary';
    });
    await patchSet(e, ns, 'web', {
      spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.local/app:v2' }] } } },
    });
    const after = await statusReaches(
      e,
      ns,
      'web',
      'one pod updated and ready',
      (s) =>
        s.updateRevision !== before.status!.updateRevision && s.updatedReadyReplicas === 1 && s.readyReplicas === 3,
    );
    const pods = await livePods(e, ns, 'web');
    const updated = pods.filter((p) => revisionOf(p) === after.status!.updateRevision).map((p) => p.metadata.name);
    expect(updated).toEqual(['web-0']);
  });

  it('OrderedReady with minReadySeconds creates each pod only once the one before has been ready that long', async () => {
    const ns = await setUp('asts-minready');
    await createSet(
      e,
      ns,
      statefulSet('web', { replicas: 2, updateStrategy: { rollingUpdate: { minReadySeconds: 2 } } }),
    );
    const done = await statusReaches(e, ns, 'web', 'two available', (s) => s.availableReplicas === 2);
    expect(done.status!.readyReplicas).toBe(2);
    const byName = Object.fromEntries((await livePods(e, ns, 'web')).map((p) => [p.metadata.name, p]));
    const readySince = Date.parse(
      byName['web-0']!.status!.conditions!.find((c) => c.type === 'Ready')!.lastTransitionTime!,
    );
    const secondCreated = Date.parse(byName['web-1']!.metadata.creationTimestamp!);
    expect(secondCreated - readySince).toBeGreaterThanOrEqual(2000);
  });

  it('reports a pod it cannot create as the FailedCreatePod condition', async () => {
    const ns = await setUp('asts-quota');
    await e.rest.request({
      method: 'POST',
      path: resourcePath(
        { group: '', version: 'v1', plural: 'resourcequotas', kind: 'ResourceQuota', namespaced: true },
        ns,
      ),
      body: { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'pods' }, spec: { hard: { pods: '1' } } },
    });
    await eventually('the quota counted', async () => {
      const q = await e.rest.request<{ status?: { used?: Record<string, string> } }>({
        method: 'GET',
        path: resourcePath(
          { group: '', version: 'v1', plural: 'resourcequotas', kind: 'ResourceQuota', namespaced: true },
          ns,
          'pods',
        ),
      });
      return q.status?.used?.pods === '0';
    });
    await createSet(e, ns, statefulSet('web', { podManagementPolicy: 'Parallel', replicas: 2 }));
    const failed = await eventually('FailedCreatePod', async () => {
      const set = await getSet(e, ns, 'web');
      return set.status?.conditions?.find((c) => c.type === 'FailedCreatePod' && c.status === 'True');
    });
    expect(failed.message).toContain('web-1');
    expect(names(await livePods(e, ns, 'web'))).toEqual(['web-0']);
  });

  it('adopts a set whose revision and pods OpenKruise v1.9 created, restarting nothing', async () => {
    const ns = await namespace(e, 'asts-adopt');
    const set = await createSet(e, ns, statefulSet('web', { replicas: 2 }));
    const revision = cloneSetRevision(set, 0);
    const owner = {
      apiVersion: KRUISE_V1BETA1_API_VERSION,
      kind: 'StatefulSet',
      name: 'web',
      uid: set.metadata!.uid!,
      controller: true,
      blockOwnerDeletion: true,
    };
    // What kruise-manager writes: the revision (template labels + hash label, the set's annotations)…
    await e.rest.request({
      method: 'POST',
      path: resourcePath(Resources.controllerRevisions, ns),
      body: {
        apiVersion: 'apps/v1',
        kind: 'ControllerRevision',
        metadata: {
          name: revision.name,
          labels: { app: 'web', [LABEL_CONTROLLER_HASH]: revision.hash },
          ownerReferences: [owner],
        },
        data: JSON.parse(revision.data) as unknown,
        revision: 1,
      },
    });
    // …and the pods, named by ordinal with their identity labels and hostname.
    for (const ordinal of [0, 1]) {
      const name = `web-${ordinal}`;
      await e.rest.request({
        method: 'POST',
        path: resourcePath(Resources.pods, ns),
        body: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            name,
            labels: {
              app: 'web',
              [LABEL_CONTROLLER_REVISION_HASH]: revision.name,
              [LABEL_STATEFULSET_POD_NAME]: name,
              [LABEL_POD_INDEX]: String(ordinal),
            },
            ownerReferences: [owner],
          },
          spec: { ...set.spec.template.spec, hostname: name },
        },
      });
    }
    // kruise-manager marks its pods InPlaceUpdateReady when it creates them.
    for (const ordinal of [0, 1]) {
      await e.rest.request({
        method: 'PATCH',
        path: resourcePath(Resources.pods, ns, `web-${ordinal}`, 'status'),
        contentType: PatchType.strategic,
        body: { status: { conditions: [{ type: 'InPlaceUpdateReady', status: 'True' }] } },
      });
    }
    const before = await eventually('two pods running', async () => {
      const pods = await livePods(e, ns, 'web');
      return pods.length === 2 && pods.every(isReady) && pods;
    });
    running.push(await startController(e, ns));
    const adopted = await statusReaches(e, ns, 'web', 'both pods counted', (s) => allReady(s, 2));
    expect([adopted.status!.currentRevision, adopted.status!.updateRevision]).toEqual([revision.name, revision.name]);
    expect(adopted.status!.updatedReplicas).toBe(2);
    const after = await livePods(e, ns, 'web');
    expect(uids(after)).toEqual(uids(before));
    expect(after.map((p) => p.status?.containerStatuses?.[0]?.restartCount ?? 0)).toEqual([0, 0]);
    expect((await revisions(e, ns)).map((r) => r.metadata.name)).toEqual([revision.name]);
  });
});
