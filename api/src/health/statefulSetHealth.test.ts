import { describe, expect, it } from 'vitest';
import { statefulSetHealth, type StatefulSetHealthInput } from './statefulSetHealth.js';

function set(
  status: NonNullable<StatefulSetHealthInput['status']>,
  rollingUpdate: Record<string, unknown> = {},
  spec: Record<string, unknown> = {},
): StatefulSetHealthInput {
  return {
    metadata: { generation: 3 },
    spec: { replicas: 4, updateStrategy: { type: 'RollingUpdate', rollingUpdate }, ...spec },
    status: { observedGeneration: 3, updateRevision: 'web-abc', ...status },
  };
}
const all = { replicas: 4, readyReplicas: 4, availableReplicas: 4, updatedReplicas: 4, updatedReadyReplicas: 4 };

describe('statefulSetHealth', () => {
  it('is Healthy when every pod is updated and ready at the target revision', () => {
    expect(statefulSetHealth(set(all), 'web-abc')).toMatchObject({ state: 'Healthy', reason: 'Updated' });
  });

  it('counts a partition step as done once the pods above it are updated and ready', () => {
    const step = set({ ...all, updatedReplicas: 1, updatedReadyReplicas: 1 }, { partition: 3 });
    expect(statefulSetHealth(step, 'web-abc')).toMatchObject({ state: 'Healthy' });
    const waiting = set({ ...all, updatedReplicas: 1, updatedReadyReplicas: 0 }, { partition: 2 });
    expect(statefulSetHealth(waiting).reason).toBe('WaitingForUpdatedPods');
  });

  it('is Stale before the status observed the spec, Progressing at another revision, Degraded on FailedCreatePod', () => {
    expect(statefulSetHealth({ ...set(all), status: { ...all, observedGeneration: 2 } }).state).toBe('Stale');
    expect(statefulSetHealth(set(all), 'web-def').reason).toBe('UpdateRevisionMismatch');
    const failed = set({ ...all, conditions: [{ type: 'FailedCreatePod', status: 'True', message: 'quota' }] });
    expect(statefulSetHealth(failed)).toMatchObject({ state: 'Degraded', message: 'quota' });
  });

  it('read at v1alpha1 (no updatedReadyReplicas), trusts the updated pods only when every pod is ready', () => {
    const { updatedReadyReplicas: _dropped, ...alpha } = all;
    expect(statefulSetHealth(set(alpha)).state).toBe('Healthy');
    expect(statefulSetHealth(set({ ...alpha, readyReplicas: 3 })).reason).toBe('WaitingForUpdatedPodsReady');
  });

  it('allows maxUnavailable unavailable pods with Parallel, and gives Unknown on malformed input', () => {
    const parallel = set(
      { ...all, availableReplicas: 2 },
      { maxUnavailable: '50%' },
      { podManagementPolicy: 'Parallel' },
    );
    expect(statefulSetHealth(parallel).state).toBe('Healthy');
    expect(statefulSetHealth(set({ ...all, availableReplicas: 2 })).reason).toBe('WaitingForAvailability');
    expect(statefulSetHealth({ spec: 'x' } as never).state).toBe('Unknown');
  });
});
