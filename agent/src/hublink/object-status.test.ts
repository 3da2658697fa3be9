import { describe, expect, it } from 'vitest';
import { countsOf, goneReport, lastReported, reportDigest, statusReport } from './object-status.js';

const ref = { kind: 'CloneSet' as const, namespace: 'apps', name: 'web' };

/** A CloneSet the hub stamped (workload w1, revision 2, generation 7) and its controller settled. */
const settled = {
  metadata: {
    generation: 4,
    annotations: { 'flotilla.io/workload': 'w1', 'flotilla.io/revision': '2', 'flotilla.io/generation': '7' },
  },
  spec: { replicas: 2 },
  status: {
    observedGeneration: 4,
    replicas: 2,
    readyReplicas: 2,
    availableReplicas: 2,
    updatedReplicas: 2,
    updatedReadyReplicas: 2,
    updatedAvailableReplicas: 2,
    updateRevision: 'web-abc',
  },
};

describe('statusReport', () => {
  it('reports counts, the hub stamps and the health of a settled CloneSet', () => {
    const report = statusReport('c1', ref, settled, new Date('2026-01-01T00:00:00Z'));
    expect(report).toMatchObject({
      cluster: 'c1',
      workloadId: 'w1',
      revision: 2,
      generation: 7,
      observedGeneration: 4,
      counts: { replicas: 2, readyReplicas: 2, updatedReplicas: 2, updatedReadyReplicas: 2, availableReplicas: 2 },
      health: 'Healthy',
    });
  });

  it('reports the pods a PodUnavailableBudget covers and judges it by its budget', () => {
    const pub = {
      metadata: { generation: 1 },
      spec: {},
      status: {
        observedGeneration: 1,
        unavailableAllowed: 0,
        currentAvailable: 2,
        desiredAvailable: 2,
        totalReplicas: 3,
      },
    };
    const report = statusReport(
      'c1',
      { kind: 'PodUnavailableBudget', namespace: 'apps', name: 'web' },
      pub,
      new Date(),
    );
    expect(report).toMatchObject({
      counts: { replicas: 3, readyReplicas: 2, updatedReplicas: 2, updatedReadyReplicas: 2, availableReplicas: 2 },
      health: 'Healthy',
    });
  });

  it('reports the pods a WorkloadSpread placed, and a malformed subset as Unknown', () => {
    const spreadRef = { kind: 'WorkloadSpread' as const, namespace: 'apps', name: 'web' };
    const spread = (subsetStatuses: unknown[]) => ({
      metadata: { generation: 1 },
      spec: {},
      status: { observedGeneration: 1, subsetStatuses },
    });
    const placed = [
      { name: 'a', replicas: 2, missingReplicas: 0 },
      { name: 'b', replicas: 3, missingReplicas: -1 },
    ];
    expect(statusReport('c1', spreadRef, spread(placed), new Date())).toMatchObject({
      counts: { replicas: 5, readyReplicas: 5, updatedReplicas: 5, updatedReadyReplicas: 5, availableReplicas: 5 },
      health: 'Healthy',
      message: '5 pods spread over 2 subsets',
    });
    expect(statusReport('c1', spreadRef, spread([null]), new Date())).toMatchObject({
      counts: { replicas: 0 },
      health: 'Unknown',
      message: 'status.subsetStatuses[0] is not an object',
    });
  });

  it('reports a BroadcastJob’s nodes as replicas and judges it by its phase', () => {
    const job = { spec: {}, status: { phase: 'completed', desired: 3, succeeded: 2, failed: 1 } };
    const report = statusReport('c1', { kind: 'BroadcastJob', namespace: 'ops', name: 'task' }, job, new Date());
    expect(report).toMatchObject({
      counts: { replicas: 3, readyReplicas: 2, updatedReplicas: 3, updatedReadyReplicas: 2, availableReplicas: 2 },
      health: 'Degraded',
    });
  });

  it('reports a BroadcastJob completed at an older template than its spec carries as Progressing', () => {
    const job = {
      metadata: {
        annotations: {
          'flotilla.io/revision': '2',
          'flotilla.io/template-hash': 'new',
          'flotilla.io/run-template-hash': 'old',
        },
      },
      spec: {},
      status: { phase: 'completed', desired: 3, succeeded: 3 },
    };
    const report = statusReport('c1', { kind: 'BroadcastJob', namespace: 'ops', name: 'task' }, job, new Date());
    expect(report).toMatchObject({ revision: 2, health: 'Progressing' });
    expect(report.message).toContain('template new has not run');
  });

  it('reports an Advanced StatefulSet as a set of replicas and judges its partition step', () => {
    const set = {
      metadata: { generation: 2 },
      spec: { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } },
      status: { observedGeneration: 2, replicas: 3, readyReplicas: 3, availableReplicas: 3, updatedReplicas: 1 },
    };
    const report = statusReport('c1', { kind: 'StatefulSet', namespace: 'db', name: 'web' }, set, new Date());
    expect(report).toMatchObject({
      counts: { replicas: 3, readyReplicas: 3, updatedReplicas: 1, availableReplicas: 3 },
      health: 'Healthy',
    });
  });

  it('reports an Advanced DaemonSet read at v1alpha1 by its nodes and judges its partition step', () => {
    const ds = (updated: number) => ({
      metadata: { generation: 3 },
      spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: '50%' } } },
      status: {
        observedGeneration: 3,
        desiredNumberScheduled: 4,
        currentNumberScheduled: 4,
        numberMisscheduled: 0,
        numberReady: 4,
        numberAvailable: 4,
        updatedNumberScheduled: updated,
        daemonSetHash: 'h2',
      },
    });
    const dsRef = { kind: 'DaemonSet' as const, namespace: 'kube-agents', name: 'node-agent' };
    // 50% of 4 nodes stay at the old revision: the step is done once the other 2 run the new one.
    expect(statusReport('c1', dsRef, ds(2), new Date())).toMatchObject({
      counts: { replicas: 4, readyReplicas: 4, updatedReplicas: 2, updatedReadyReplicas: 2, availableReplicas: 4 },
      health: 'Healthy',
    });
    expect(statusReport('c1', dsRef, ds(1), new Date())).toMatchObject({
      counts: { updatedReplicas: 1 },
      health: 'Progressing',
      message: '1 of 2 nodes updated',
    });
  });

  it('reports a CloneSet no controller has looked at as Progressing, not Healthy', () => {
    const report = statusReport('c1', ref, { metadata: { generation: 1 }, spec: { replicas: 2 } }, new Date());
    expect(report.health).toBe('Progressing');
    expect(report.counts.replicas).toBe(0);
  });

  it('ignores junk in the status', () => {
    expect(countsOf('CloneSet', { replicas: -3, readyReplicas: 'x', updatedReplicas: 1.7 })).toEqual({
      replicas: 0,
      readyReplicas: 0,
      updatedReplicas: 1,
      updatedReadyReplicas: 0,
      availableReplicas: 0,
    });
  });

  it('digests ignore the report time', () => {
    const obj = { metadata: { generation: 1 }, spec: {} };
    const a = statusReport('c1', ref, obj, new Date(1));
    const b = statusReport('c1', ref, obj, new Date(2));
    expect(reportDigest(a)).toBe(reportDigest(b));
  });
});

describe('goneReport', () => {
  const previous = statusReport('c1', ref, settled, new Date(0));

  it('takes the identity of the desired message that removed the object, and the last observed generation', () => {
    expect(lastReported({ workloadId: 'w1', revision: 3, generation: 8 }, previous)).toEqual({
      workloadId: 'w1',
      revision: 3,
      generation: 8,
      observedGeneration: 4,
    });
  });

  it('falls back to the last report, then to zero values', () => {
    expect(lastReported(undefined, previous)).toEqual({
      workloadId: 'w1',
      revision: 2,
      generation: 7,
      observedGeneration: 4,
    });
    expect(lastReported(undefined, undefined)).toEqual({
      workloadId: '',
      revision: 0,
      generation: 0,
      observedGeneration: 0,
    });
  });

  it('reports zero counts and says why the object is gone', () => {
    const last = lastReported(undefined, previous);
    const deleted = goneReport('c1', ref, { last, health: 'Deleted' }, new Date('2026-01-01T00:00:00Z'));
    expect(deleted).toMatchObject({
      cluster: 'c1',
      kind: 'CloneSet',
      name: 'web',
      generation: 7,
      health: 'Deleted',
      message: 'deleted as the hub asked',
      reportedAt: '2026-01-01T00:00:00.000Z',
    });
    expect(deleted.counts.replicas).toBe(0);
    expect(goneReport('c1', ref, { last, health: 'Missing' }, new Date()).message).toBe(
      'the object is missing from the cluster',
    );
    expect(goneReport('c1', ref, { last, health: 'Missing', message: 'not managed' }, new Date()).message).toBe(
      'not managed',
    );
  });
});
