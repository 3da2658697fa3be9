import type { PodUnavailableBudget } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../runtime/kube-object.js';
import { bindNewPod, pubForNewPod, resolvePodWorkload, sameWorkload } from './binding.js';
import type { WorkloadRef } from './client.js';

function pub(name: string, spec: Partial<PodUnavailableBudget['spec']>): PodUnavailableBudget {
  return {
    apiVersion: 'policy.kruise.io/v1alpha1',
    kind: 'PodUnavailableBudget',
    metadata: { name, namespace: 'ns' },
    spec: { maxUnavailable: 1, ...spec },
  };
}

const owned = (kind: string, name: string, apiVersion = 'apps/v1'): KubeObject => ({
  metadata: {
    name: 'p',
    labels: { app: 'web' },
    ownerReferences: [{ apiVersion, kind, name, uid: 'u', controller: true }],
  },
});

const cloneSetRef = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' };

describe('sameWorkload', () => {
  it.each([
    ['another version of the group', { ...cloneSetRef, apiVersion: 'apps.kruise.io/v1beta1' }, true],
    ['another group', { ...cloneSetRef, apiVersion: 'apps/v1' }, false],
    ['another kind', { ...cloneSetRef, kind: 'StatefulSet' }, false],
    ['another name', { ...cloneSetRef, name: 'api' }, false],
  ])('%s', (_, ref, same) => {
    expect(sameWorkload(cloneSetRef, ref)).toBe(same);
  });
});

describe('pubForNewPod', () => {
  const labels = { app: 'web', tier: 'front' };

  it('binds a pod to the budget whose targetRef names its workload, at any version of its group', () => {
    const pubs = [pub('by-target', { targetRef: { ...cloneSetRef, apiVersion: 'apps.kruise.io/v1beta1' } })];
    expect(pubForNewPod(labels, cloneSetRef, pubs)).toBe('by-target');
    expect(pubForNewPod(labels, { ...cloneSetRef, name: 'other' }, pubs)).toBeUndefined();
  });

  it('binds a pod to the budget whose selector matches its labels', () => {
    const pubs = [
      pub('other-app', { selector: { matchLabels: { app: 'api' } } }),
      pub('front', { selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['front'] }] } }),
    ];
    expect(pubForNewPod(labels, undefined, pubs)).toBe('front');
  });

  it('never binds through an empty selector, nor through a targetRef when the workload is unknown', () => {
    const pubs = [pub('empty', { selector: {} }), pub('target', { targetRef: cloneSetRef })];
    expect(pubForNewPod(labels, undefined, pubs)).toBeUndefined();
  });

  it('takes the first budget by name when two would have the pod', () => {
    const pubs = [
      pub('zeta', { selector: { matchLabels: { app: 'web' } } }),
      pub('alpha', { targetRef: cloneSetRef }),
      pub('beta', { selector: { matchLabels: { tier: 'front' } } }),
    ];
    expect(pubForNewPod(labels, cloneSetRef, pubs)).toBe('alpha');
    expect(pubForNewPod(labels, undefined, pubs)).toBe('beta');
  });
});

describe('resolvePodWorkload', () => {
  const deployment: WorkloadRef = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' };
  const asked: WorkloadRef[] = [];
  const lookup = (_ns: string, rs: WorkloadRef): Promise<WorkloadRef | undefined> => {
    asked.push(rs);
    return Promise.resolve(rs.name === 'web-5d8f' ? deployment : undefined);
  };

  it('takes the controller itself, reading nothing, unless it is a ReplicaSet', async () => {
    asked.length = 0;
    expect(await resolvePodWorkload(owned('CloneSet', 'web', 'apps.kruise.io/v1alpha1'), 'ns', lookup)).toEqual(
      cloneSetRef,
    );
    expect(await resolvePodWorkload(owned('StatefulSet', 'db'), 'ns', lookup)).toEqual({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      name: 'db',
    });
    expect(await resolvePodWorkload({ metadata: { name: 'bare' } }, 'ns', lookup)).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it("asks for a ReplicaSet's workload: its Deployment, or nothing when the ReplicaSet is gone", async () => {
    asked.length = 0;
    expect(await resolvePodWorkload(owned('ReplicaSet', 'web-5d8f'), 'ns', lookup)).toEqual(deployment);
    expect(await resolvePodWorkload(owned('ReplicaSet', 'gone'), 'ns', lookup)).toBeUndefined();
    expect(asked.map((r) => r.name)).toEqual(['web-5d8f', 'gone']);
  });
});

describe('bindNewPod', () => {
  const pod = owned('ReplicaSet', 'web-5d8f');
  const failing = (): Promise<WorkloadRef | undefined> => Promise.reject(new Error('apiserver down'));

  it('reads nothing when the namespace has no targetRef budget', async () => {
    const pubs = [pub('web', { selector: { matchLabels: { app: 'web' } } })];
    expect(await bindNewPod({ pod, namespace: 'ns', pubs, lookup: failing })).toBe('web');
    expect(await bindNewPod({ pod, namespace: 'ns', pubs: [], lookup: failing })).toBeUndefined();
  });

  it('binds through the Deployment of a ReplicaSet', async () => {
    const pubs = [pub('deploy', { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } })];
    const lookup = (): Promise<WorkloadRef | undefined> =>
      Promise.resolve({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' });
    expect(await bindNewPod({ pod, namespace: 'ns', pubs, lookup })).toBe('deploy');
  });

  it('falls back to selectors when the ReplicaSet cannot be read, and says so', async () => {
    const errors: unknown[] = [];
    const pubs = [
      pub('deploy', { targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } }),
      pub('sel', { selector: { matchLabels: { app: 'web' } } }),
    ];
    const bound = await bindNewPod({
      pod,
      namespace: 'ns',
      pubs,
      lookup: failing,
      onLookupError: (e) => errors.push(e),
    });
    expect(bound).toBe('sel');
    expect(errors).toHaveLength(1);
  });
});
