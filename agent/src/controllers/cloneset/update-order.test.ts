import { describe, expect, it } from 'vitest';
import { LifecycleState } from '@flotilla/api';
import { pod, NOW, type PodOptions } from './testing/fixtures.js';
import { limitUpdates, sortUpdateCandidates } from './update-order.js';
import type { Pod } from '../../kube/types.js';

const p = (name: string, o: PodOptions = {}): Pod => pod({ name, revision: 'old', ...o });
const all = (pods: Pod[]): number[] => pods.map((_, i) => i);
const named = (pods: Pod[], idx: number[]): string[] => idx.map((i) => pods[i]!.metadata.name);

describe('update order', () => {
  it('4. PreparingUpdate pods go first, whatever the other rules say', () => {
    const pods = [p('unready', { ready: false }), p('preparing', { state: LifecycleState.PreparingUpdate })];
    expect(named(pods, sortUpdateCandidates({}, pods, all(pods)))).toEqual(['preparing', 'unready']);
  });
});

describe('limitUpdates', () => {
  const five = (): Pod[] => Array.from({ length: 5 }, (_, i) => p(`p${i}`, { state: LifecycleState.Normal }));

  it.each<[string, number, number, number]>([
    ['takes |updateNum| when maxUnavailable allows', 2, 5, 2],
    ['stops at maxUnavailable available pods made unavailable', 5, 1, 1],
    ['a negative updateNum (rollback) counts by its size', -3, 5, 3],
  ])('%s', (_name, updateNum, maxUnavailable, taken) => {
    const pods = five();
    const chosen = limitUpdates({
      pods,
      candidates: all(pods),
      updateNum,
      updateMaxUnavailable: maxUnavailable,
      targetRevision: 'new',
      minReadySeconds: 0,
      now: NOW,
    });
    expect(chosen).toHaveLength(taken);
  });

  it('unavailable target-revision pods use up the budget', () => {
    const pods = [...five(), p('updating', { revision: 'new', ready: false })];
    const chosen = limitUpdates({
      pods,
      candidates: [0, 1, 2],
      updateNum: 3,
      updateMaxUnavailable: 1,
      targetRevision: 'new',
      minReadySeconds: 0,
      now: NOW,
    });
    expect(chosen).toEqual([]);
  });

  it('updating an already unavailable old pod costs nothing extra', () => {
    const pods = [p('broken', { ready: false }), ...five()];
    const chosen = limitUpdates({
      pods,
      candidates: [0, 1],
      updateNum: 2,
      updateMaxUnavailable: 2,
      targetRevision: 'new',
      minReadySeconds: 0,
      now: NOW,
    });
    expect(chosen).toEqual([0, 1]);
  });
});
