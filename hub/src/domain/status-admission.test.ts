import { describe, expect, it } from 'vitest';
import type { StatusMessage } from '@flotilla/api';
import { admitStatuses, type Placement } from './status-admission.js';
import { statusKey, type TimedStatus } from './status-coalesce.js';

const report = (name: string, generation: number, workloadId = 'claimed'): TimedStatus => ({
  reportedAtMs: 0,
  storedAtMs: 1,
  streamSequence: 1,
  message: {
    v: 1,
    cluster: 'c1',
    kind: 'CloneSet',
    namespace: 'apps',
    name,
    workloadId,
    revision: 1,
    generation,
    observedGeneration: generation,
    counts: { replicas: 1, readyReplicas: 1, updatedReplicas: 1, updatedReadyReplicas: 1, availableReplicas: 1 },
    health: 'Healthy',
    message: '',
    reportedAt: '2026-01-01T00:00:00Z',
  } satisfies StatusMessage,
});

const placements = new Map<string, Placement>([
  [
    statusKey({ cluster: 'c1', kind: 'CloneSet', namespace: 'apps', name: 'web' }),
    { generation: 3, workloadId: 'w-web' },
  ],
]);
const placementOf = (r: TimedStatus): Placement | undefined => placements.get(statusKey(r.message));

describe('admitStatuses', () => {
  it.each([
    ['an older generation', 2, 'admitted'],
    ['the generation the hub sent last', 3, 'admitted'],
    ['a generation the hub never sent', 4, 'future_generation'],
    ['a generation near 2^53', 9007199254740000, 'future_generation'],
  ])('judges a report about %s', (_name, generation, verdict) => {
    const a = admitStatuses([report('web', generation)], placementOf);
    if (verdict === 'admitted') expect(a.admitted).toHaveLength(1);
    else expect(a.dropped.map((d) => d.reason)).toEqual([verdict]);
  });

  it('drops reports about objects the hub never placed on that cluster', () => {
    const a = admitStatuses([report('junk-1', 1), report('junk-2', 1), report('web', 1)], placementOf);
    expect(a.dropped.map((d) => [d.reason, d.status.message.name])).toEqual([
      ['not_placed', 'junk-1'],
      ['not_placed', 'junk-2'],
    ]);
    expect(a.admitted.map((r) => r.message.name)).toEqual(['web']);
  });

  it("records the hub's workload for a report, not the one the agent claims", () => {
    const a = admitStatuses([report('web', 3, 'some-other-workload')], placementOf);
    expect(a.admitted[0]!.message.workloadId).toBe('w-web');
  });
});
