/**
 * Our versions of OpenKruise's Advanced StatefulSet e2e scenarios (test/e2e/apps/v1beta1/
 * statefulset.go) that the other file does not already cover, on a real apiserver with kwok
 * nodes, one namespace each: legacy replacement under OnDelete, adopting a matching orphan and
 * releasing a pod whose labels stop matching, a rolling update rolled back to
 * the revision it came from, the scale subresource, a pod labelled specified-delete replaced,
 * and a failed (evicted) pod replaced.
 */
import { describe, expect, it } from 'vitest';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { PatchType } from '../../../agent/src/runtime/rest.js';
import { eventually } from '../helpers/kube.js';
import {
  controllerPerTest,
  createSet,
  env,
  livePods,
  patchSet,
  revisionOf,
  revisions,
  statefulSet,
  statusReaches,
  type Pod,
} from './harness.js';

const e = env();
const setUp = controllerPerTest(e);
const image = (tag: string): unknown => ({
  spec: { template: { spec: { containers: [{ name: 'main', image: `registry.local/app:${tag}` }] } } },
});

async function podNamed(ns: string, name: string): Promise<Pod | undefined> {
  return (await livePods(e, ns, 'web')).find((p) => p.metadata.name === name);
}

describe('Advanced StatefulSet, OpenKruise e2e scenarios', () => {
  it('OnDelete: a template change replaces no pod; a deleted pod comes back at the new revision', async () => {
    const ns = await setUp('asts-e2e-ondelete');
    await createSet(
      e,
      ns,
      statefulSet('web', { podManagementPolicy: 'Parallel', updateStrategy: { type: 'OnDelete' } }),
    );
    const before = await statusReaches(e, ns, 'web', 'three ready', (s) => s.readyReplicas === 3);
    const original = Object.fromEntries((await livePods(e, ns, 'web')).map((p) => [p.metadata.name, p.metadata.uid]));
    await patchSet(e, ns, 'web', image('v2'));
    const changed = await statusReaches(
      e,
      ns,
      'web',
      'a new update revision',
      (s) => s.updateRevision !== before.status!.updateRevision,
    );
    await e.rest.request({ method: 'DELETE', path: resourcePath(Resources.pods, ns, 'web-1') });
    const replaced = await eventually('web-1 back', async () => {
      const p = await podNamed(ns, 'web-1');
      return p && p.metadata.uid !== original['web-1'] && p;
    });
    expect(revisionOf(replaced)).toBe(changed.status!.updateRevision);
    expect(replaced.spec.containers[0]!.image).toBe('registry.local/app:v2');
    const others = (await livePods(e, ns, 'web')).filter((p) => p.metadata.name !== 'web-1');
    expect(others.map((p) => [p.metadata.uid, revisionOf(p)])).toEqual(
      ['web-0', 'web-2'].map((n) => [original[n], before.status!.updateRevision]),
    );
  });

  it('adopts a matching orphan and releases a pod whose labels stop matching', async () => {
    const ns = await setUp('asts-e2e-adopt');
    const set = await createSet(e, ns, statefulSet('web', { podManagementPolicy: 'Parallel', replicas: 1 }));
    await statusReaches(e, ns, 'web', 'one ready', (s) => s.readyReplicas === 1);
    const original = (await podNamed(ns, 'web-0'))!;
    const patchPod = (metadata: unknown): Promise<unknown> =>
      e.rest.request({
        method: 'PATCH',
        path: resourcePath(Resources.pods, ns, 'web-0'),
        contentType: PatchType.merge,
        body: { metadata },
      });
    const controller = (p: Pod | undefined): string | undefined =>
      p?.metadata.ownerReferences?.find((r) => r.controller)?.uid;
    await patchPod({ ownerReferences: null });
    const adopted = await eventually('web-0 adopted again', async () => {
      const p = await podNamed(ns, 'web-0');
      return controller(p) === set.metadata!.uid && p;
    });
    expect(adopted.metadata.uid).toBe(original.metadata.uid);
    await patchPod({ labels: { app: 'elsewhere' } });
    const released = await eventually('web-0 released', async () => {
      const pods = await e.rest.request<{ items: Pod[] }>({ method: 'GET', path: resourcePath(Resources.pods, ns) });
      const p = pods.items.find((x) => x.metadata.uid === original.metadata.uid);
      return p && controller(p) === undefined && p;
    });
    expect(released.metadata.ownerReferences ?? []).toEqual([]);
  });

  it('rolls an update back to the revision it came from, storing no third revision', async () => {
    const ns = await setUp('asts-e2e-rollback');
    await createSet(
      e,
      ns,
      statefulSet('web', {
        podManagementPolicy: 'Parallel',
        replicas: 2,
        updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', maxUnavailable: 2 } },
      }),
    );
    const first = (await statusReaches(e, ns, 'web', 'two ready', (s) => s.readyReplicas === 2)).status!.updateRevision;
    await patchSet(e, ns, 'web', image('v2'));
    await statusReaches(
      e,
      ns,
      'web',
      'rolled out v2',
      (s) => s.updateRevision !== first && s.currentRevision === s.updateRevision && s.updatedReadyReplicas === 2,
    );
    await patchSet(e, ns, 'web', image('v1'));
    await statusReaches(
      e,
      ns,
      'web',
      'rolled back to the first revision',
      (s) => s.updateRevision === first && s.currentRevision === first && s.updatedReadyReplicas === 2,
    );
    const pods = await livePods(e, ns, 'web');
    expect(pods.map((p) => [revisionOf(p), p.spec.containers[0]!.image])).toEqual([
      [first, 'registry.local/app:v1'],
      [first, 'registry.local/app:v1'],
    ]);
    expect((await revisions(e, ns)).length).toBe(2);
  });

  it('has a working scale subresource', async () => {
    const ns = await setUp('asts-e2e-scale');
    await createSet(e, ns, statefulSet('web', { podManagementPolicy: 'Parallel', replicas: 1 }));
    await statusReaches(e, ns, 'web', 'one ready', (s) => s.readyReplicas === 1);
    const scalePath = resourcePath(Resources.statefulSets, ns, 'web', 'scale');
    const scale = await e.rest.request<{ spec: { replicas: number }; status: { replicas: number; selector?: string } }>(
      { method: 'GET', path: scalePath },
    );
    expect(scale.spec.replicas).toBe(1);
    expect(scale.status.selector).toBe('app=web');
    await e.rest.request({
      method: 'PATCH',
      path: scalePath,
      contentType: PatchType.merge,
      body: { spec: { replicas: 3 } },
    });
    await statusReaches(e, ns, 'web', 'three ready', (s) => s.readyReplicas === 3 && s.replicas === 3);
  });

  it('deletes a pod labelled specified-delete and creates it again, past the partition', async () => {
    const ns = await setUp('asts-e2e-specified');
    await createSet(
      e,
      ns,
      statefulSet('web', { podManagementPolicy: 'Parallel', updateStrategy: { rollingUpdate: { partition: 3 } } }),
    );
    await statusReaches(e, ns, 'web', 'three ready', (s) => s.readyReplicas === 3);
    const old = (await podNamed(ns, 'web-1'))!;
    await e.rest.request({
      method: 'PATCH',
      path: resourcePath(Resources.pods, ns, 'web-1'),
      contentType: PatchType.merge,
      body: { metadata: { labels: { 'apps.kruise.io/specified-delete': 'true' } } },
    });
    const replaced = await eventually('web-1 recreated', async () => {
      const p = await podNamed(ns, 'web-1');
      return p && p.metadata.uid !== old.metadata.uid && p;
    });
    expect(replaced.metadata.labels?.['apps.kruise.io/specified-delete']).toBeUndefined();
    await statusReaches(e, ns, 'web', 'three ready again', (s) => s.readyReplicas === 3);
  });

  it('replaces a pod that failed (evicted), under the same name', async () => {
    const ns = await setUp('asts-e2e-failed');
    await createSet(e, ns, statefulSet('web', { replicas: 2 }));
    await statusReaches(e, ns, 'web', 'two ready', (s) => s.readyReplicas === 2);
    const old = (await podNamed(ns, 'web-0'))!;
    await e.rest.request({
      method: 'PATCH',
      path: resourcePath(Resources.pods, ns, 'web-0', 'status'),
      contentType: PatchType.merge,
      body: { status: { phase: 'Failed', reason: 'Evicted', message: 'evicted by the test' } },
    });
    const replaced = await eventually('web-0 recreated', async () => {
      const p = await podNamed(ns, 'web-0');
      return p && p.metadata.uid !== old.metadata.uid && p;
    });
    expect(replaced.metadata.name).toBe('web-0');
    await statusReaches(e, ns, 'web', 'two ready again', (s) => s.readyReplicas === 2);
  });
});
