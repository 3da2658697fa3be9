import { describe, expect, it } from 'vitest';
import { LifecycleState } from '@flotilla/api';
import { calculateStatus, selectorString, statusChanged } from './status.js';
import { cloneSet, NOW, pod } from './testing/fixtures.js';

describe('calculateStatus', () => {
  const cs = cloneSet({ replicas: 4, minReadySeconds: 30, updateStrategy: { partition: 1 } });
  const base = { cs, currentRevision: 'cs-old', updateRevision: 'cs-new', collisionCount: 0, now: NOW };

  it('counts every field from the pods', () => {
    const pods = [
      pod({ revision: 'cs-new', state: LifecycleState.Normal }),
      pod({ revision: 'cs-new', state: LifecycleState.Normal, readySince: 10 }), // ready, not yet available
      pod({ revision: 'cs-new', state: LifecycleState.Normal, inPlaceReady: false }), // in-place update running
      pod({ revision: 'cs-old', state: LifecycleState.PreparingDelete }), // ready, not available
    ];
    expect(calculateStatus({ ...base, pods })).toEqual({
      observedGeneration: 1,
      replicas: 4,
      readyReplicas: 3,
      availableReplicas: 1,
      updatedReplicas: 3,
      updatedReadyReplicas: 2,
      updatedAvailableReplicas: 1,
      expectedUpdatedReplicas: 3,
      updateRevision: 'cs-new',
      currentRevision: 'cs-old',
      collisionCount: 0,
      labelSelector: 'app=web',
    });
  });

  it('currentRevision follows updateRevision once all pods are updated and counted, ready or not', () => {
    const pods = Array.from({ length: 4 }, () => pod({ revision: 'cs-new', ready: false }));
    expect(calculateStatus({ ...base, pods }).currentRevision).toBe('cs-new');
    expect(calculateStatus({ ...base, pods: pods.slice(1) }).currentRevision).toBe('cs-old');
  });

  it('reports failures as FailedScale / FailedUpdate conditions, keeping the first transition time', () => {
    const failing = calculateStatus({ ...base, pods: [], failures: { FailedScale: 'boom' } });
    expect(failing.conditions).toEqual([
      { type: 'FailedScale', status: 'True', lastTransitionTime: '2026-01-01T00:10:00Z', message: 'boom' },
    ]);
    const later = calculateStatus({
      ...base,
      cs: { ...cs, status: failing },
      pods: [],
      failures: { FailedScale: 'boom again', FailedUpdate: 'nope' },
      now: NOW + 60_000,
    });
    expect(later.conditions?.map((c) => [c.type, c.lastTransitionTime])).toEqual([
      ['FailedScale', '2026-01-01T00:10:00Z'],
      ['FailedUpdate', '2026-01-01T00:11:00Z'],
    ]);
  });
});

describe('statusChanged', () => {
  const s = calculateStatus({
    cs: cloneSet(),
    pods: [],
    currentRevision: 'a',
    updateRevision: 'a',
    collisionCount: 0,
    now: NOW,
  });

  it('is false for the same status and true for any counted field, a newer generation or conditions', () => {
    expect(statusChanged(s, { ...s })).toBe(false);
    expect(statusChanged(s, { ...s, readyReplicas: 1 })).toBe(true);
    expect(statusChanged(s, { ...s, observedGeneration: 2 })).toBe(true);
    expect(statusChanged(s, { ...s, conditions: [{ type: 'FailedScale', status: 'True', message: 'x' }] })).toBe(true);
    expect(statusChanged(undefined, s)).toBe(true);
  });
});

describe('selectorString', () => {
  it('prints requirements sorted by key with sorted set values', () => {
    expect(
      selectorString({
        matchLabels: { b: '1', a: '2' },
        matchExpressions: [
          { key: 'c', operator: 'In', values: ['y', 'x'] },
          { key: 'aa', operator: 'DoesNotExist' },
          { key: 'd', operator: 'Exists' },
          { key: 'e', operator: 'NotIn', values: ['z'] },
        ],
      }),
    ).toBe('a=2,aa,!aa,b=1,c in (x,y),d,e notin (z)'.replace('aa,!aa', '!aa'));
  });
});
