import type { DaemonSetV1beta1 } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../kube/types.js';
import { adoptionPatch, orphansToAdopt } from './adoption.js';

const ds = (selector: DaemonSetV1beta1['spec']['selector'], extra: Record<string, unknown> = {}): DaemonSetV1beta1 =>
  ({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'ns', uid: 'ds-uid', ...extra },
    spec: { selector, template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [] } } },
  }) as unknown as DaemonSetV1beta1;

function pod(name: string, labels: Record<string, string>, meta: Partial<Pod['metadata']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels, ...meta },
    spec: { containers: [] },
  };
}

const names = (pods: Pod[]): string[] => pods.map((p) => p.metadata.name);

describe('orphansToAdopt', () => {
  const selector = { matchLabels: { app: 'agent' } };

  it('takes matching pods without a controller, not being deleted, of the set’s namespace', () => {
    const pods = [
      pod('orphan', { app: 'agent' }),
      pod(
        'non-controller-owner',
        { app: 'agent' },
        {
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'x' }],
        },
      ),
      pod(
        'owned',
        { app: 'agent' },
        {
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'rs', controller: true }],
        },
      ),
      pod('other-labels', { app: 'web' }),
      pod('deleting', { app: 'agent' }, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
      pod('elsewhere', { app: 'agent' }, { namespace: 'other' }),
    ];
    expect(names(orphansToAdopt(ds(selector), pods))).toEqual(['orphan', 'non-controller-owner']);
  });

  it('adopts nothing with an empty selector or while the set is being deleted', () => {
    const pods = [pod('orphan', { app: 'agent' })];
    expect(orphansToAdopt(ds({}), pods)).toEqual([]);
    expect(orphansToAdopt(ds(selector, { deletionTimestamp: '2026-01-01T00:00:00Z' }), pods)).toEqual([]);
  });

  it('honours matchExpressions', () => {
    const set = ds({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['node'] }] });
    expect(names(orphansToAdopt(set, [pod('a', { tier: 'node' }), pod('b', { tier: 'web' })]))).toEqual(['a']);
  });
});

describe('adoptionPatch', () => {
  it('adds the set as controller at v1beta1, guarded by the pod uid', () => {
    expect(adoptionPatch(ds({ matchLabels: { app: 'agent' } }), pod('orphan', {}))).toEqual({
      ownerReferences: [
        {
          apiVersion: 'apps.kruise.io/v1beta1',
          kind: 'DaemonSet',
          name: 'agent',
          uid: 'ds-uid',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
      uid: 'uid-orphan',
    });
  });
});
