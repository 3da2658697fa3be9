import { describe, expect, it } from 'vitest';
import { memberKey, type FleetView } from './decide.js';
import { revisionSkew } from './skew.js';
import type { FrozenPlan } from './types.js';

const plan = {
  waves: [{ name: 'all', members: ['a', 'b', 'c', 'd'] }],
} as unknown as FrozenPlan;

function view(desired: Record<string, number>, running: Record<string, number>): FleetView {
  const status = (revision: number) => ({
    revision,
    generation: 1,
    health: 'Healthy',
    message: '',
    storedAt: new Date(),
  });
  return {
    workloads: new Set(['w']),
    desired: new Map(
      Object.entries(desired).map(([c, revision]) => [memberKey('w', c), { revision, generation: 1, deleted: false }]),
    ),
    status: new Map(Object.entries(running).map(([c, r]) => [memberKey('w', c), status(r)])),
    clusters: new Map(),
  };
}

describe('revisionSkew', () => {
  it('flags members running different revisions, counting each revision', () => {
    const s = revisionSkew({ workloadId: 'w', plan }, view({ a: 2, b: 2, c: 1 }, { a: 2, b: 1, c: 1 }));
    expect(s.skew).toBe(true);
    expect(s.revisions).toEqual([
      { revision: 1, clusters: 2 },
      { revision: 2, clusters: 1 },
    ]);
    expect(s.members.get('b')).toEqual({ desired: 2, running: 1 });
    expect(s.members.get('d')).toEqual({});
  });

  it('is not skewed when every reporting member runs one revision', () => {
    const s = revisionSkew({ workloadId: 'w', plan }, view({ a: 2, b: 2 }, { a: 2, b: 2 }));
    expect(s.skew).toBe(false);
    expect(s.revisions).toEqual([{ revision: 2, clusters: 2 }]);
  });
});
