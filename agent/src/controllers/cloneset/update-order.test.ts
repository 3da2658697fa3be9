import { describe, expect, it } from 'vitest';
import { LifecycleState, type UpdatePriorityStrategy } from '@flotilla/api';
import { pod, NOW, type PodOptions } from './testing/fixtures.js';
import {
  compareActivePods,
  integerSuffix,
  limitUpdates,
  sortByPriority,
  sortByScatter,
  sortUpdateCandidates,
} from './update-order.js';
import type { Pod } from './types.js';

const p = (name: string, o: PodOptions = {}): Pod => pod({ name, revision: 'old', ...o });
const all = (pods: Pod[]): number[] => pods.map((_, i) => i);
const named = (pods: Pod[], idx: number[]): string[] => idx.map((i) => pods[i]!.metadata.name);

describe('update order', () => {
  it('1. ActivePods: unscheduled, then pending, then unready, then ready for the shortest time', () => {
    const pods = [
      p('ready-long', { readySince: 900 }),
      p('ready-short', { readySince: 5 }),
      p('unready', { ready: false, phase: 'Running' }),
      p('pending', { ready: false }),
      p('unscheduled', { ready: false, node: '' }),
    ];
    const sorted = [...all(pods)].sort((i, j) => compareActivePods(pods[i]!, pods[j]!));
    expect(named(pods, sorted)).toEqual(['unscheduled', 'pending', 'unready', 'ready-short', 'ready-long']);
  });

  it('2a. weightPriority: a higher sum of matching weights first; ties: the later pod first', () => {
    const pods = [
      p('none'),
      p('fe', { labels: { tier: 'fe' } }),
      p('both', { labels: { tier: 'fe', canary: 'y' } }),
      p('none2'),
    ];
    const strategy: UpdatePriorityStrategy = {
      weightPriority: [
        { weight: 50, matchSelector: { matchLabels: { tier: 'fe' } } },
        { weight: 30, matchSelector: { matchLabels: { canary: 'y' } } },
      ],
    };
    expect(named(pods, sortByPriority(strategy, pods, all(pods)))).toEqual(['both', 'fe', 'none2', 'none']);
  });

  it('2b. orderPriority: no key first (level -1), then by key order, higher integer suffix first', () => {
    const pods = [
      p('g1', { labels: { group: 'g-1' } }),
      p('g10', { labels: { group: 'g-10' } }),
      p('zone9', { labels: { zone: 'z9' } }),
      p('nokey'),
      p('g2', { labels: { group: 'g-2', zone: 'z1' } }),
    ];
    const strategy = { orderPriority: [{ orderedKey: 'group' }, { orderedKey: 'zone' }] };
    expect(named(pods, sortByPriority(strategy, pods, all(pods)))).toEqual(['nokey', 'g10', 'g2', 'g1', 'zone9']);
  });

  it('integerSuffix reads the trailing digits', () => {
    expect([integerSuffix('g-12'), integerSuffix('abc'), integerSuffix('7'), integerSuffix('v1.2')]).toEqual([
      12, 0, 7, 2,
    ]);
  });

  it('3. scatterStrategy spreads matching pods over the order, the last one at the end', () => {
    const pods = [
      p('a0', { labels: { zone: 'a' } }),
      p('a1', { labels: { zone: 'a' } }),
      p('a2', { labels: { zone: 'a' } }),
      p('b0'),
      p('b1'),
      p('b2'),
    ];
    const idx = sortByScatter([{ key: 'zone', value: 'a' }], pods, all(pods));
    expect(named(pods, idx)).toEqual(['a0', 'b0', 'b1', 'a1', 'b2', 'a2']);
  });

  it('3. scatter leaves the order alone when one side has at most one pod', () => {
    const pods = [p('a0', { labels: { zone: 'a' } }), p('b0'), p('b1')];
    expect(sortByScatter([{ key: 'zone', value: 'a' }], pods, all(pods))).toEqual([0, 1, 2]);
  });

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
