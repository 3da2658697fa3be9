import { describe, expect, it } from 'vitest';
import { partitionReplicas, resolveStrategy } from './strategy.js';
import { cloneSet } from './testing/fixtures.js';

describe('partitionReplicas', () => {
  it.each<[string, number | string | undefined, number, number]>([
    ['unset is 0', undefined, 5, 0],
    ['an integer as it is', 3, 5, 3],
    ['an integer above replicas is clamped', 7, 5, 5],
    ['a negative integer is clamped to 0', -1, 5, 0],
    ['0% is 0', '0%', 5, 0],
    ['20% of 5 is exactly 1', '20%', 5, 1],
    ['21% of 5 rounds up to 2', '21%', 5, 2],
    ['1% of 5 rounds up to 1: any partition keeps an old pod', '1%', 5, 1],
    ['99% of 4 would be 4, leaves one pod to update: 3', '99%', 4, 3],
    ['99% of 100 is 99', '99%', 100, 99],
    ['99% of 1 stays 1 (one replica has nothing to leave)', '99%', 1, 1],
    ['100% keeps every pod', '100%', 4, 4],
    ['50% of 3 rounds up to 2', '50%', 3, 2],
    ['a malformed value is 0', 'abc', 5, 0],
    ['a percentage of 0 replicas is 0', '50%', 0, 0],
  ])('%s', (_name, partition, replicas, expected) => {
    expect(partitionReplicas(partition, replicas)).toBe(expected);
  });
});

describe('resolveStrategy', () => {
  it.each<[string, Record<string, unknown>, Partial<ReturnType<typeof resolveStrategy>>]>([
    ['defaults: maxUnavailable 20% of 10 = 2, no surge', {}, { maxSurge: 0, maxUnavailable: 2 }],
    ['maxSurge rounds up: 30% of 5 = 2', { maxSurge: '30%' }, { maxSurge: 2 }],
    ['maxUnavailable rounds up without surge: 30% of 5 = 2', { maxUnavailable: '30%' }, { maxUnavailable: 2 }],
    [
      'maxUnavailable rounds down with surge: 30% of 5 = 1',
      { maxUnavailable: '30%', maxSurge: 1 },
      { maxUnavailable: 1, maxSurge: 1 },
    ],
    [
      'paused forces maxSurge to 0, so maxUnavailable rounds up again',
      { maxUnavailable: '30%', maxSurge: 1, paused: true },
      { maxUnavailable: 2, maxSurge: 0 },
    ],
  ])('%s', (_name, updateStrategy, expected) => {
    const replicas = Object.keys(updateStrategy).length === 0 ? 10 : 5;
    expect(resolveStrategy(cloneSet({ replicas, updateStrategy }))).toMatchObject(expected);
  });

  it('scaleStrategy.maxUnavailable: unset is unlimited, a percentage rounds up', () => {
    expect(resolveStrategy(cloneSet({ replicas: 5 })).scaleMaxUnavailable).toBe(2 ** 31 - 1);
    expect(
      resolveStrategy(cloneSet({ replicas: 5, scaleStrategy: { maxUnavailable: '10%' } })).scaleMaxUnavailable,
    ).toBe(1);
  });
});
