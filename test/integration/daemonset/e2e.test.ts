/**
 * Our versions of OpenKruise's Advanced DaemonSet e2e scenarios (test/e2e/apps/v1beta1/
 * daemonset.go) that the other file does not already cover, on a real apiserver with this file's
 * own three kwok nodes: a deleted daemon pod revived, a daemon following a node label on and off
 * the node, a failed daemon pod recreated, an orphan pod adopted, a surging update honouring
 * minReadySeconds, and InPlaceIfPossible recreating pods when more than an image changed.
 */
import { Watch } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/kube.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { PatchType } from '../../../agent/src/runtime/rest.js';
import {
  addNode,
  createSet,
  daemonSet,
  env,
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
const nodeNames = ['a', 'b', 'c'].map((s) => `ads-e2e-${e.runId}-${s}`);

beforeAll(async () => {
  ns = await namespace(e, 'ads-e2e');
  for (const name of nodeNames) await addNode(e, name);
  controller = await startController(e, ns);
}, 60_000);

afterAll(async () => {
  await controller?.stop();
  for (const name of nodeNames) await e.k.core.deleteNode({ name }).catch(() => undefined);
  await e.k.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

const nodeOf = (p: Pod): string => p.spec.nodeName ?? '';
const uidsByNode = (pods: Pod[]): Record<string, string> =>
  Object.fromEntries(pods.map((p) => [nodeOf(p), p.metadata.uid ?? '']));

function labelNode(name: string, labels: Record<string, string | null>): Promise<unknown> {
  return e.rest.request({
    method: 'PATCH',
    path: resourcePath(Resources.nodes, undefined, name),
    contentType: PatchType.merge,
    body: { metadata: { labels } },
  });
}

describe('Advanced DaemonSet, OpenKruise e2e scenarios', () => {
  it('runs and stops a simple daemon: a deleted pod is revived on its node', async () => {
    await createSet(e, ns, daemonSet(e, 'simple'));
    await waitForSet(e, ns, 'simple', 'rolled out', rolledOut(3));
    const before = uidsByNode(await podsOf(e, ns, 'simple'));
    const victim = (await podsOf(e, ns, 'simple')).find((p) => nodeOf(p) === nodeNames[1])!;
    await e.rest.request({ method: 'DELETE', path: resourcePath(Resources.pods, ns, victim.metadata.name) });
    const after = await eventually('a new pod on the node', async () => {
      const pods = await podsOf(e, ns, 'simple');
      const byNode = uidsByNode(pods);
      const revived = byNode[nodeNames[1]!];
      return pods.length === 3 && revived !== undefined && revived !== before[nodeNames[1]!] && byNode;
    });
    expect(Object.keys(after).sort()).toEqual(nodeNames);
    expect(after[nodeNames[0]!]).toBe(before[nodeNames[0]!]);
  });

  it('runs a complex daemon: a pod follows the node label on and off the node', async () => {
    const color = `color-${e.runId}`;
    const ds = daemonSet(e, 'complex');
    ds.spec.template.spec!.nodeSelector = { ...ds.spec.template.spec!.nodeSelector, [color]: 'blue' };
    await createSet(e, ns, ds);
    await waitForSet(e, ns, 'complex', 'nothing to run', (d) => d.status?.desiredNumberScheduled === 0);
    expect(await podsOf(e, ns, 'complex')).toEqual([]);
    await labelNode(nodeNames[2]!, { [color]: 'blue' });
    await waitForSet(e, ns, 'complex', 'one node', rolledOut(1));
    expect((await podsOf(e, ns, 'complex')).map(nodeOf)).toEqual([nodeNames[2]]);
    await labelNode(nodeNames[2]!, { [color]: 'green' });
    await waitForSet(e, ns, 'complex', 'unscheduled', (d) => d.status?.desiredNumberScheduled === 0);
    await eventually('the pod removed', async () => (await podsOf(e, ns, 'complex')).length === 0);
  });

  it('recreates a daemon pod that failed', async () => {
    await createSet(e, ns, daemonSet(e, 'retry'));
    await waitForSet(e, ns, 'retry', 'rolled out', rolledOut(3));
    const victim = (await podsOf(e, ns, 'retry'))[0]!;
    await e.rest.request({
      method: 'PATCH',
      path: resourcePath(Resources.pods, ns, victim.metadata.name, 'status'),
      contentType: PatchType.merge,
      body: { status: { phase: 'Failed' } },
    });
    await eventually('a new pod on the failed pod’s node', async () => {
      const pods = await podsOf(e, ns, 'retry');
      return pods.some((p) => nodeOf(p) === nodeOf(victim) && p.metadata.uid !== victim.metadata.uid);
    });
    await waitForSet(e, ns, 'retry', 'rolled out again', rolledOut(3));
  });

  it('adopts an orphan pod its selector matches, keeping it', async () => {
    const ds = daemonSet(e, 'adopter', { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { paused: true } } });
    const orphan = await e.rest.request<Pod>({
      method: 'POST',
      path: resourcePath(Resources.pods, ns),
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'adopter-orphan', labels: { app: 'adopter' } },
        spec: { ...ds.spec.template.spec, nodeName: nodeNames[0] },
      },
    });
    const created = await createSet(e, ns, ds);
    await waitForSet(e, ns, 'adopter', 'a pod on every node', (d) => d.status?.currentNumberScheduled === 3);
    const pods = await podsOf(e, ns, 'adopter');
    expect(pods.map(nodeOf).sort()).toEqual(nodeNames);
    const adopted = pods.find((p) => p.metadata.uid === orphan.metadata.uid)!;
    expect(adopted.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: 'DaemonSet', uid: created.metadata!.uid, controller: true }),
    ]);
  });

  it('surging update with minReadySeconds: an old pod goes only once the new one has been ready that long', async () => {
    await createSet(
      e,
      ns,
      daemonSet(e, 'surge-min', {
        minReadySeconds: 2,
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      }),
    );
    await waitForSet(e, ns, 'surge-min', 'rolled out', rolledOut(3));
    // Per pod, as the watch saw it: node, image, when it turned Ready, when its deletion was seen
    // (its deletionTimestamp lies a grace period ahead, so it tells nothing).
    const seen = new Map<string, { node: string; image: string; readySince?: number; deleted?: number }>();
    const watch = await new Watch(e.k.kc).watch(
      `/api/v1/namespaces/${ns}/pods`,
      { labelSelector: 'app=surge-min' },
      (type: string, p: Pod) => {
        const ready = p.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True');
        const entry = seen.get(p.metadata.uid!) ?? { node: '', image: p.spec.containers[0]!.image! };
        entry.node = nodeOf(p) || entry.node;
        if (ready?.lastTransitionTime) entry.readySince ??= Date.parse(ready.lastTransitionTime);
        if (p.metadata.deletionTimestamp || type === 'DELETED') entry.deleted ??= Date.now();
        seen.set(p.metadata.uid!, entry);
      },
      () => undefined,
    );
    try {
      await patchSet(e, ns, 'surge-min', {
        spec: { template: { spec: { containers: [{ name: 'main', image: 'registry.local/agent:v2' }] } } },
      });
      await waitForSet(e, ns, 'surge-min', 'v2 rolled out', (d) => rolledOut(3)(d) && d.metadata?.generation === 2);
      await eventually('every old pod seen deleted', () =>
        Promise.resolve(
          [...seen.values()].filter((p) => p.image.endsWith(':v1') && p.deleted !== undefined).length === 3,
        ),
      );
    } finally {
      watch.abort();
    }
    for (const node of nodeNames) {
      const pods = [...seen.values()].filter((p) => p.node === node);
      const old = pods.find((p) => p.image.endsWith(':v1'))!;
      const fresh = pods.find((p) => p.image.endsWith(':v2'))!;
      expect(old.deleted! - fresh.readySince!, node).toBeGreaterThanOrEqual(2000);
    }
  });

  it('InPlaceIfPossible updates an image in place and recreates pods when the env changes', async () => {
    await createSet(
      e,
      ns,
      daemonSet(e, 'mixed', {
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible' } },
      }),
    );
    await waitForSet(e, ns, 'mixed', 'rolled out', rolledOut(3));
    const original = uidsByNode(await podsOf(e, ns, 'mixed'));
    const container = (image: string, env?: { name: string; value: string }[]) => ({
      spec: { template: { spec: { containers: [{ name: 'main', image, ...(env ? { env } : {}) }] } } },
    });
    await patchSet(e, ns, 'mixed', container('registry.local/agent:v2'));
    await waitForSet(e, ns, 'mixed', 'v2 in place', (d) => rolledOut(3)(d) && d.metadata?.generation === 2);
    expect(uidsByNode(await podsOf(e, ns, 'mixed'))).toEqual(original);
    await patchSet(e, ns, 'mixed', container('registry.local/agent:v2', [{ name: 'MODE', value: 'new' }]));
    await waitForSet(e, ns, 'mixed', 'env rolled out', (d) => rolledOut(3)(d) && d.metadata?.generation === 3);
    const recreated = await podsOf(e, ns, 'mixed');
    for (const p of recreated) {
      expect(p.metadata.uid).not.toBe(original[nodeOf(p)]);
      expect(p.spec.containers[0]!.env).toEqual([{ name: 'MODE', value: 'new' }]);
    }
  });
});
