import { describe, expect, it } from 'vitest';
import { enqueueObject, enqueueOwner } from './handlers.js';

describe('key mappers', () => {
  const pod = {
    metadata: {
      name: 'web-x',
      namespace: 'ns',
      ownerReferences: [
        { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', uid: 'u1', controller: true },
        { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'adopter', uid: 'u2' },
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u3', controller: false },
      ],
    },
  };

  it('maps an object to its own key', () => {
    expect(enqueueObject(pod)).toEqual(['ns/web-x']);
  });

  it('maps an object to its controlling owner of the given group and kind', () => {
    expect(enqueueOwner({ group: 'apps.kruise.io', kind: 'CloneSet' })(pod)).toEqual(['ns/web']);
    expect(enqueueOwner({ group: 'apps.kruise.io', kind: 'CloneSet', onlyController: false })(pod)).toEqual([
      'ns/web',
      'ns/adopter',
    ]);
    expect(enqueueOwner({ group: 'apps', kind: 'ReplicaSet' })(pod)).toEqual([]);
    expect(enqueueOwner({ group: '', kind: 'CloneSet' })(pod)).toEqual([]);
    expect(enqueueOwner({ group: 'apps.kruise.io', kind: 'CloneSet' })({ metadata: { name: 'orphan' } })).toEqual([]);
  });
});
