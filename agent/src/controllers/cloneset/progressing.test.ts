import type { CloneSetCondition } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { formatTime } from '../../runtime/kube-time.js';
import { progressDeadlineIn, progressingCondition } from './progressing.js';
import type { CloneSet } from './types.js';

const T0 = Date.parse('2026-06-01T10:00:00Z');
const cs = (spec: Partial<CloneSet['spec']> = {}): CloneSet => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'web', namespace: 'ns' },
  spec: { replicas: 3, progressDeadlineSeconds: 60, selector: {}, template: {}, ...spec },
});
const rolling = {
  replicas: 3,
  updatedReplicas: 1,
  updatedAvailableReplicas: 1,
  expectedUpdatedReplicas: 3,
  currentRevision: 'web-a',
  updateRevision: 'web-b',
};
const done = { ...rolling, updatedReplicas: 3, updatedAvailableReplicas: 3, currentRevision: 'web-b' };
const cond = (reason: string, at: number, status = 'True'): CloneSetCondition => ({
  type: 'Progressing',
  status,
  reason,
  message: 'x',
  lastUpdateTime: formatTime(at),
  lastTransitionTime: formatTime(at),
});

describe('Progressing condition', () => {
  it('is absent without a deadline or with MaxInt32', () => {
    expect(progressingCondition(cs({ progressDeadlineSeconds: undefined }), rolling, [], T0)).toBeUndefined();
    expect(progressingCondition(cs({ progressDeadlineSeconds: 2147483647 }), rolling, [], T0)).toBeUndefined();
  });

  it('says CloneSetUpdated while rolling, keeping lastUpdateTime while progress is partial', () => {
    const first = progressingCondition(cs(), rolling, [], T0)!;
    expect(first).toMatchObject({
      status: 'True',
      reason: 'CloneSetUpdated',
      message: 'CloneSet is progressing',
      lastUpdateTime: formatTime(T0),
    });
    const later = progressingCondition(
      cs(),
      { ...rolling, updatedReplicas: 2, updatedAvailableReplicas: 2 },
      [first],
      T0 + 30_000,
    );
    expect(later).toBe(first);
  });

  it('turns False ProgressDeadlineExceeded after the deadline and stays so until a resting state', () => {
    const exceeded = progressingCondition(cs(), rolling, [cond('CloneSetUpdated', T0)], T0 + 61_000)!;
    expect(exceeded).toMatchObject({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: 'CloneSet revision web-b has timed out progressing',
      lastUpdateTime: formatTime(T0 + 61_000),
      lastTransitionTime: formatTime(T0 + 61_000),
    });
    expect(progressingCondition(cs(), rolling, [exceeded], T0 + 120_000)).toBe(exceeded);
    expect(progressingCondition(cs(), done, [exceeded], T0 + 130_000)).toMatchObject({
      status: 'True',
      reason: 'CloneSetAvailable',
      message: 'CloneSet is available',
    });
  });

  it('rests at Paused and ProgressPartitionAvailable', () => {
    expect(progressingCondition(cs({ updateStrategy: { paused: true } }), rolling, [], T0)).toMatchObject({
      reason: 'CloneSetPaused',
      message: 'CloneSet is paused',
    });
    expect(progressingCondition(cs(), { ...rolling, expectedUpdatedReplicas: 1 }, [], T0)).toMatchObject({
      reason: 'ProgressPartitionAvailable',
      message: 'CloneSet has been paused due to partition ready',
    });
  });

  it('starts the deadline afresh when a rollout leaves a long resting state (unlike v1.9.0)', () => {
    const longAvailable = cond('CloneSetAvailable', T0);
    const next = progressingCondition(cs(), rolling, [longAvailable], T0 + 3_600_000)!;
    expect(next).toMatchObject({
      status: 'True',
      reason: 'CloneSetUpdated',
      lastUpdateTime: formatTime(T0 + 3_600_000),
    });
    expect(next.lastTransitionTime).toBe(formatTime(T0));
  });

  it('requeues when the deadline passes, plus a second as v1.9 does', () => {
    const c = [cond('CloneSetUpdated', T0)];
    expect(progressDeadlineIn(cs(), c, T0 + 10_000)).toBe(51_000);
    expect(progressDeadlineIn(cs(), c, T0 + 59_500)).toBe(500);
    expect(progressDeadlineIn(cs(), c, T0 + 61_000)).toBeUndefined();
    expect(progressDeadlineIn(cs(), [cond('CloneSetAvailable', T0)], T0)).toBeUndefined();
  });
});
