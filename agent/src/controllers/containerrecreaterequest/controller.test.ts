import type { ContainerRecreateRequest, CrrStatus } from '@flotilla/api';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { Pod, PodCondition } from '../../kube/types.js';
import { FakeClock } from '../../runtime/testing/index.js';
import type { CrrClient, CrrMetadataPatch } from './client.js';
import { crrReconciler } from './controller.js';
import type { CrrNode } from './plan.js';

/** Records every write, in order. */
class RecordingClient implements CrrClient {
  readonly writes: string[] = [];
  readonly metadata: CrrMetadataPatch[] = [];
  readonly statuses: CrrStatus[] = [];
  patchPodConditions(_ns: string, pod: string, conditions: PodCondition[]): Promise<void> {
    this.writes.push(`pod ${pod} ${conditions.map((c) => `${c.type}=${c.status}`).join(',')}`);
    return Promise.resolve();
  }
  patchMetadata(crr: ContainerRecreateRequest, patch: CrrMetadataPatch): Promise<void> {
    this.writes.push(`metadata ${crr.metadata?.name}`);
    this.metadata.push(patch);
    return Promise.resolve();
  }
  patchStatus(crr: ContainerRecreateRequest, status: CrrStatus): Promise<void> {
    this.writes.push(`status ${crr.metadata?.name} ${status.phase}`);
    this.statuses.push(status);
    return Promise.resolve();
  }
  delete(crr: ContainerRecreateRequest): Promise<void> {
    this.writes.push(`delete ${crr.metadata?.name}`);
    return Promise.resolve();
  }
}

const store = <T extends { metadata?: { name?: string } }>(items: T[]) => ({
  get: (_ns: string | undefined, name: string) => items.find((i) => i.metadata?.name === name),
});

const clock = new FakeClock(Date.parse('2026-01-01T00:00:10Z'));
const ctx = { signal: new AbortController().signal, log: pino({ level: 'silent' }), namespace: 'ns' };

function crr(phase: string, extra: Partial<ContainerRecreateRequest['metadata']> = {}): ContainerRecreateRequest {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ContainerRecreateRequest',
    metadata: { name: 'r', namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z', ...extra },
    spec: { podName: 'web-0', containers: [{ name: 'app' }], ttlSecondsAfterFinished: 5 },
    status: { phase, completionTime: '2026-01-01T00:00:00Z' },
  };
}

const pod: Pod = {
  metadata: { name: 'web-0', namespace: 'ns', uid: 'u' },
  spec: {
    nodeName: 'n1',
    containers: [{ name: 'app', image: 'x' }],
    readinessGates: [{ conditionType: 'KruisePodReady' }],
  },
  status: {
    conditions: [
      {
        type: 'KruisePodReady',
        status: 'False',
        message: JSON.stringify([{ userAgent: 'ContainerRecreateRequest', key: 'ns/r' }]),
      },
    ],
  },
};
const node: CrrNode = { metadata: { name: 'n1' }, status: { conditions: [{ type: 'Ready', status: 'True' }] } };

describe('crrReconciler', () => {
  it('releases the pod before the finalizer, then deletes the CRR after its TTL', async () => {
    const client = new RecordingClient();
    const finished = crr('Completed', { finalizers: ['crr.apps.kruise.io/unready-acquired'] });
    const reconcile = crrReconciler({
      crrs: store([finished]),
      pods: store([pod]),
      nodes: store([node]),
      client,
      clock,
    });
    await reconcile('ns/r', { ...ctx, name: 'r' });
    expect(client.writes).toEqual(['pod web-0 KruisePodReady=True', 'metadata r', 'delete r']);
    expect(client.metadata).toEqual([{ finalizers: [] }]);
  });

  it('writes nothing for an unfinished CRR with nothing to change, and looks again before its deadline', async () => {
    const client = new RecordingClient();
    const pending = crr('Pending');
    pending.spec.activeDeadlineSeconds = 30;
    const calm: Pod = { ...pod, spec: { ...pod.spec, readinessGates: [] } };
    const reconcile = crrReconciler({
      crrs: store([pending]),
      pods: store([calm]),
      nodes: store([node]),
      client,
      clock,
    });
    const result = await reconcile('ns/r', { ...ctx, name: 'r' });
    expect(client.writes).toEqual([]);
    expect(result).toEqual({ requeueAfter: 20_000 });
  });
});
