import { describe, expect, it } from 'vitest';
import { adoptionPatch, orphansToAdopt, podsToRelease, releasePatch, type Claimer } from './adoption.js';
import type { Pod } from './types.js';

const owner = (selector: Claimer['spec']['selector'], meta: Claimer['metadata'] = {}): Claimer => ({
  metadata: { namespace: 'ns', uid: 'owner-uid', ...meta },
  spec: { selector },
});

function pod(name: string, labels: Record<string, string>, meta: Partial<Pod['metadata']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, labels, ...meta },
    spec: { containers: [] },
  };
}

const names = (pods: Pod[]): string[] => pods.map((p) => p.metadata.name);
const selector = { matchLabels: { app: 'agent' } };

describe('orphansToAdopt', () => {
  it('takes matching pods without a controller, not being deleted, of the owner’s namespace', () => {
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
    expect(names(orphansToAdopt(owner(selector), pods))).toEqual(['orphan', 'non-controller-owner']);
  });

  it('adopts nothing with an empty selector or while the owner is being deleted', () => {
    const pods = [pod('orphan', { app: 'agent' })];
    expect(orphansToAdopt(owner({}), pods)).toEqual([]);
    expect(orphansToAdopt(owner(selector, { deletionTimestamp: '2026-01-01T00:00:00Z' }), pods)).toEqual([]);
  });

  it('honours matchExpressions and the owner’s own filter', () => {
    const set = owner({ matchExpressions: [{ key: 'tier', operator: 'In', values: ['node'] }] });
    expect(names(orphansToAdopt(set, [pod('a', { tier: 'node' }), pod('b', { tier: 'web' })]))).toEqual(['a']);
    const named = orphansToAdopt(owner(selector), [pod('web-0', { app: 'agent' }), pod('x', { app: 'agent' })], (p) =>
      p.metadata.name.startsWith('web-'),
    );
    expect(names(named)).toEqual(['web-0']);
  });
});

describe('podsToRelease', () => {
  it('lets go of controlled pods whose labels no longer match, never with an empty selector', () => {
    const pods = [pod('kept', { app: 'agent' }), pod('relabelled', { app: 'other' })];
    expect(names(podsToRelease(owner(selector), pods))).toEqual(['relabelled']);
    expect(podsToRelease(owner({}), pods)).toEqual([]);
  });
});

describe('patches', () => {
  const ref = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'DaemonSet', name: 'agent', uid: 'owner-uid' };

  it('adoption adds the owner as controller, guarded by the pod uid', () => {
    expect(adoptionPatch(ref, pod('orphan', {}))).toEqual({
      ownerReferences: [{ ...ref, controller: true, blockOwnerDeletion: true }],
      uid: 'uid-orphan',
    });
  });

  it('release deletes the owner’s reference by uid, guarded by the pod uid', () => {
    expect(releasePatch('owner-uid', pod('p', {}))).toEqual({
      ownerReferences: [{ $patch: 'delete', uid: 'owner-uid' }],
      uid: 'uid-p',
    });
  });
});
