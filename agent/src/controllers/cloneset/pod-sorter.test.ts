import { describe, expect, it } from 'vitest';
import { ANNOTATION_POD_DELETION_COST } from '@flotilla/api';
import { sameNodeRanker, sortForDeletion, spreadConstraintsRanker } from './pod-sorter.js';
import { pod, type PodOptions } from './testing/fixtures.js';
import type { Pod } from '../../kube/types.js';

const names = (pods: Pod[]): string[] => pods.map((p) => p.metadata.name);
const p = (name: string, o: PodOptions = {}): Pod => pod({ name, revision: 'r', ...o });
const cost = (value: string): PodOptions => ({ annotations: { [ANNOTATION_POD_DELETION_COST]: value } });

describe('sortForDeletion: the 8 rules, each deciding between pods equal in the earlier ones', () => {
  it.each<[string, Pod[], string[], Parameters<typeof sortForDeletion>[1]?]>([
    ['1. unassigned before assigned', [p('assigned'), p('unassigned', { node: '' })], ['unassigned', 'assigned']],
    [
      '2. Pending < Unknown < Running',
      [p('running'), p('unknown', { phase: 'Unknown', ready: false }), p('pending', { ready: false })],
      ['pending', 'unknown', 'running'],
    ],
    [
      '3a. not ready before ready',
      [p('ready'), p('unready', { ready: false, phase: 'Running' })],
      ['unready', 'ready'],
    ],
    [
      '3b. unavailable before available (the CloneSet decides availability)',
      [p('available'), p('hooked', { labels: { hold: 'true' } })],
      ['hooked', 'available'],
      { isAvailable: (x) => !x.metadata.labels?.hold },
    ],
    [
      '4. lower deletion cost first',
      [p('expensive', cost('100')), p('cheap', cost('-5')), p('none')],
      ['cheap', 'none', 'expensive'],
    ],
    [
      '4. an invalid deletion cost ("+1", "01") counts as 0',
      [p('plus', cost('+1')), p('lead', cost('01')), p('one', cost('1'))],
      ['plus', 'lead', 'one'],
    ],
    [
      '5. higher rank first',
      [p('low'), p('high')],
      ['high', 'low'],
      { ranker: (x) => (x.metadata.name === 'high' ? 2 : 1) },
    ],
    [
      '6. ready for the shortest time first',
      [p('old', { readySince: 600 }), p('fresh', { readySince: 5 })],
      ['fresh', 'old'],
    ],
    ['7. more restarts first', [p('calm', { restarts: 0 }), p('flappy', { restarts: 3 })], ['flappy', 'calm']],
    ['8. newer first', [p('older', { createdAgo: 900 }), p('newer', { createdAgo: 60 })], ['newer', 'older']],
    [
      'deletion cost outranks readiness time (4 before 6)',
      [p('fresh-but-costly', { readySince: 1, ...cost('10') }), p('old-cheap', { readySince: 900 })],
      ['old-cheap', 'fresh-but-costly'],
    ],
  ])('%s', (_name, pods, expected, options) => {
    expect(names(sortForDeletion(pods, options))).toEqual(expected);
  });
});

describe('rankers', () => {
  it('sameNodeRanker ranks crowded nodes: all but the best pod of a node get a rank, the worst the highest', () => {
    const pods = [
      p('a1', { node: 'a', readySince: 900 }),
      p('a2', { node: 'a', readySince: 500 }),
      p('a3', { node: 'a', readySince: 100 }),
      p('b1', { node: 'b' }),
    ];
    const rank = sameNodeRanker(pods);
    expect(pods.map(rank)).toEqual([0, 1, 2, 0]);
    // Deleting one pod takes it from the crowded node, newest-ready first.
    expect(names(sortForDeletion(pods, { ranker: rank })).slice(0, 2)).toEqual(['a3', 'a2']);
  });

  it('spreadConstraintsRanker ranks by crowding per topology domain, weighted by ln(domains + 2)', () => {
    const zones: Record<string, string> = { n1: 'z1', n2: 'z1', n3: 'z2' };
    const pods = [p('x', { node: 'n1' }), p('y', { node: 'n2' }), p('z', { node: 'n3' })];
    const rank = spreadConstraintsRanker(pods, ['zone'], (n) => ({ zone: zones[n]! }));
    const w = Math.log(4);
    // z1 holds two pods: ranks 2w and w; z2 one: w.
    expect(pods.map(rank).sort()).toEqual([w, w, 2 * w].sort());
    expect(names(sortForDeletion(pods, { ranker: rank }))[0]).not.toBe('z');
  });

  it('spreadConstraintsRanker leaves out pods on nodes it cannot look up', () => {
    const pods = [p('x', { node: 'gone' })];
    expect(spreadConstraintsRanker(pods, ['zone'], () => undefined)(pods[0]!)).toBe(0);
  });
});
