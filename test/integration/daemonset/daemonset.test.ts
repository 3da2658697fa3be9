/**
 * Advanced DaemonSet on a real apiserver with kwok nodes (one cluster, one namespace per scenario
 * group): placement by nodeSelector and taints, Standard updates within maxUnavailable, surge,
 * InPlaceIfPossible keeping pod UIDs, partition and node selector, paused, the preDelete hook,
 * adopting pods as OpenKruise v1.9 leaves them, and v1alpha1 through the conversion webhook.
 */
import { Watch } from '@kubernetes/client-node';
import { cloneSetRevisionData, defaultDaemonSet, type DaemonSet, type DaemonSetV1beta1 } from '@flotilla/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/kube.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { newDaemonPod } from '../../../agent/src/controllers/daemonset/daemon-pod.js';
import {
  addNode,
  createSet,
  daemonSet,
  env,
  getSet,
  namespace,
  patchSet,
  podsOf,
  rolledOut,
  startController,
  waitForSet,
  type Env,
  type Pod,
  type RunningController,
} from './harness.js';

const e: Env = env();
let ns: string;
let controller: RunningController;
const nodeNames = ['a', 'b', 'c'].map((s) => `ads-${e.runId}-${s}`);
const untolerated = `ads-${e.runId}-x`;

beforeAll(async () => {
  ns = await namespace(e, 'ads');
  await addNode(e, nodeNames[0]!, { pool: 'canary' });
  await addNode(e, nodeNames[1]!);
  await addNode(e, nodeNames[2]!);
  await addNode(e, untolerated, {}, [{ key: 'flotilla.test/ads-x', value: 'yes', effect: 'NoSchedule' }]);
  controller = await startController(e, ns);
}, 60_000);

afterAll(async () => {
  await controller?.stop();
  for (const name of [...nodeNames, untolerated]) await e.k.core.deleteNode({ name }).catch(() => undefined);
  await e.k.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

const image = (p: Pod): string => p.spec.containers[0]?.image ?? '';
const nodeOf = (p: Pod): string => p.spec.nodeName ?? '';
const ready = (p: Pod): boolean =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** Follows the set's pods by watch: the most nodes at once without a ready pod, and with two pods. */
async function follow(set: string): Promise<() => { unavailable: number; doubled: number }> {
  // Start from the listed pods: the watch replays them one by one, which is no real outage.
  const pods = new Map((await podsOf(e, ns, set)).map((p) => [p.metadata.uid!, p]));
  let unavailable = 0;
  let doubled = 0;
  const watch = await new Watch(e.k.kc).watch(
    `/api/v1/namespaces/${ns}/pods`,
    { labelSelector: `app=${set}` },
    (type: string, pod: Pod) => {
      if (type === 'DELETED' || pod.metadata.deletionTimestamp) pods.delete(pod.metadata.uid!);
      else pods.set(pod.metadata.uid!, pod);
      const live = [...pods.values()];
      unavailable = Math.max(
        unavailable,
        nodeNames.filter((n) => !live.some((p) => nodeOf(p) === n && ready(p))).length,
      );
      doubled = Math.max(doubled, nodeNames.filter((n) => live.filter((p) => nodeOf(p) === n).length > 1).length);
    },
    () => undefined,
  );
  return () => {
    watch.abort();
    return { unavailable, doubled };
  };
}

const withImage = (tag: string) => ({
  spec: { template: { spec: { containers: [{ name: 'main', image: `registry.local/agent:${tag}` }] } } },
});

describe('Advanced DaemonSet', () => {
  it('runs one pod on each labelled node it tolerates, none on the untolerated one', async () => {
    await createSet(e, ns, daemonSet(e, 'place'));
    const ds = await waitForSet(e, ns, 'place', 'rolled out', rolledOut(3));
    expect(ds.status).toMatchObject({ currentNumberScheduled: 3, numberMisscheduled: 0, numberUnavailable: 0 });
    const pods = await podsOf(e, ns, 'place');
    expect(pods.map(nodeOf).sort()).toEqual(nodeNames);
    expect(pods.every((p) => p.metadata.labels?.['controller-revision-hash'] === ds.status?.updateRevision)).toBe(true);
    const revisions = await e.k.apps.listNamespacedControllerRevision({ namespace: ns });
    const mine = revisions.items.filter((r) => r.metadata?.ownerReferences?.[0]?.name === 'place');
    expect(mine.map((r) => r.metadata?.labels?.['controller-revision-hash'])).toEqual([ds.status?.updateRevision]);
  });

  it('Standard: replaces pods with at most maxUnavailable (1) node down', async () => {
    await createSet(e, ns, daemonSet(e, 'std'));
    await waitForSet(e, ns, 'std', 'rolled out', rolledOut(3));
    const seen = await follow('std');
    await patchSet(e, ns, 'std', withImage('v2'));
    await waitForSet(e, ns, 'std', 'v2 rolled out', (d) => rolledOut(3)(d) && d.metadata?.generation === 2);
    const { unavailable, doubled } = seen();
    expect(unavailable).toBe(1);
    expect(doubled).toBe(0);
    expect((await podsOf(e, ns, 'std')).map(image)).toEqual(Array(3).fill('registry.local/agent:v2'));
  });

  it('surge: starts the new pod next to the old one, on at most maxSurge (1) node', async () => {
    await createSet(
      e,
      ns,
      daemonSet(e, 'surge', { updateStrategy: { rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } }),
    );
    await waitForSet(e, ns, 'surge', 'rolled out', rolledOut(3));
    const seen = await follow('surge');
    await patchSet(e, ns, 'surge', withImage('v2'));
    await waitForSet(e, ns, 'surge', 'v2 rolled out', (d) => rolledOut(3)(d) && d.metadata?.generation === 2);
    await eventually('old pods gone', async () => (await podsOf(e, ns, 'surge')).length === 3, 20_000, 100);
    const { unavailable, doubled } = seen();
    expect(doubled).toBe(1);
    expect(unavailable).toBe(0);
  });

  it('InPlaceIfPossible: updates the image in place, every pod keeps its UID', async () => {
    await createSet(
      e,
      ns,
      daemonSet(e, 'inplace', {
        updateStrategy: { rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible', maxUnavailable: 2 } },
      }),
    );
    await waitForSet(e, ns, 'inplace', 'rolled out', rolledOut(3));
    const before = (await podsOf(e, ns, 'inplace')).map((p) => p.metadata.uid).sort();
    await patchSet(e, ns, 'inplace', withImage('v2'));
    await waitForSet(e, ns, 'inplace', 'v2 rolled out', (d) => rolledOut(3)(d) && d.metadata?.generation === 2);
    const after = await podsOf(e, ns, 'inplace');
    expect(after.map((p) => p.metadata.uid).sort()).toEqual(before);
    expect(after.map(image)).toEqual(Array(3).fill('registry.local/agent:v2'));
    expect(after.every((p) => p.metadata.annotations?.['apps.kruise.io/inplace-update-state'])).toBe(true);
  });

  it('partition keeps nodes old, highest names updated first; the selector picks the canary node', async () => {
    await createSet(
      e,
      ns,
      daemonSet(e, 'part', { updateStrategy: { rollingUpdate: { maxUnavailable: 3, partition: 2 } } }),
    );
    await waitForSet(e, ns, 'part', 'rolled out', rolledOut(3));
    await patchSet(e, ns, 'part', withImage('v2'));
    await waitForSet(
      e,
      ns,
      'part',
      'one updated',
      (d) => d.status?.updatedNumberScheduled === 1 && d.status.numberAvailable === 3,
    );
    const v2 = async (): Promise<string[]> =>
      (await podsOf(e, ns, 'part'))
        .filter((p) => image(p).endsWith(':v2'))
        .map(nodeOf)
        .sort();
    expect(await v2()).toEqual([nodeNames[2]]);
    await patchSet(e, ns, 'part', {
      spec: { updateStrategy: { rollingUpdate: { partition: 1, selector: { matchLabels: { pool: 'canary' } } } } },
    });
    await waitForSet(
      e,
      ns,
      'part',
      'canary updated',
      (d) => d.status?.updatedNumberScheduled === 2 && d.status.numberAvailable === 3,
    );
    expect(await v2()).toEqual([nodeNames[0], nodeNames[2]]);
  });

  it('paused: no pod is replaced until it is unpaused', async () => {
    await createSet(e, ns, daemonSet(e, 'paused', { updateStrategy: { rollingUpdate: { paused: true } } }));
    await waitForSet(e, ns, 'paused', 'rolled out', rolledOut(3));
    await patchSet(e, ns, 'paused', withImage('v2'));
    await waitForSet(e, ns, 'paused', 'generation observed', (d) => d.status?.observedGeneration === 2);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await podsOf(e, ns, 'paused')).map(image)).toEqual(Array(3).fill('registry.local/agent:v1'));
    await patchSet(e, ns, 'paused', { spec: { updateStrategy: { rollingUpdate: { paused: false } } } });
    await waitForSet(e, ns, 'paused', 'v2 rolled out', (d) => rolledOut(3)(d) && d.metadata?.generation === 3);
  });

  it('preDelete: a hooked pod waits in PreparingDelete until the hook label goes', async () => {
    const hook = { 'example.com/hold': 'true' };
    const ds = daemonSet(e, 'hook', { lifecycle: { preDelete: { labelsHandler: hook } } });
    ds.spec.template.metadata!.labels = { ...ds.spec.template.metadata!.labels, ...hook };
    await createSet(e, ns, ds);
    await waitForSet(e, ns, 'hook', 'rolled out', rolledOut(3));
    await patchSet(e, ns, 'hook', withImage('v2'));
    const held = await eventually(
      'a pod in PreparingDelete',
      async () =>
        (await podsOf(e, ns, 'hook')).find(
          (p) => p.metadata.labels?.['lifecycle.apps.kruise.io/state'] === 'PreparingDelete',
        ) ?? false,
      20_000,
      100,
    );
    await new Promise((r) => setTimeout(r, 1000));
    const still = (await podsOf(e, ns, 'hook')).find((p) => p.metadata.uid === held.metadata.uid);
    expect(still?.metadata.labels?.['lifecycle.apps.kruise.io/state']).toBe('PreparingDelete');
    for (const pod of await podsOf(e, ns, 'hook')) {
      if (pod.metadata.labels?.['example.com/hold']) {
        await e.rest.request({
          method: 'PATCH',
          path: resourcePath(Resources.pods, ns, pod.metadata.name),
          contentType: 'application/merge-patch+json',
          body: { metadata: { labels: { 'example.com/hold': null } } },
        });
      }
    }
    await waitForSet(e, ns, 'hook', 'v2 rolled out', (d) => rolledOut(3)(d) && d.metadata?.generation === 2);
  });
});

describe('taking over from OpenKruise v1.9', () => {
  let adoptNs: string;
  let adopter: RunningController | undefined;
  beforeAll(async () => {
    adoptNs = await namespace(e, 'ads-adopt');
  });
  afterAll(async () => {
    await adopter?.stop();
    await e.k.core.deleteNamespace({ name: adoptNs }).catch(() => undefined);
  });

  it('adopts the pods and revision OpenKruise left, restarting none', async () => {
    const created = await createSet(e, adoptNs, daemonSet(e, 'legacy'));
    const ds = defaultDaemonSet(created as unknown as DaemonSet) as unknown as DaemonSetV1beta1;
    // OpenKruise names revisions by a hash of the Go template value; any hash it wrote must be kept.
    const hash = '6d9f7b8c4';
    await e.k.apps.createNamespacedControllerRevision({
      namespace: adoptNs,
      body: {
        metadata: {
          name: `legacy-${hash}`,
          labels: { app: 'legacy', 'controller-revision-hash': hash },
          ownerReferences: [
            {
              apiVersion: 'apps.kruise.io/v1beta1',
              kind: 'DaemonSet',
              name: 'legacy',
              uid: ds.metadata!.uid!,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        data: JSON.parse(cloneSetRevisionData(ds)) as object,
        revision: 1,
      },
    });
    for (const node of nodeNames) {
      const pod = newDaemonPod(ds, node, hash);
      await e.rest.request({ method: 'POST', path: resourcePath(Resources.pods, adoptNs), body: pod });
    }
    await eventually(
      'legacy pods ready',
      async () => (await podsOf(e, adoptNs, 'legacy')).filter(ready).length === 3,
      30_000,
      100,
    );
    const before = (await podsOf(e, adoptNs, 'legacy')).map((p) => p.metadata.uid).sort();
    adopter = await startController(e, adoptNs);
    const adopted = await waitForSet(e, adoptNs, 'legacy', 'status written', rolledOut(3));
    expect(adopted.status?.updateRevision).toBe(hash);
    await new Promise((r) => setTimeout(r, 1000));
    expect((await podsOf(e, adoptNs, 'legacy')).map((p) => p.metadata.uid).sort()).toEqual(before);
    const revisions = await e.k.apps.listNamespacedControllerRevision({ namespace: adoptNs });
    expect(revisions.items.map((r) => r.metadata?.name)).toEqual([`legacy-${hash}`]);
  });
});

describe('v1alpha1 through the conversion webhook', () => {
  it('stores a v1alpha1 Surging set as Standard with partitionedScaling, and serves the hash as daemonSetHash', async () => {
    const alpha = {
      ...daemonSet(e, 'alpha'),
      apiVersion: 'apps.kruise.io/v1alpha1',
      metadata: { name: 'alpha', annotations: { 'daemonset.kruise.io/progressive-create-pod': 'true' } },
    };
    alpha.spec = {
      ...alpha.spec,
      updateStrategy: { rollingUpdate: { rollingUpdateType: 'Surging', maxSurge: 1, maxUnavailable: 0 } },
    };
    await createSet(e, ns, alpha, 'v1alpha1');
    const beta = await getSet(e, ns, 'alpha');
    expect(beta.spec.updateStrategy?.rollingUpdate?.rollingUpdateType).toBe('Standard');
    expect(beta.spec.scaleStrategy).toEqual({ partitionedScaling: true });
    const done = await waitForSet(e, ns, 'alpha', 'rolled out', rolledOut(3));
    const read = await getSet<{ status?: { daemonSetHash?: string; updateRevision?: string } }>(
      e,
      ns,
      'alpha',
      'v1alpha1',
    );
    expect(read.status?.daemonSetHash).toBe(done.status?.updateRevision);
    expect(read.status?.updateRevision).toBeUndefined();
  });
});
