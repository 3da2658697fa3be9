import { describe, expect, it } from 'vitest';
import { labelProblems, matchesSelector, parseLabelSelector, selectorProblems } from './label-selector.js';

const labels = { env: 'prod', region: 'eu', canary: 'true' };

describe('matchesSelector', () => {
  it.each([
    ['empty selector matches all', {}, true],
    ['matchLabels hit', { matchLabels: { env: 'prod' } }, true],
    ['matchLabels miss', { matchLabels: { env: 'dev' } }, false],
    ['In', { matchExpressions: [{ key: 'region', operator: 'In' as const, values: ['us', 'eu'] }] }, true],
    ['In on a missing key', { matchExpressions: [{ key: 'tier', operator: 'In' as const, values: ['a'] }] }, false],
    ['NotIn', { matchExpressions: [{ key: 'region', operator: 'NotIn' as const, values: ['eu'] }] }, false],
    [
      'NotIn on a missing key',
      { matchExpressions: [{ key: 'tier', operator: 'NotIn' as const, values: ['a'] }] },
      true,
    ],
    ['Exists', { matchExpressions: [{ key: 'canary', operator: 'Exists' as const }] }, true],
    ['DoesNotExist', { matchExpressions: [{ key: 'canary', operator: 'DoesNotExist' as const }] }, false],
    [
      'all terms must hold',
      { matchLabels: { env: 'prod' }, matchExpressions: [{ key: 'region', operator: 'In' as const, values: ['us'] }] },
      false,
    ],
  ])('%s', (_name, selector, expected) => {
    expect(matchesSelector(labels, selector)).toBe(expected);
  });
});

describe('parseLabelSelector', () => {
  it.each([
    ['env=prod', [{ key: 'env', operator: 'In', values: ['prod'] }]],
    ['env==prod', [{ key: 'env', operator: 'In', values: ['prod'] }]],
    ['env!=prod', [{ key: 'env', operator: 'NotIn', values: ['prod'] }]],
    ['region in (eu, us)', [{ key: 'region', operator: 'In', values: ['eu', 'us'] }]],
    ['region notin (eu)', [{ key: 'region', operator: 'NotIn', values: ['eu'] }]],
    ['canary', [{ key: 'canary', operator: 'Exists' }]],
    ['!legacy', [{ key: 'legacy', operator: 'DoesNotExist' }]],
    [
      'env=prod, region in (eu,us),!legacy',
      [
        { key: 'env', operator: 'In', values: ['prod'] },
        { key: 'region', operator: 'In', values: ['eu', 'us'] },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    ],
  ])('parses %s', (input, matchExpressions) => {
    expect(parseLabelSelector(input)).toEqual({ matchExpressions });
  });

  it.each(['a in b', 'a=(b)', '=x', 'a in (b'])('rejects %s', (input) => {
    expect(() => parseLabelSelector(input)).toThrow(/cannot parse/);
  });

  it('agrees with matchesSelector', () => {
    expect(matchesSelector(labels, parseLabelSelector('env=prod,region notin (us),canary'))).toBe(true);
    expect(matchesSelector(labels, parseLabelSelector('env=prod,!canary'))).toBe(false);
  });
});

describe('selectorProblems', () => {
  it('requires values exactly for In/NotIn', () => {
    expect(
      selectorProblems(
        {
          matchExpressions: [
            { key: 'a', operator: 'In', values: [] },
            { key: 'b', operator: 'Exists', values: ['x'] },
            { key: 'c', operator: 'NotIn', values: ['y'] },
          ],
        },
        'placement.clusterSelector',
      ).map((p) => p.path),
    ).toEqual([
      'placement.clusterSelector.matchExpressions[0].values',
      'placement.clusterSelector.matchExpressions[1].values',
    ]);
  });
});

describe('labelProblems', () => {
  it('validates keys and values as Kubernetes does, naming the label', () => {
    expect(labelProblems({ env: 'prod', 'example.com/tier': 'db-1', empty: '' }, 'labels')).toEqual([]);
    const problems = labelProblems(
      { ['k'.repeat(317)]: 'v', env: 'line\nbreak', 'a/b/c': 'x', tier: '<b>x</b>', ok: 'v'.repeat(64) },
      'labels',
    );
    expect(problems.map((p) => p.path)).toEqual(['labels', 'labels[env]', 'labels', 'labels[tier]', 'labels[ok]']);
    expect(problems[0]!.message).toContain('name part must be no more than 63 characters');
    expect(problems[1]!.message).toMatch(/^Invalid value: "line\\nbreak": a valid label/);
  });
});
