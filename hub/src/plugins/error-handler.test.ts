import { describe, expect, it } from 'vitest';
import { fieldPath } from './error-handler.js';

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
