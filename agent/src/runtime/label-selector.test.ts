import { describe, expect, it } from 'vitest';
import { formatLabelSelector, labelSelectorMatcher, parseLabelSelector, toMatcher } from './label-selector.js';

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'front', 'apps.kruise.io/cloneset-instance-id': 'x1' };

  it.each([
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app=db', false],
    ['app!=db', true],
    ['missing!=x', true],
    ['app in (web, db)', true],
    ['app in (db)', false],
    ['app notin (db)', true],
    ['missing notin (db)', true],
    ['tier', true],
    ['!tier', false],
    ['!missing', true],
    ['apps.kruise.io/cloneset-instance-id=x1', true],
    ['app=web,tier=front', true],
    ['app=web, tier in (back)', false],
  ])('%j matches: %s', (text, expected) => {
    expect(parseLabelSelector(text)(labels)).toBe(expected);
  });

  it('treats missing labels as an empty set', () => {
    expect(parseLabelSelector('!app')(undefined)).toBe(true);
    expect(parseLabelSelector('app')(undefined)).toBe(false);
  });

  it('rejects malformed requirements with a coded error', () => {
    for (const bad of ['=web', 'app in web', 'a b', 'app=(x)']) {
      expect(() => parseLabelSelector(bad)).toThrow(expect.objectContaining({ code: 'AGENT_ERR_SELECTOR' }));
    }
    // An empty value is valid: it matches the label set to "".
    expect(parseLabelSelector('app=')({ app: '' })).toBe(true);
  });

  it('compiles metav1.LabelSelector with matchLabels and every operator', () => {
    const sel = {
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['front', 'mid'] },
        { key: 'env', operator: 'NotIn', values: ['prod'] },
        { key: 'app', operator: 'Exists' },
        { key: 'canary', operator: 'DoesNotExist' },
      ],
    };
    expect(labelSelectorMatcher(sel)(labels)).toBe(true);
    expect(labelSelectorMatcher(sel)({ ...labels, canary: 'y' })).toBe(false);
    expect(labelSelectorMatcher({})(undefined)).toBe(true);
    expect(() => labelSelectorMatcher({ matchExpressions: [{ key: 'a', operator: 'Gt' }] })).toThrow(
      /unknown operator/,
    );
  });

  it('formats a LabelSelector into the string syntax that parses back the same', () => {
    const sel = {
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['front', 'mid'] },
        { key: 'env', operator: 'NotIn', values: ['prod'] },
        { key: 'canary', operator: 'DoesNotExist' },
        { key: 'app', operator: 'Exists' },
      ],
    };
    const text = formatLabelSelector(sel);
    expect(text).toBe('app=web,tier in (front,mid),env notin (prod),!canary,app');
    for (const l of [labels, { ...labels, env: 'prod' }, { app: 'web' }]) {
      expect(parseLabelSelector(text)(l)).toBe(labelSelectorMatcher(sel)(l));
    }
  });

  it('toMatcher selects everything for undefined and passes matchers through', () => {
    expect(toMatcher(undefined)(undefined)).toBe(true);
    const fn = (): boolean => false;
    expect(toMatcher(fn)).toBe(fn);
  });
});
