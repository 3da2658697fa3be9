import { describe, expect, it } from 'vitest';
import { availableInstanceIds, randomInstanceId } from './instance-ids.js';
import { containerPriorities } from './container-priority.js';
import { newClaims, newPod } from './new-pods.js';
import { revisionTemplate, newRevision } from './revisions.js';
import { cloneSet, NOW, pod } from './testing/fixtures.js';
import type { PersistentVolumeClaim } from '../../kube/types.js';

const withClaims = cloneSet({
  replicas: 1,
  volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }],
  template: {
    metadata: { labels: { app: 'web' }, annotations: { note: 'n' } },
    spec: {
      containers: [{ name: 'main', image: 'registry.local/app:v1' }],
      volumes: [
        { name: 'data', emptyDir: {} },
        { name: 'cfg', configMap: { name: 'c' } },
      ],
    },
  },
});

describe('newPod', () => {
  const revision = newRevision(withClaims, 1, 0);
  const p = newPod({
    cs: withClaims,
    template: revisionTemplate(revision)!,
    revision: revision.metadata.name,
    id: 'abcde',
    now: NOW,
  });

  it('is named <cs>-<id> with generateName, owner reference and the instance id', () => {
    expect(p.metadata).toMatchObject({ name: 'cs-abcde', generateName: 'cs-', namespace: 'ns' });
    expect(p.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        name: 'cs',
        uid: 'cs-uid',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });

  it('carries the template labels, both revision labels and lifecycle PreparingNormal with its timestamp', () => {
    expect(p.metadata.labels).toEqual({
      app: 'web',
      'controller-revision-hash': revision.metadata.name,
      'pod-template-hash': revision.metadata.name.slice(3),
      'apps.kruise.io/cloneset-instance-id': 'abcde',
      'lifecycle.apps.kruise.io/state': 'PreparingNormal',
    });
    expect(p.metadata.annotations).toEqual({ note: 'n', 'lifecycle.apps.kruise.io/timestamp': '2026-01-01T00:10:00Z' });
  });

  it('always appends the InPlaceUpdateReady readiness gate', () => {
    expect(p.spec.readinessGates).toEqual([{ conditionType: 'InPlaceUpdateReady' }]);
  });

  it('mounts its claims in place of same-named template volumes', () => {
    expect(p.spec.volumes).toEqual([
      { name: 'data', persistentVolumeClaim: { claimName: 'data-cs-abcde' } },
      { name: 'cfg', configMap: expect.objectContaining({ name: 'c' }) },
    ]);
  });

  it('newClaims: one PVC per template, named <template>-<cs>-<id>, labelled and owned', () => {
    expect(newClaims(withClaims, 'abcde')).toEqual([
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: {
          name: 'data-cs-abcde',
          namespace: 'ns',
          labels: { app: 'web', 'apps.kruise.io/cloneset-instance-id': 'abcde' },
          ownerReferences: [expect.objectContaining({ kind: 'CloneSet', uid: 'cs-uid' })],
        },
        spec: expect.objectContaining({ accessModes: ['ReadWriteOnce'] }),
      },
    ]);
  });
});

describe('instance ids', () => {
  const claim = (id: string): PersistentVolumeClaim => ({
    metadata: { name: `data-cs-${id}`, labels: { 'apps.kruise.io/cloneset-instance-id': id } },
  });

  it('are 5 characters of the SafeEncodeString alphabet', () => {
    for (let i = 0; i < 50; i++) expect(randomInstanceId()).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('reuse ids of orphaned PVCs first, then avoid every id in use', () => {
    const pods = [pod({ labels: { 'apps.kruise.io/cloneset-instance-id': 'bbbbb' } })];
    const sequence = ['bbbbb', 'ccccc', 'ddddd', 'ddddd', 'fffff'];
    let i = 0;
    const fixed = (): number => {
      const ch = sequence[Math.floor(i++ / 5)]![0]!;
      return ('bcdfghjklmnpqrstvwxz2456789'.indexOf(ch) + 0.5) / 27;
    };
    // 'bbbbb' is a pod's, 'ccccc' an orphaned PVC's: reused once, then never generated again.
    expect(availableInstanceIds(3, pods, [claim('ccccc'), claim('bbbbb')], fixed)).toEqual(['ccccc', 'ddddd', 'fffff']);
  });
});

describe('containerPriorities', () => {
  it('reads KRUISE_CONTAINER_PRIORITY only when the values differ, and the injected barrier env', () => {
    const p = pod();
    p.spec.containers = [
      { name: 'a', image: 'a', env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '1' }] },
      { name: 'b', image: 'b' },
    ];
    expect([...containerPriorities(p)]).toEqual([
      ['a', 1],
      ['b', 0],
    ]);
    p.spec.containers[1]!.env = [{ name: 'KRUISE_CONTAINER_PRIORITY', value: '1' }];
    expect([...containerPriorities(p).values()]).toEqual([undefined, undefined]);
    p.spec.containers[0]!.env = [
      { name: 'KRUISE_CONTAINER_BARRIER', valueFrom: { configMapKeyRef: { name: 'x', key: 'p_-3' } } },
    ];
    expect(containerPriorities(p).get('a')).toBe(-3);
  });
});
