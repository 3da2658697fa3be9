import { describe, expect, it } from 'vitest';
import { exceptionScope } from './policy-service.js';

describe('exceptionScope', () => {
  it('covers a namespace, or one kind in it', () => {
    expect(exceptionScope({ namespace: 'apps' })).toEqual({
      scope: { namespace: 'apps', kind: null, workloadName: null },
    });
    expect(exceptionScope({ namespace: 'apps', kind: 'CloneSet', name: 'web' })).toEqual({
      scope: { namespace: 'apps', kind: 'CloneSet', workloadName: 'web' },
    });
  });

  it('names the field of every problem', () => {
    expect(exceptionScope({ name: 'web' })).toEqual({
      problems: [
        { path: 'match.kind', message: 'Required value: an exception for one workload names its kind' },
        { path: 'match.namespace', message: 'Required value: the namespace the exception covers' },
      ],
    });
    expect(exceptionScope({ namespace: 'Not_A_Label' })).toMatchObject({ problems: [{ path: 'match.namespace' }] });
  });

  it('takes a cluster-scoped kind by name only, without a namespace', () => {
    expect(exceptionScope({ kind: 'SidecarSet', name: 'inject' })).toEqual({
      scope: { namespace: '', kind: 'SidecarSet', workloadName: 'inject' },
    });
    expect(exceptionScope({ namespace: 'apps', kind: 'SidecarSet' })).toEqual({
      problems: [
        { path: 'match.namespace', message: 'Forbidden: SidecarSet is cluster-scoped' },
        { path: 'match.name', message: 'Required value: an exception for SidecarSets names one' },
      ],
    });
  });
});
