import { describe, expect, it } from 'vitest';
import { checkDependencies, dependentsOf, normalizeRefs, type GraphNode } from './dependencies.js';

const node = (name: string, dependsOn: string[] = [], id = name): GraphNode => ({
  id,
  kind: 'CloneSet',
  namespace: 'apps',
  name,
  dependsOn: dependsOn.map((d) => ({ kind: 'CloneSet', namespace: 'apps', name: d })),
});
const refs = (...names: string[]) =>
  normalizeRefs(
    names.map((name) => ({ kind: 'CloneSet' as const, name })),
    'apps',
  );
const self = (name: string) => ({ kind: 'CloneSet' as const, namespace: 'apps', name });

describe('checkDependencies', () => {
  const graph = [node('db'), node('cache', ['db']), node('web', ['cache'])];

  it('accepts dependencies on live workloads that close no cycle', () => {
    expect(checkDependencies(self('api'), refs('db', 'cache'), graph)).toBeUndefined();
  });

  it('names the reference that is not a live workload, itself or a repeat', () => {
    expect(checkDependencies(self('api'), refs('db', 'queue'), graph)).toEqual({
      field: 'dependsOn[1]',
      message: 'no live workload CloneSet apps/queue',
    });
    expect(checkDependencies(self('db'), refs('db'), graph)?.message).toBe('a workload cannot depend on itself');
    expect(checkDependencies(self('api'), refs('db', 'db'), graph)).toMatchObject({ field: 'dependsOn[1]' });
    // Another namespace is another workload.
    const other = normalizeRefs([{ kind: 'CloneSet', name: 'db', namespace: 'other' }], 'apps');
    expect(checkDependencies(self('api'), other, graph)?.message).toBe('no live workload CloneSet other/db');
  });

  it('refuses a cycle, showing it', () => {
    expect(checkDependencies(self('db'), refs('web'), graph)).toEqual({
      field: 'dependsOn',
      message: 'the dependencies form a cycle: apps/db → apps/web → apps/cache → apps/db',
    });
  });

  it('lists who depends on a workload', () => {
    expect(dependentsOf(self('db'), graph).map((n) => n.name)).toEqual(['cache']);
    expect(dependentsOf(self('web'), graph)).toEqual([]);
  });
});
