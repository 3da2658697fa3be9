import type { ContainerRecreateRequest } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../kube/types.js';
import {
  DAEMON_RESPONSE_TIMEOUT_MS,
  MESSAGE_DEADLINE,
  MESSAGE_DAEMON_SILENT,
  MESSAGE_POD_GONE,
  planContainerRecreateRequest,
  type CrrNode,
  type CrrObserved,
} from './plan.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const ACQUIRED = 'crr.apps.kruise.io/unready-acquired';

function crr(over: Partial<ContainerRecreateRequest['spec']> = {}, phase?: string): ContainerRecreateRequest {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ContainerRecreateRequest',
    metadata: {
      name: 'r',
      namespace: 'ns',
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { 'crr.apps.kruise.io/pod-uid': 'pod-uid', 'crr.apps.kruise.io/active': 'true' },
    },
    spec: { podName: 'web-0', containers: [{ name: 'app' }], ...over },
    ...(phase ? { status: { phase } } : {}),
  };
}

const pod = (gated = true): Pod => ({
  metadata: { name: 'web-0', namespace: 'ns', uid: 'pod-uid' },
  spec: {
    nodeName: 'n1',
    containers: [{ name: 'app', image: 'x' }],
    ...(gated ? { readinessGates: [{ conditionType: 'KruisePodReady' }] } : {}),
  },
  status: {
    conditions: [
      { type: 'KruisePodReady', status: 'True' },
      { type: 'Ready', status: 'True' },
      { type: 'ContainersReady', status: 'True' },
    ],
    containerStatuses: [{ name: 'app', ready: true, restartCount: 1, containerID: 'containerd://b' }],
  },
});

const node = (ready = 'True'): CrrNode => ({
  metadata: { name: 'n1' },
  status: { conditions: [{ type: 'Ready', status: ready }] },
});

const observed = (o: Partial<CrrObserved>): CrrObserved => ({ crr: crr(), pod: pod(), node: node(), now: T0, ...o });

describe('planContainerRecreateRequest', () => {
  it('ends Failed with a message when the pod is gone or replaced', () => {
    expect(planContainerRecreateRequest(observed({ pod: undefined })).status).toMatchObject({
      phase: 'Failed',
      message: MESSAGE_POD_GONE,
    });
    const replaced = { ...pod(), metadata: { ...pod().metadata, uid: 'other' } };
    expect(planContainerRecreateRequest(observed({ pod: replaced })).status?.message).toBe(MESSAGE_POD_GONE);
  });

  it('ends Failed when the pod’s node is NotReady or gone (no daemon will act)', () => {
    expect(planContainerRecreateRequest(observed({ node: node('Unknown') })).status).toMatchObject({
      phase: 'Failed',
      message: 'node n1 of the pod is not ready',
    });
    expect(planContainerRecreateRequest(observed({ node: undefined })).status?.message).toBe(
      'node n1 of the pod does not exist',
    );
  });

  it('ends Failed past activeDeadlineSeconds, else requeues for it', () => {
    const c = crr({ activeDeadlineSeconds: 30 }, 'Recreating');
    expect(planContainerRecreateRequest(observed({ crr: c, now: T0 + 10_000 })).requeueAfterMs).toBe(20_000);
    expect(planContainerRecreateRequest(observed({ crr: c, now: T0 + 30_000 })).status).toEqual({
      phase: 'Failed',
      message: MESSAGE_DEADLINE,
      completionTime: '2026-01-01T00:00:30Z',
    });
  });

  it('ends Failed when the daemon never set a phase within a minute', () => {
    const plan = planContainerRecreateRequest(observed({ now: T0 + DAEMON_RESPONSE_TIMEOUT_MS }));
    expect(plan.status?.message).toBe(MESSAGE_DAEMON_SILENT);
  });

  it('takes the pod out of service step by step with unreadyGracePeriodSeconds', () => {
    const c = crr({ strategy: { unreadyGracePeriodSeconds: 3 } }, 'Pending');
    expect(planContainerRecreateRequest(observed({ crr: c })).finalizer).toBe('add');
    c.metadata!.finalizers = ['crr.apps.kruise.io/unready-acquired'];
    const keyed = planContainerRecreateRequest(observed({ crr: c }));
    expect(keyed.podConditions[0]).toMatchObject({
      type: 'KruisePodReady',
      status: 'False',
      message: JSON.stringify([{ userAgent: 'ContainerRecreateRequest', key: 'ns/r' }]),
    });
    expect(keyed.annotations[ACQUIRED]).toBeUndefined();
    const p = pod();
    p.status!.conditions![0] = keyed.podConditions[0]!;
    expect(planContainerRecreateRequest(observed({ crr: c, pod: p })).annotations[ACQUIRED]).toBe(
      '2026-01-01T00:00:00Z',
    );
  });

  it('acquires without a key when the pod has no KruisePodReady gate', () => {
    const c = crr({ strategy: { unreadyGracePeriodSeconds: 3 } }, 'Pending');
    c.metadata!.finalizers = ['crr.apps.kruise.io/unready-acquired'];
    const plan = planContainerRecreateRequest(observed({ crr: c, pod: pod(false) }));
    expect(plan.podConditions).toEqual([]);
    expect(plan.annotations[ACQUIRED]).toBeDefined();
  });

  it('syncs the container statuses while Recreating, only when they changed', () => {
    const c = crr({}, 'Recreating');
    const plan = planContainerRecreateRequest(observed({ crr: c }));
    const synced = JSON.stringify([{ name: 'app', ready: true, restartCount: 1, containerID: 'containerd://b' }]);
    expect(plan.annotations['crr.apps.kruise.io/sync-container-statuses']).toBe(synced);
    c.metadata!.annotations = { 'crr.apps.kruise.io/sync-container-statuses': synced };
    expect(planContainerRecreateRequest(observed({ crr: c })).annotations).toEqual({});
  });

  it('after completion releases the key and finalizer, drops active, deletes after the TTL', () => {
    const c = crr({ ttlSecondsAfterFinished: 60 }, 'Completed');
    c.status!.completionTime = '2026-01-01T00:00:00Z';
    c.metadata!.finalizers = ['crr.apps.kruise.io/unready-acquired'];
    const p = pod();
    p.status!.conditions![0] = {
      type: 'KruisePodReady',
      status: 'False',
      message: JSON.stringify([{ userAgent: 'ContainerRecreateRequest', key: 'ns/r' }]),
    };
    const plan = planContainerRecreateRequest(observed({ crr: c, pod: p, now: T0 + 1000 }));
    expect(plan.podConditions[0]).toMatchObject({ type: 'KruisePodReady', status: 'True' });
    expect(plan.finalizer).toBe('remove');
    expect(plan.labels).toEqual({ 'crr.apps.kruise.io/active': null });
    expect(plan.delete).toBe(false);
    expect(plan.requeueAfterMs).toBe(59_000);
    expect(planContainerRecreateRequest(observed({ crr: c, pod: p, now: T0 + 60_000 })).delete).toBe(true);
  });

  it('writes nothing for a running CRR with nothing to do', () => {
    const plan = planContainerRecreateRequest(observed({ crr: crr({}, 'Pending') }));
    expect(plan).toEqual({ podConditions: [], labels: {}, annotations: {}, delete: false, requeueAfterMs: undefined });
  });
});
