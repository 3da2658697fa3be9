import { describe, expect, it } from 'vitest';
import { checkQueryTemplate, judge, parseCondition, renderQuery, validatePrometheusConnection } from './analysis.js';
import { validateRolloutStrategy } from './validation.js';

describe('analysis conditions', () => {
  it('parse simple comparisons of result with a number', () => {
    expect(parseCondition('result < 0.05')).toEqual({ op: '<', value: 0.05 });
    expect(parseCondition(' result>=1e-3 ')).toEqual({ op: '>=', value: 0.001 });
    expect(parseCondition('result != -2')).toEqual({ op: '!=', value: -2 });
    for (const bad of ['result < ', 'x < 1', 'result << 1', 'result < 1 && result > 0', '0.05 > result']) {
      expect(typeof parseCondition(bad), bad).toBe('string');
    }
  });

  it('judge: failure wins, one condition negates into the other, neither of both is inconclusive', () => {
    const both = { successCondition: 'result < 0.05', failureCondition: 'result >= 0.1' };
    expect(judge(both, 0.01)).toBe('Passed');
    expect(judge(both, 0.2)).toBe('Failed');
    expect(judge(both, 0.07)).toBe('Inconclusive');
    expect(judge(both, NaN)).toBe('Inconclusive');
    expect(judge({ successCondition: 'result < 0.05' }, 0.07)).toBe('Failed');
    expect(judge({ failureCondition: 'result > 0.5' }, 0.07)).toBe('Passed');
    expect(judge({ successCondition: 'result > 0', failureCondition: 'result > 0' }, 1)).toBe('Failed');
  });
});

describe('query templates', () => {
  it('render the placeholders', () => {
    expect(
      renderQuery('rate(errors{cluster="{{cluster}}",ns="{{ namespace }}",w="{{workload}}"}[1m])', {
        cluster: 'c1',
        namespace: 'default',
        workload: 'web',
      }),
    ).toBe('rate(errors{cluster="c1",ns="default",w="web"}[1m])');
  });

  it('are checked offline: blank, unknown placeholder, unbalanced brackets, open strings', () => {
    expect(checkQueryTemplate('sum(rate(x{a="}{"}[5m])) / 2')).toBeUndefined();
    expect(checkQueryTemplate('x{c="{{cluster}}"}')).toBeUndefined();
    expect(checkQueryTemplate('  ')).toBe('must not be empty');
    expect(checkQueryTemplate('x{c="{{pod}}"}')).toContain('unknown placeholder {{pod}}');
    expect(checkQueryTemplate('sum(rate(x[5m])')).toContain('")" missing');
    expect(checkQueryTemplate('x[5m])')).toContain('unbalanced ")"');
    expect(checkQueryTemplate('x{a="b}')).toContain('not closed');
  });
});

describe('a wave analysis in a strategy', () => {
  const wave = (analysis: unknown) => ({
    waves: [
      { name: 'c', clusters: { names: ['a'] } },
      { name: 'r', analysis },
    ],
  });
  const q = { name: 'errors', query: 'x{c="{{cluster}}"}', successCondition: 'result < 0.05' };

  it('is accepted when well formed', () => {
    expect(validateRolloutStrategy(wave({ queries: [q], intervalSeconds: 30, count: 3 }))).toEqual([]);
  });

  it.each([
    [
      'a bad condition',
      { queries: [{ ...q, successCondition: 'result < lots' }] },
      'waves[1].analysis.queries[0].successCondition',
    ],
    ['no condition', { queries: [{ name: 'e', query: 'x' }] }, 'waves[1].analysis.queries[0].successCondition'],
    ['invalid PromQL', { queries: [q, { ...q, name: 'b', query: 'sum(x' }] }, 'waves[1].analysis.queries[1].query'],
    ['a duplicate query name', { queries: [q, q] }, 'waves[1].analysis.queries[1].name'],
    ['a count out of range', { queries: [q], count: 0 }, 'waves[1].analysis.count'],
    ['an interval out of range', { queries: [q], intervalSeconds: 86_400 }, 'waves[1].analysis.intervalSeconds'],
    ['no queries', { queries: [] }, 'waves[1].analysis.queries'],
  ])('refuses %s naming the field', (_, analysis, path) => {
    expect(validateRolloutStrategy(wave(analysis)).map((e) => e.path)).toContain(path);
  });
});

describe("a cluster's Prometheus connection", () => {
  const basicAuth = { usernameRef: 'prom-user', passwordRef: 'prom-password' };
  const paths = (c: Parameters<typeof validatePrometheusConnection>[0]) =>
    validatePrometheusConnection(c).map((e) => `${e.path}: ${e.message}`);

  it('accepts a URL alone, with a token, or with basic auth and a CA for https', () => {
    expect(paths({ url: 'http://prom:9090' })).toEqual([]);
    expect(paths({ url: 'http://prom:9090', tokenRef: 't', basicAuth: null, caRef: null })).toEqual([]);
    expect(paths({ url: 'https://prom:9090', basicAuth, caRef: 'prom-ca.pem' })).toEqual([]);
    expect(paths({ url: null })).toEqual([]);
  });

  it('refuses both kinds of credentials, a CA for http, and anything without a url, naming the field', () => {
    expect(paths({ url: 'https://prom:9090', tokenRef: 't', basicAuth })).toEqual([
      'basicAuth: Forbidden: give a tokenRef or basicAuth, not both',
    ]);
    expect(paths({ url: 'http://prom:9090', caRef: 'ca.pem' })).toEqual([
      'caRef: Forbidden: a CA verifies an https url only',
    ]);
    expect(paths({ url: null, tokenRef: 't', basicAuth, caRef: 'ca.pem' })).toEqual([
      'tokenRef: Forbidden: needs a url',
      'basicAuth: Forbidden: needs a url',
      'caRef: Forbidden: needs a url',
    ]);
    // A bad URL is reported once, without a second complaint about the CA.
    expect(paths({ url: 'prom:9090', caRef: 'ca.pem' }).map((p) => p.split(':')[0])).toEqual(['url']);
  });
});
