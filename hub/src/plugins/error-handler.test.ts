import { describe, expect, it } from 'vitest';
import { fieldPath, isDatabaseBusy } from './error-handler.js';

describe('fieldPath', () => {
  it.each([
    [{ instancePath: '/spec/replicas' }, 'body', 'spec.replicas'],
    [
      { instancePath: '/placement/clusterSelector/matchExpressions/0/operator' },
      'body',
      'placement.clusterSelector.matchExpressions[0].operator',
    ],
    [{ instancePath: '', params: { missingProperty: 'spec' } }, 'body', 'spec'],
    [{ instancePath: '/metadata', params: { additionalProperty: 'owner' } }, 'body', 'metadata.owner'],
    [{ instancePath: '/limit' }, 'querystring', 'querystring.limit'],
    [{ instancePath: '/labels/a~1b' }, 'body', 'labels.a/b'],
  ])('%o in %s → %s', (issue, context, expected) => {
    expect(fieldPath(issue, context)).toBe(expected);
  });
});

describe('isDatabaseBusy', () => {
  const poolTimeout = new Error('timeout exceeded when trying to connect');
  it('finds the pool timeout itself or wrapped in a query error', () => {
    expect(isDatabaseBusy(poolTimeout)).toBe(true);
    expect(isDatabaseBusy(new Error('Failed query: select 1', { cause: poolTimeout }))).toBe(true);
  });
  it('leaves other failures alone', () => {
    expect(isDatabaseBusy(new Error('relation "x" does not exist'))).toBe(false);
    expect(isDatabaseBusy(new Error('Failed query', { cause: new Error('connection terminated') }))).toBe(false);
    expect(isDatabaseBusy('timeout exceeded when trying to connect')).toBe(false);
    expect(isDatabaseBusy(undefined)).toBe(false);
  });
});
