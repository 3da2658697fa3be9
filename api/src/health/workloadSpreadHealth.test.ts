import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { workloadSpreadHealth } from './workloadSpreadHealth.js';

const subsets = [
  { name: 'a', replicas: 2, missingReplicas: 0 },
  { name: 'b', replicas: 4, missingReplicas: -1 },
];

describe('workloadSpreadHealth', () => {
  it.each([
    [{ metadata: { generation: 2 }, status: { observedGeneration: 2, subsetStatuses: subsets } }, 'Healthy', 'Spread'],
    [{ metadata: { generation: 2 }, status: { observedGeneration: 1 } }, 'Stale', 'StatusNotObserved'],
    [
      {
        metadata: { generation: 1 },
        status: { observedGeneration: 1, conditions: [{ type: 'TargetFound', status: 'False', message: 'gone' }] },
      },
      'Degraded',
      'TargetNotFound',
    ],
    [
      {
        metadata: { generation: 1 },
        status: {
          observedGeneration: 1,
          subsetStatuses: [{ ...subsets[0]!, creatingPods: { p: '2026-01-01T00:00:00Z' } }],
        },
      },
      'Progressing',
      'PodsInFlight',
    ],
    [
      {
        metadata: { generation: 1 },
        status: {
          observedGeneration: 1,
          subsetStatuses: [{ ...subsets[0]!, conditions: [{ type: 'Schedulable', status: 'False' }] }],
        },
      },
      'Degraded',
      'SubsetUnschedulable',
    ],
    ['nonsense', 'Unknown', 'MalformedInput'],
  ] as const)('%j → %s', (input, state, reason) => {
    expect(workloadSpreadHealth(input as never)).toMatchObject({ state, reason });
  });

  const at = (status: Record<string, unknown>) => ({
    metadata: { generation: 1 },
    status: { observedGeneration: 1, ...status },
  });

  it.each([
    [{ conditions: 'TargetFound' }, 'status.conditions is not a list'],
    [{ conditions: [null] }, 'status.conditions[0] is not an object'],
    [{ conditions: [{ type: 'TargetFound', status: false }] }, 'status.conditions[0].status is not a string'],
    [{ subsetStatuses: {} }, 'status.subsetStatuses is not a list'],
    [{ subsetStatuses: [null] }, 'status.subsetStatuses[0] is not an object'],
    [
      { subsetStatuses: [{ name: 'a', replicas: '2' }] },
      'status.subsetStatuses[0].replicas is not a non-negative integer: "2"',
    ],
    [{ subsetStatuses: [{ name: 'a', conditions: 'x' }] }, 'status.subsetStatuses[0].conditions is not a list'],
    [
      { subsetStatuses: [{ name: 'a', creatingPods: ['p'] }] },
      'status.subsetStatuses[0].creatingPods is not an object',
    ],
  ])('a malformed status %j is Unknown, naming the field', (status, message) => {
    expect(workloadSpreadHealth(at(status) as never)).toEqual({ state: 'Unknown', reason: 'MalformedInput', message });
  });

  it('counts every subset and names the unschedulable ones', () => {
    const status = {
      subsetStatuses: [
        { name: 'a', replicas: 2, conditions: [{ type: 'Schedulable', status: 'True' }] },
        { name: 'b', replicas: 3, deletingPods: {} },
      ],
    };
    expect(workloadSpreadHealth(at(status) as never)).toEqual({
      state: 'Healthy',
      reason: 'Spread',
      message: '5 pods spread over 2 subsets',
    });
    const blocked = {
      subsetStatuses: [
        { name: 'a', conditions: [{ type: 'Schedulable', status: 'False' }] },
        { name: 'b', conditions: [{ type: 'Schedulable', status: 'False' }] },
      ],
    };
    expect(workloadSpreadHealth(at(blocked) as never).message).toBe('subsets a, b cannot schedule pods');
  });

  it('never throws, whatever a cluster reports', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (status, subset) => {
        for (const input of [
          at({ status }),
          at({ subsetStatuses: [subset] }),
          { metadata: { generation: 1 }, status },
        ]) {
          expect(['Healthy', 'Progressing', 'Degraded', 'Stale', 'Unknown']).toContain(
            workloadSpreadHealth(input as never).state,
          );
        }
      }),
    );
  });
});
