/**
 * ContainerRecreateRequests end to end: the manager and the node daemon in-process against the
 * run's last cluster, the daemon stopping real containers in a real containerd through the CRI,
 * and the kubelet stand-in (harness.ts) restarting them and reporting it in the pod status.
 * OpenKruise's e2e scenarios (simple, preStop hook, by force, ordered) each have a case here.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContainerRecreateRequest } from '@flotilla/api';
import { eventually, podCondition, strategicPatch } from '../helpers/kube.js';
import { startCrrEnv, type CrrEnv } from './harness.js';

let env: CrrEnv;

beforeAll(async () => {
  env = await startCrrEnv();
}, 120_000);

afterAll(async () => {
  await env?.stop();
}, 60_000);

/** Creates a CRR as it stands, bypassing the webhook (as a client would without the agent's webhook). */
const postCrr = (name: string, labels: Record<string, string>, spec: Record<string, unknown>) =>
  env.rest.request({
    method: 'POST',
    path: `/apis/apps.kruise.io/v1alpha1/namespaces/${env.ns}/containerrecreaterequests`,
    body: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'ContainerRecreateRequest', metadata: { name, labels }, spec },
  });

const finished = (name: string) =>
  eventually(`CRR ${name} finished`, async () => {
    const crr = await env.getCrr(name);
    return (crr?.status?.phase === 'Completed' || crr?.status?.phase === 'Failed') && crr;
  });

describe('ContainerRecreateRequest', () => {
  it('stops the named container in containerd, the kubelet restarts it, and the CRR completes', async () => {
    const pod = await env.runPod('one', ['app', 'side']);
    const sideBefore = pod.status!.containerStatuses!.find((s) => s.name === 'side')!.containerID;
    await env.createCrr('restart-app', pod, { containers: [{ name: 'app' }], strategy: { minStartedSeconds: 1 } });
    const crr = await finished('restart-app');
    expect(crr.status).toMatchObject({
      phase: 'Completed',
      containerRecreateStates: [{ name: 'app', phase: 'Succeeded', isKilled: true }],
    });
    // The controller drops the active label once it sees the daemon's Completed status.
    await eventually('the active label dropped', async () => {
      const now = await env.getCrr('restart-app');
      return now?.metadata?.labels?.['crr.apps.kruise.io/active'] === undefined;
    });
    const after = await env.k.core.readNamespacedPod({ namespace: env.ns, name: 'one' });
    const app = after.status!.containerStatuses!.find((s) => s.name === 'app')!;
    expect(app.restartCount).toBe(1);
    expect(app.containerID).not.toBe(pod.status!.containerStatuses!.find((s) => s.name === 'app')!.containerID);
    expect(after.status!.containerStatuses!.find((s) => s.name === 'side')!.containerID).toBe(sideBefore);
    expect(await env.realState('one', 'side')).toBe('CONTAINER_RUNNING');
    expect(await env.realState('one', 'app')).toBe('CONTAINER_RUNNING');
    const events = await eventually('the Killing event on the pod', async () => {
      const list = await env.k.core.listNamespacedEvent({
        namespace: env.ns,
        fieldSelector: 'involvedObject.name=one',
      });
      return list.items.find((e) => e.reason === 'Killing');
    });
    expect(events.message).toBe('Stopping container app by ContainerRecreateRequest restart-app');
  });

  it('with orderedRecreate stops the second container only after the first is back', async () => {
    const pod = await env.runPod('ordered', ['first', 'second']);
    const from = env.stopped.length;
    await env.createCrr('ordered', pod, {
      containers: [{ name: 'second' }, { name: 'first' }],
      strategy: { orderedRecreate: true },
    });
    const crr = await finished('ordered');
    expect(crr.status?.phase).toBe('Completed');
    expect(env.stopped.slice(from)).toEqual(['second', 'first']);
  });

  it('with forceRecreate stops containers even when they restarted after the request was written', async () => {
    const pod = await env.runPod('forced', ['app', 'side']);
    await env.createCrr('forced-first', pod, { containers: [{ name: 'app' }] });
    expect((await finished('forced-first')).status?.phase).toBe('Completed');
    const from = env.stopped.length;
    // `pod` is the snapshot from before that restart: the status context still says restartCount 0.
    await env.createCrr('forced', pod, {
      containers: [{ name: 'app' }, { name: 'side' }],
      strategy: { forceRecreate: true, orderedRecreate: true },
    });
    const crr = await finished('forced');
    expect(crr.status).toMatchObject({
      phase: 'Completed',
      containerRecreateStates: [
        { name: 'app', phase: 'Succeeded', isKilled: true },
        { name: 'side', phase: 'Succeeded', isKilled: true },
      ],
    });
    expect(env.stopped.slice(from)).toEqual(['app', 'side']);
    const after = await env.k.core.readNamespacedPod({ namespace: env.ns, name: 'forced' });
    const restarts = Object.fromEntries(after.status!.containerStatuses!.map((s) => [s.name, s.restartCount]));
    expect(restarts).toEqual({ app: 2, side: 1 });
  });

  it('ends Failed with a message for a pod on a node that does not exist, and goes after its TTL', async () => {
    await env.k.core.createNamespacedPod({
      namespace: env.ns,
      body: {
        metadata: { name: 'stranded' },
        spec: { nodeName: 'no-such-node', containers: [{ name: 'app', image: 'x' }] },
      },
    });
    await postCrr(
      'stranded',
      { 'crr.apps.kruise.io/node-name': 'no-such-node' },
      { podName: 'stranded', containers: [{ name: 'app' }], ttlSecondsAfterFinished: 2 },
    );
    const crr = await finished('stranded');
    expect(crr.status).toMatchObject({ phase: 'Failed', message: 'node no-such-node of the pod does not exist' });
    await eventually('CRR deleted after its TTL', async () => (await env.getCrr('stranded')) === undefined, 15_000);
  });

  it('fails a container the pod does not have, with a message', async () => {
    const pod = await env.runPod('missing', ['app']);
    await postCrr(
      'missing',
      {
        'crr.apps.kruise.io/node-name': env.node,
        'crr.apps.kruise.io/pod-uid': pod.metadata!.uid!,
        'crr.apps.kruise.io/pod-name': 'missing',
        'crr.apps.kruise.io/active': 'true',
      },
      { podName: 'missing', containers: [{ name: 'ghost' }], strategy: { failurePolicy: 'Fail' } },
    );
    const crr = await finished('missing');
    expect(crr.status).toMatchObject({
      phase: 'Completed',
      containerRecreateStates: [{ name: 'ghost', phase: 'Failed' }],
    });
    expect(crr.status?.message).toContain("container ghost not found in the pod's runtime containers");
  });

  it('with unreadyGracePeriodSeconds holds KruisePodReady False while recreating, then True again', async () => {
    const pod = await env.runPod('gated', ['app'], { readinessGates: [{ conditionType: 'KruisePodReady' }] });
    await env.k.core.patchNamespacedPodStatus(
      {
        namespace: env.ns,
        name: 'gated',
        body: { status: { conditions: [{ type: 'KruisePodReady', status: 'True' }] } },
      },
      strategicPatch,
    );
    const seen = new Set<string>();
    const watch = setInterval(() => {
      void env.k.core
        .readNamespacedPod({ namespace: env.ns, name: 'gated' })
        .then((p) => seen.add(podCondition(p, 'KruisePodReady') ?? ''))
        .catch(() => undefined);
    }, 100);
    try {
      await env.createCrr('gated', pod, { containers: [{ name: 'app' }], strategy: { unreadyGracePeriodSeconds: 1 } });
      const crr: ContainerRecreateRequest = await finished('gated');
      expect(crr.status?.phase).toBe('Completed');
      expect(crr.metadata?.annotations?.['crr.apps.kruise.io/unready-acquired']).toBeDefined();
      const released = await eventually('finalizer released and pod ready again', async () => {
        const c = await env.getCrr('gated');
        const p = await env.k.core.readNamespacedPod({ namespace: env.ns, name: 'gated' });
        return (c?.metadata?.finalizers ?? []).length === 0 && podCondition(p, 'KruisePodReady') === 'True' && p;
      });
      expect(released.status!.containerStatuses![0]!.restartCount).toBe(1);
      expect(seen.has('False')).toBe(true);
    } finally {
      clearInterval(watch);
    }
  });

  it('calls the container’s httpGet preStop hook before stopping it', async () => {
    const hits: string[] = [];
    const server = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      // The sandbox is on the host network, so the hook reaches 127.0.0.1 as the pod's own address.
      const pod = await env.runPod('hooked', ['app'], {
        containers: [
          {
            name: 'app',
            image: 'flotilla.test/pause:1',
            lifecycle: { preStop: { httpGet: { port, path: '/prestop' } } },
          },
        ],
      });
      await env.createCrr('hooked', pod, { containers: [{ name: 'app' }] });
      const crr = await finished('hooked');
      expect(crr.status?.phase).toBe('Completed');
      expect(crr.spec.containers[0]?.preStop).toMatchObject({ httpGet: { port, path: '/prestop' } });
      expect(hits).toEqual(['/prestop']);
    } finally {
      server.close();
    }
  });
});
