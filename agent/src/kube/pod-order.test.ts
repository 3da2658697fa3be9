import { describe, expect, it } from 'vitest';
import type { UpdatePriorityStrategy } from '@flotilla/api';
import { formatTime } from '../runtime/kube-time.js';
import { compareActivePods, integerSuffix, sortByPriority, sortByScatter } from './pod-order.js';
import type { Pod } from './types.js';

const NOW = Date.parse('2026-01-01T00:10:00Z');
const ago = (seconds: number): string => formatTime(NOW - seconds * 1000);

interface PodOptions {
  /** Ready condition True (and phase Running); default true. */
  ready?: boolean;
  /** Seconds ago the pod became ready; default 600. */
  readySince?: number;
  phase?: string;
  /** '' for an unscheduled pod; default node-1. */
  node?: string;
  labels?: Record<string, string>;
}

function p(name: string, o: PodOptions = {}): Pod {
  const ready = o.ready ?? true;
  return {
    metadata: { name, namespace: 'ns', labels: o.labels ?? {}, creationTimestamp: ago(900) },
    spec: {
      containers: [{ name: 'main', image: 'app:v1' }],
      ...(o.node === '' ? {} : { nodeName: o.node ?? 'node-1' }),
    },
    status: {
      phase: o.phase ?? (ready ? 'Running' : 'Pending'),
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: ago(o.readySince ?? 600) }],
      containerStatuses: [{ name: 'main', ready, restartCount: 0 }],
    },
  };
}
const all = (pods: Pod[]): number[] => pods.map((_, i) => i);
const named = (pods: Pod[], idx: number[]): string[] => idx.map((i) => pods[i]!.metadata.name);

describe('pod order', () => {
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
});
