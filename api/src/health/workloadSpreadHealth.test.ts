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
});
