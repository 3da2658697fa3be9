import { describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { cluster } from '../helpers/context.js';
import {
  eventually,
  isPodReady,
  kube,
  mergePatch,
  podCondition,
  simplePod,
  strategicPatch,
  testNamespace,
  type Kube,
} from '../helpers/kube.js';

async function readyPod(k: Kube, ns: string, pod: V1Pod): Promise<V1Pod> {
  await k.core.createNamespacedPod({ namespace: ns, body: pod });
  return eventually(`pod ${pod.metadata!.name} Ready`, async () => {
    const p = await k.core.readNamespacedPod({ name: pod.metadata!.name!, namespace: ns });
    return isPodReady(p) && p;
  });
}

describe('test clusters behave like real ones for pods', () => {
  const k = kube(cluster(0));

  it('schedules a Deployment onto kwok nodes in two clusters at once and its pods become Ready', async () => {
    const targets = [kube(cluster(0)), kube(cluster(1))];
    await Promise.all(
      targets.map(async (t) => {
        const ns = await testNamespace(t, 'deploy');
        await t.apps.createNamespacedDeployment({
          namespace: ns,
          body: {
            metadata: { name: 'web' },
            spec: {
              replicas: 3,
              selector: { matchLabels: { app: 'web' } },
              template: {
                metadata: { labels: { app: 'web' } },
                spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
              },
            },
          },
        });
        const d = await eventually('deployment available', async () => {
          const d = await t.apps.readNamespacedDeployment({ name: 'web', namespace: ns });
          return d.status?.readyReplicas === 3 && d.status?.availableReplicas === 3 && d;
        });
        expect(d.status?.replicas).toBe(3);
        const pods = await t.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' });
        const nodes = (await t.core.listNode()).items.filter((n) => n.metadata?.labels?.type === 'kwok');
        for (const p of pods.items) {
          expect(nodes.map((n) => n.metadata?.name)).toContain(p.spec?.nodeName);
          expect(p.status?.podIP).toBeTruthy();
          expect(isPodReady(p)).toBe(true);
        }
      }),
    );
  });

  it('updates a container image in place: same UID, new imageID, restartCount+1, lastState', async () => {
    const ns = await testNamespace(k, 'inplace');
    const before = await readyPod(k, ns, simplePod('p', 'registry.local/app:v1'));
    const oldStatus = before.status!.containerStatuses![0]!;
    expect(oldStatus.restartCount).toBe(0);
    await k.core.patchNamespacedPod(
      { name: 'p', namespace: ns, body: { spec: { containers: [{ name: 'main', image: 'registry.local/app:v2' }] } } },
      strategicPatch,
    );
    const after = await eventually('container status to show v2', async () => {
      const p = await k.core.readNamespacedPod({ name: 'p', namespace: ns });
      return p.status?.containerStatuses?.[0]?.image === 'registry.local/app:v2' && p;
    });
    const s = after.status!.containerStatuses![0]!;
    expect(after.metadata!.uid).toBe(before.metadata!.uid);
    expect(s.imageID).not.toBe(oldStatus.imageID);
    expect(s.imageID).toContain('registry.local/app:v2@sha256:');
    expect(s.restartCount).toBe(1);
    expect(s.lastState?.terminated?.reason).toBe('Completed');
    expect(isPodReady(after)).toBe(true);
  });

  it('keeps a pod unready until the test sets its readiness gate condition', async () => {
    const ns = await testNamespace(k, 'gates');
    await k.core.createNamespacedPod({
      namespace: ns,
      body: simplePod('gated', 'registry.local/app:v1', { readinessGates: [{ conditionType: 'example.com/gate' }] }),
    });
    const running = await eventually('pod running', async () => {
      const p = await k.core.readNamespacedPod({ name: 'gated', namespace: ns });
      return p.status?.phase === 'Running' && p;
    });
    expect(podCondition(running, 'ContainersReady')).toBe('True');
    // Give kwok time to (wrongly) flip it; it must not.
    await new Promise((r) => setTimeout(r, 1500));
    const still = await k.core.readNamespacedPod({ name: 'gated', namespace: ns });
    expect(podCondition(still, 'Ready')).toBe('False');
    expect(podCondition(still, 'example.com/gate')).toBeUndefined();

    await k.core.patchNamespacedPodStatus(
      {
        name: 'gated',
        namespace: ns,
        body: {
          status: { conditions: [{ type: 'example.com/gate', status: 'True', lastTransitionTime: new Date() }] },
        },
      },
      strategicPatch,
    );
    const ready = await eventually('pod Ready after gate', async () => {
      const p = await k.core.readNamespacedPod({ name: 'gated', namespace: ns });
      return isPodReady(p) && p;
    });
    expect(podCondition(ready, 'example.com/gate')).toBe('True');

    // Setting the gate back to False makes the pod unready again.
    await k.core.patchNamespacedPodStatus(
      {
        name: 'gated',
        namespace: ns,
        body: { status: { conditions: [{ type: 'example.com/gate', status: 'False' }] } },
      },
      strategicPatch,
    );
    await eventually('pod unready after gate False', async () => {
      const p = await k.core.readNamespacedPod({ name: 'gated', namespace: ns });
      return podCondition(p, 'Ready') === 'False';
    });
  });

  it('keeps a pod with a finalizer Terminating until the finalizer is removed', async () => {
    const ns = await testNamespace(k, 'fin');
    const pod = simplePod('held', 'registry.local/app:v1');
    pod.metadata!.finalizers = ['example.com/hold'];
    await readyPod(k, ns, pod);
    await k.core.deleteNamespacedPod({ name: 'held', namespace: ns });
    await new Promise((r) => setTimeout(r, 1500));
    const terminating = await k.core.readNamespacedPod({ name: 'held', namespace: ns });
    expect(terminating.metadata?.deletionTimestamp).toBeTruthy();
    await k.core.patchNamespacedPod(
      { name: 'held', namespace: ns, body: { metadata: { finalizers: null } } },
      mergePatch,
    );
    await eventually('pod gone', async () => {
      const list = await k.core.listNamespacedPod({ namespace: ns });
      return list.items.length === 0;
    });
  });

  it('garbage-collects the pods of a deleted ReplicaSet', async () => {
    const ns = await testNamespace(k, 'gc');
    await k.apps.createNamespacedReplicaSet({
      namespace: ns,
      body: {
        metadata: { name: 'rs' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'rs' } },
          template: {
            metadata: { labels: { app: 'rs' } },
            spec: { containers: [{ name: 'c', image: 'registry.local/app:v1' }] },
          },
        },
      },
    });
    await eventually('two pods', async () => {
      const list = await k.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=rs' });
      return list.items.length === 2;
    });
    await k.apps.deleteNamespacedReplicaSet({ name: 'rs', namespace: ns, propagationPolicy: 'Background' });
    await eventually('pods collected', async () => {
      const list = await k.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=rs' });
      return list.items.length === 0;
    });
  });

  it('never makes a pod with a -broken image Ready', async () => {
    const ns = await testNamespace(k, 'broken');
    await k.core.createNamespacedPod({ namespace: ns, body: simplePod('bad', 'registry.local/app:v2-broken') });
    const running = await eventually('broken pod running', async () => {
      const p = await k.core.readNamespacedPod({ name: 'bad', namespace: ns });
      return p.status?.phase === 'Running' && p;
    });
    expect(running.status?.containerStatuses?.[0]?.ready).toBe(false);
    await new Promise((r) => setTimeout(r, 1500));
    const later = await k.core.readNamespacedPod({ name: 'bad', namespace: ns });
    expect(podCondition(later, 'Ready')).toBe('False');
    expect(podCondition(later, 'ContainersReady')).toBe('False');

    // Fixing the image in place makes it Ready: a rollback of a broken canary.
    await k.core.patchNamespacedPod(
      {
        name: 'bad',
        namespace: ns,
        body: { spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] } },
      },
      strategicPatch,
    );
    await eventually('fixed pod Ready', async () =>
      isPodReady(await k.core.readNamespacedPod({ name: 'bad', namespace: ns })),
    );
  });
});
