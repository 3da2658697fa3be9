import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateKruiseObject, validateKruiseObjectUpdate } from './validate.js';

const load = (file: string): Record<string, unknown> =>
  parse(readFileSync(join(import.meta.dirname, 'testdata/valid', file), 'utf8')) as Record<string, unknown>;

describe('validateKruiseObject', () => {
  it('dispatches on kind and names what it cannot handle', () => {
    expect(validateKruiseObject(load('cloneset-basic.yaml'))).toEqual([]);
    expect(validateKruiseObject('CloneSet')).toEqual([
      { path: '', code: 'TypeInvalid', message: 'Invalid value: "CloneSet": must be of type object' },
    ]);
    expect(validateKruiseObject({ kind: 7 }).map((e) => [e.path, e.code])).toEqual([['kind', 'NotSupported']]);
  });
});

describe('validateKruiseObjectUpdate', () => {
  it('applies the kind’s update rules', () => {
    const old = load('cloneset-basic.yaml');
    const next = structuredClone(old) as { spec: { selector: unknown; template: { metadata: unknown } } };
    next.spec.selector = { matchLabels: { app: 'sample', v: '2' } };
    next.spec.template.metadata = { labels: { app: 'sample', v: '2' } };
    expect(validateKruiseObjectUpdate(next, old).map((e) => e.path)).toEqual(['spec.selector']);
  });

  it('forbids changing the kind and checks other kinds as on create', () => {
    const job = load('imagepulljob-minimal.yaml');
    expect(validateKruiseObjectUpdate(job, job)).toEqual([]);
    expect(validateKruiseObjectUpdate(job, load('nodeimage-basic.yaml')).map((e) => [e.path, e.code])).toEqual([
      ['kind', 'Forbidden'],
    ]);
  });
});
