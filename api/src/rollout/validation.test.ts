import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateRolloutStrategy } from './validation.js';

const ok = { waves: [{ name: 'canary', clusters: { names: ['a'] } }, { name: 'rest' }] };

describe('validateRolloutStrategy', () => {
  it('accepts a canary wave followed by a catch-all wave', () => {
    expect(validateRolloutStrategy(ok)).toEqual([]);
  });

  it.each([
    ['no waves', { waves: [] }, 'waves'],
    ['an empty wave', { waves: [{ name: 'a', clusters: { names: [] } }] }, 'waves[0].clusters.names'],
    ['a budget above 100%', { ...ok, failureBudget: '150%' }, 'failureBudget'],
    [
      'a canary that tolerates failures',
      { waves: [{ name: 'c', clusters: { names: ['a'] }, failureBudget: 1 }, { name: 'r' }] },
      'waves[0].failureBudget',
    ],
    [
      'a wave budget above 100%',
      {
        waves: [
          { name: 'c', clusters: { names: ['a'] } },
          { name: 'r', failureBudget: '101%' },
        ],
      },
      'waves[1].failureBudget',
    ],
    ['duplicate wave names', { waves: [{ name: 'c', clusters: { names: ['a'] } }, { name: 'c' }] }, 'waves[1].name'],
    [
      'a catch-all wave before the end',
      { waves: [{ name: 'c' }, { name: 'r', clusters: { names: ['b'] } }] },
      'waves[0].clusters',
    ],
    [
      'names and a selector together',
      { waves: [{ name: 'c', clusters: { names: ['a'], selector: { matchLabels: { x: 'y' } } } }] },
      'waves[0].clusters',
    ],
    [
      'a zero concurrency',
      { waves: [{ name: 'c', clusters: { names: ['a'] }, maxConcurrency: 0 }] },
      'waves[0].maxConcurrency',
    ],
    ['an unknown field', { ...ok, speed: 'fast' }, 'speed'],
    ['a bad onFailure', { ...ok, onFailure: 'Explode' }, 'onFailure'],
    [
      'a malformed percentage',
      { waves: [{ name: 'c', clusters: { names: ['a'] }, maxConcurrency: '10 percent' }] },
      'waves[0].maxConcurrency',
    ],
    ['a negative pre-pull wait', { ...ok, prePull: { maxWaitSeconds: -1 } }, 'prePull.maxWaitSeconds'],
    ['a pre-pull wait above an hour', { ...ok, prePull: { maxWaitSeconds: 3601 } }, 'prePull.maxWaitSeconds'],
    ['a pre-pull flag that is not a boolean', { ...ok, prePull: { enabled: 'yes' } }, 'prePull.enabled'],
    ['an unknown pre-pull field', { ...ok, prePull: { images: ['x'] } }, 'prePull.images'],
  ])('rejects %s, naming the field', (_what, input, path) => {
    const errors = validateRolloutStrategy(input);
    expect(errors.map((e) => e.path)).toContain(path);
    for (const e of errors) expect(e.message.length).toBeGreaterThan(5);
  });

  it('accepts a pre-pull with a bounded wait, and one that never waits', () => {
    expect(validateRolloutStrategy({ ...ok, prePull: { maxWaitSeconds: 120 } })).toEqual([]);
    expect(validateRolloutStrategy({ ...ok, prePull: { enabled: true, maxWaitSeconds: 0 } })).toEqual([]);
  });

  it('never throws on any JSON input', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(Array.isArray(validateRolloutStrategy(v))).toBe(true);
      }),
    );
  });
});
