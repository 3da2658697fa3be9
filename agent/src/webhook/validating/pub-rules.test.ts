import type { PodUnavailableBudget } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import type { LabelSelector } from '../../runtime/label-selector.js';
import { pubConflicts, selectorsLooselyOverlap } from './pub-rules.js';

function pub(name: string, spec: Partial<PodUnavailableBudget['spec']>): PodUnavailableBudget {
  return {
    apiVersion: 'policy.kruise.io/v1alpha1',
    kind: 'PodUnavailableBudget',
    metadata: { name, namespace: 'ns' },
    spec: { maxUnavailable: 1, ...spec },
  };
}

const exp = (operator: string, values?: string[]): LabelSelector => ({
  matchExpressions: [{ key: 'a', operator, ...(values ? { values } : {}) }],
});

describe('selectorsLooselyOverlap (OpenKruise v1.9 IsSelectorLooseOverlap)', () => {
  it.each<[string, LabelSelector, LabelSelector, boolean]>([
    ['same matchLabels', { matchLabels: { a: 'b' } }, { matchLabels: { a: 'b' } }, true],
    ['different values of one key', { matchLabels: { a: 'b' } }, { matchLabels: { a: 'c' } }, false],
    [
      'different keys (a pod could have both: not loose overlap)',
      { matchLabels: { a: 'b' } },
      { matchLabels: { c: 'd' } },
      false,
    ],
    ['a subset of keys', { matchLabels: { a: 'b' } }, { matchLabels: { a: 'b', c: 'd' } }, false],
    ['matchLabels against In', { matchLabels: { a: 'b' } }, exp('In', ['b', 'c']), true],
    ['In against In, no common value', exp('In', ['b']), exp('In', ['c', 'd']), false],
    ['In against Exists', exp('In', ['b', 'c']), exp('Exists'), true],
    ['In against NotIn covering all of it', exp('In', ['b', 'c']), exp('NotIn', ['b', 'c', 'e']), false],
    ['In against NotIn leaving a value', exp('In', ['b', 'c']), exp('NotIn', ['b']), true],
    ['Exists against Exists', exp('Exists'), exp('Exists'), true],
    ['Exists against DoesNotExist', exp('Exists'), exp('DoesNotExist'), false],
    ['NotIn against NotIn', exp('NotIn', ['b']), exp('NotIn', ['c']), true],
    ['NotIn against DoesNotExist', exp('NotIn', ['b']), exp('DoesNotExist'), true],
    ['DoesNotExist against DoesNotExist', exp('DoesNotExist'), exp('DoesNotExist'), true],
    ['DoesNotExist against In', exp('DoesNotExist'), exp('In', ['b']), false],
  ])('%s', (_, a, b, overlap) => {
    expect(selectorsLooselyOverlap(a, b)).toBe(overlap);
    expect(selectorsLooselyOverlap(b, a)).toBe(overlap);
  });
});

describe('pubConflicts', () => {
  const cloneSet = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' };

  it('refuses a second budget naming the same workload, at any version, naming spec.targetRef', () => {
    const others = [pub('first', { targetRef: { ...cloneSet, apiVersion: 'apps.kruise.io/v1beta1' } })];
    const errors = pubConflicts(pub('second', { targetRef: cloneSet }), others);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ path: 'spec.targetRef', code: 'Invalid' });
    expect(errors[0]!.message).toContain('pub.spec.targetRef is in conflict with other PodUnavailableBudget first');
  });

  it('refuses a selector loosely overlapping another budget’s, naming spec.selector', () => {
    const others = [pub('first', { selector: { matchLabels: { app: 'web' } } })];
    const errors = pubConflicts(
      pub('second', { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] } }),
      others,
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ path: 'spec.selector', code: 'Invalid' });
    expect(errors[0]!.message).toContain('pub.spec.selector is in conflict with other PodUnavailableBudget first');
  });

  it('accepts itself (an update), other workloads, other selectors, and a selector next to a targetRef', () => {
    const mine = pub('mine', { selector: { matchLabels: { app: 'web' } } });
    const others = [
      mine,
      pub('deploy', { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } }),
      pub('api', { selector: { matchLabels: { app: 'api' } } }),
    ];
    expect(pubConflicts(mine, others)).toEqual([]);
    expect(pubConflicts(pub('cs', { targetRef: cloneSet }), others)).toEqual([]);
  });
});
