import { describe, expect, it } from 'vitest';
import { daemonSetHealth, type DaemonSetHealthInput } from './daemonSetHealth.js';

const ds = (status: NonNullable<DaemonSetHealthInput['status']>, rollingUpdate = {}): DaemonSetHealthInput => ({
  metadata: { generation: 2 },
  spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate } },
  status: { observedGeneration: 2, updateRevision: 'h2', ...status },
});
const full = { desiredNumberScheduled: 4, currentNumberScheduled: 4, numberMisscheduled: 0, numberAvailable: 4 };

describe('daemonSetHealth', () => {
  it('is Healthy when every node runs the updated, available pod', () => {
    expect(daemonSetHealth(ds({ ...full, updatedNumberScheduled: 4 }), 'h2').state).toBe('Healthy');
  });

  it('counts a partition step as done once its nodes are updated (partition rounds down)', () => {
    expect(daemonSetHealth(ds({ ...full, updatedNumberScheduled: 2 }, { partition: '50%' }), 'h2').state).toBe(
      'Healthy',
    );
    expect(daemonSetHealth(ds({ ...full, updatedNumberScheduled: 1 }, { partition: '50%' }), 'h2').reason).toBe(
      'WaitingForUpdatedPods',
    );
  });

  it('reads v1alpha1 daemonSetHash, waits for the target revision, and is Stale before the status catches up', () => {
    const alpha: DaemonSetHealthInput = {
      ...ds({ ...full, updatedNumberScheduled: 4 }),
      status: { ...full, updatedNumberScheduled: 4, observedGeneration: 2, daemonSetHash: 'h1' },
    };
    expect(daemonSetHealth(alpha, 'h1').state).toBe('Healthy');
    expect(daemonSetHealth(alpha, 'h2').reason).toBe('UpdateRevisionMismatch');
    expect(daemonSetHealth({ ...alpha, metadata: { generation: 3 } }).state).toBe('Stale');
  });

  it('is Progressing while nodes lack pods or pods are unavailable, and Unknown on malformed input', () => {
    expect(daemonSetHealth(ds({ ...full, currentNumberScheduled: 3, updatedNumberScheduled: 3 })).reason).toBe(
      'Scheduling',
    );
    expect(daemonSetHealth(ds({ ...full, numberAvailable: 2, updatedNumberScheduled: 4 })).reason).toBe(
      'WaitingForAvailability',
    );
    expect(
      daemonSetHealth({
        metadata: { generation: 1 },
        status: { observedGeneration: 1, desiredNumberScheduled: 'x' as unknown as number },
      }).state,
    ).toBe('Unknown');
  });
});
