import type { ContainerRecreateRequest, CrrStrategy } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { planPodRecreation, type PodRuntimeContainer, type SyncedStatus } from './plan.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const SYNC = 'crr.apps.kruise.io/sync-container-statuses';

function crr(
  name: string,
  strategy: CrrStrategy = {},
  opts: { phase?: string; created?: string; annotations?: Record<string, string> } = {},
): ContainerRecreateRequest {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ContainerRecreateRequest',
    metadata: {
      name,
      namespace: 'ns',
      creationTimestamp: opts.created ?? '2026-01-01T00:00:00Z',
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
    },
    spec: {
      podName: 'web-0',
      containers: ['app', 'side'].map((n) => ({
        name: n,
        statusContext: { containerID: `containerd://${n}-1`, restartCount: 0 },
      })),
      strategy: { failurePolicy: 'Fail', terminationGracePeriodSeconds: 5, ...strategy },
    },
    ...(opts.phase ? { status: { phase: opts.phase } } : {}),
  };
}

const running = (name: string, id = `${name}-1`, startedAtMs = T0 - 60_000): PodRuntimeContainer => ({
  id,
  podSandboxId: 'sb',
  name,
  attempt: 0,
  state: 'CONTAINER_RUNNING',
  createdAtMs: startedAtMs,
  startedAtMs,
  labels: {},
});

const synced = (list: SyncedStatus[]): Record<string, string> => ({ [SYNC]: JSON.stringify(list) });

describe('planPodRecreation', () => {
  it('stops every running container at once and marks them killed', () => {
    const plan = planPodRecreation([crr('r')], [running('app'), running('side')], T0);
    expect(plan.kills.map((k) => [k.name, k.containerId, k.graceSeconds])).toEqual([
      ['app', 'app-1', 5],
      ['side', 'side-1', 5],
    ]);
    expect(plan.statuses.get('r')).toEqual({
      phase: 'Recreating',
      containerRecreateStates: [
        { name: 'app', phase: 'Recreating', isKilled: true },
        { name: 'side', phase: 'Recreating', isKilled: true },
      ],
    });
  });

  it('with orderedRecreate stops the next container only when the previous one succeeded', () => {
    const first = planPodRecreation([crr('r', { orderedRecreate: true })], [running('app'), running('side')], T0);
    expect(first.kills.map((k) => k.name)).toEqual(['app']);
    expect(first.statuses.get('r')?.containerRecreateStates?.[1]).toEqual({ name: 'side', phase: 'Pending' });
    const after = crr(
      'r',
      { orderedRecreate: true },
      {
        phase: 'Recreating',
        annotations: synced([{ name: 'app', ready: true, restartCount: 1, containerID: 'containerd://app-2' }]),
      },
    );
    after.status!.containerRecreateStates = first.statuses.get('r')!.containerRecreateStates;
    const second = planPodRecreation([after], [running('app', 'app-2', T0 - 1000), running('side')], T0);
    expect(second.kills.map((k) => k.name)).toEqual(['side']);
    expect(second.statuses.get('r')?.containerRecreateStates?.[0]).toEqual({
      name: 'app',
      phase: 'Succeeded',
      isKilled: true,
    });
  });

  it('completes when every container restarted, is ready and ran minStartedSeconds', () => {
    const c = crr(
      'r',
      { minStartedSeconds: 10 },
      {
        phase: 'Recreating',
        annotations: synced([
          { name: 'app', ready: true, restartCount: 1, containerID: 'containerd://app-2' },
          { name: 'side', ready: true, restartCount: 1, containerID: 'containerd://side-2' },
        ]),
      },
    );
    c.status!.containerRecreateStates = [
      { name: 'app', phase: 'Recreating', isKilled: true },
      { name: 'side', phase: 'Recreating', isKilled: true },
    ];
    const runtime = [running('app', 'app-2', T0 - 4000), running('side', 'side-2', T0 - 20_000)];
    const early = planPodRecreation([c], runtime, T0);
    expect(early.statuses.get('r')?.phase).toBe('Recreating');
    expect(early.requeueAfterMs).toBe(6000);
    const done = planPodRecreation([c], runtime, T0 + 6000);
    expect(done.statuses.get('r')).toMatchObject({ phase: 'Completed', completionTime: '2026-01-01T00:00:06Z' });
    expect(done.kills).toEqual([]);
  });

  it('with forceRecreate stops a container even though it restarted meanwhile', () => {
    const c = crr(
      'r',
      { forceRecreate: true },
      {
        annotations: synced([{ name: 'app', ready: true, restartCount: 1, containerID: 'containerd://app-2' }]),
      },
    );
    const plan = planPodRecreation([c], [running('app', 'app-2'), running('side')], T0);
    expect(plan.kills.map((k) => k.containerId)).toEqual(['app-2', 'side-1']);
  });

  it('waits for the unready-acquired annotation and the grace before stopping anything', () => {
    const waiting = planPodRecreation([crr('r', { unreadyGracePeriodSeconds: 3 })], [running('app')], T0);
    expect(waiting.kills).toEqual([]);
    expect(waiting.statuses.get('r')).toEqual({ phase: 'Recreating' });
    const acquired = crr(
      'r',
      { unreadyGracePeriodSeconds: 3 },
      {
        phase: 'Recreating',
        annotations: { 'crr.apps.kruise.io/unready-acquired': '2026-01-01T00:00:00Z' },
      },
    );
    expect(planPodRecreation([acquired], [running('app')], T0 + 1000).requeueAfterMs).toBe(2000);
    expect(planPodRecreation([acquired], [running('app')], T0 + 3000).kills.map((k) => k.name)).toEqual(['app']);
  });

  it('serves one CRR per pod: Recreating first, then the oldest; new ones wait Pending', () => {
    const older = crr('older', {}, { created: '2026-01-01T00:00:00Z' });
    const newer = crr('newer', {}, { created: '2026-01-01T00:00:05Z' });
    const plan = planPodRecreation([newer, older], [running('app'), running('side')], T0);
    expect(plan.statuses.get('older')?.phase).toBe('Recreating');
    expect(plan.statuses.get('newer')).toEqual({ phase: 'Pending' });
    const busy = crr('busy', {}, { phase: 'Recreating', created: '2026-01-01T00:00:09Z' });
    const next = planPodRecreation([older, busy], [running('app'), running('side')], T0);
    expect(next.kills.every((k) => k.crr.metadata?.name === 'busy')).toBe(true);
  });

  it('does not stop an exited container (the kubelet restarts it) and writes nothing unchanged', () => {
    const exited = [running('app'), running('side')].map((c) => ({ ...c, state: 'CONTAINER_EXITED' as const }));
    const plan = planPodRecreation([crr('r')], exited, T0);
    expect(plan.kills).toEqual([]);
    const c = crr('r', {}, { phase: 'Recreating' });
    c.status!.containerRecreateStates = plan.statuses.get('r')!.containerRecreateStates;
    expect(planPodRecreation([c], exited, T0).statuses.size).toBe(0);
  });

  it('completes at once when a container failed under failurePolicy Fail', () => {
    const c = crr('r', {}, { phase: 'Recreating' });
    c.status!.containerRecreateStates = [
      { name: 'app', phase: 'Failed', message: 'stop failed' },
      { name: 'side', phase: 'Recreating', isKilled: true },
    ];
    expect(planPodRecreation([c], [running('side')], T0).statuses.get('r')).toMatchObject({
      phase: 'Completed',
      message: 'app: stop failed',
    });
  });

  it('fails a container the runtime has never had, with a message', () => {
    const plan = planPodRecreation([crr('r', { failurePolicy: 'Ignore' })], [running('side')], T0);
    expect(plan.statuses.get('r')?.containerRecreateStates?.[0]).toEqual({
      name: 'app',
      phase: 'Failed',
      message: "container app not found in the pod's runtime containers",
    });
    expect(plan.kills.map((k) => k.name)).toEqual(['side']);
  });

  it('passes an httpGet preStop hook on with its named port resolved', () => {
    const c = crr('r');
    c.spec.containers[0] = {
      ...c.spec.containers[0]!,
      preStop: { httpGet: { port: 'admin', path: '/quit' } },
      ports: [{ name: 'admin', containerPort: 8081 }],
    };
    const plan = planPodRecreation([c], [running('app'), running('side')], T0);
    expect(plan.kills[0]?.preStopHttp).toEqual({ scheme: 'http', host: undefined, port: 8081, path: '/quit' });
    expect(plan.kills[0]?.podSandboxId).toBe('sb');
  });
});
