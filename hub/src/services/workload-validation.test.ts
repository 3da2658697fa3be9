import { describe, expect, it } from 'vitest';
import { namespaceProblems } from './workload-validation.js';

describe('namespaceProblems', () => {
  it('forbids a namespace on a cluster-scoped kind', () => {
    expect(namespaceProblems('SidecarSet', '')).toEqual([]);
    expect(namespaceProblems('SidecarSet', 'apps')).toEqual([
      { path: 'namespace', message: 'Forbidden: SidecarSet is cluster-scoped' },
    ]);
  });

  it.each(['CloneSet', 'ImagePullJob'] as const)('requires a DNS label for namespaced %s', (kind) => {
    expect(namespaceProblems(kind, 'apps')).toEqual([]);
    expect(namespaceProblems(kind, '')).toEqual([{ path: 'namespace', message: 'Required value' }]);
    expect(namespaceProblems(kind, 'Apps')).toEqual([
      { path: 'namespace', message: 'Invalid value: must be a DNS-1123 label' },
    ]);
  });
});
