import { describe, expect, it } from 'vitest';
import { jsonDiff } from './json-diff.js';

describe('jsonDiff', () => {
  it('lists changed, added and removed leaves with their paths', () => {
    const from = { spec: { replicas: 3, template: { containers: [{ name: 'app', image: 'a:v1' }] }, paused: true } };
    const to = { spec: { replicas: 4, template: { containers: [{ name: 'app', image: 'a:v2' }, { name: 'side' }] } } };
    expect(jsonDiff(from, to)).toEqual([
      { path: 'spec.paused', from: true },
      { path: 'spec.replicas', from: 3, to: 4 },
      { path: 'spec.template.containers[0].image', from: 'a:v1', to: 'a:v2' },
      { path: 'spec.template.containers[1]', to: { name: 'side' } },
    ]);
  });

  it('quotes keys that are not plain names, and reports nothing for equal values', () => {
    expect(jsonDiff({ a: { 'x.io/y': '1' } }, { a: { 'x.io/y': '2' } })).toEqual([
      { path: 'a["x.io/y"]', from: '1', to: '2' },
    ]);
    expect(jsonDiff({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toEqual([]);
  });

  it('against nothing, every field is added', () => {
    expect(jsonDiff(null, { a: 1 })).toEqual([{ path: '', from: null, to: { a: 1 } }]);
    expect(jsonDiff(undefined, { a: 1 })).toEqual([{ path: '', to: { a: 1 } }]);
  });
});
