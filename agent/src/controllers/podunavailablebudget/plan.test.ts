import type { PodUnavailableBudget } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../kube/types.js';
import { desiredAvailable, protectedOperations } from './availability.js';
import { overlapsOf } from './coverage.js';
import { planPub, statusChangeIsUrgent } from './plan.js';

const NOW = Date.parse('2026-01-01T00:01:00Z');
const iso = (msBefore: number): string => new Date(NOW - msBefore).toISOString().replace(/\.\d{3}Z$/, 'Z');

function pub(
  spec: Partial<PodUnavailableBudget['spec']> = {},
  status?: PodUnavailableBudget['status'],
): PodUnavailableBudget {
  return {
    apiVersion: 'policy.kruise.io/v1alpha1',
    kind: 'PodUnavailableBudget',
    metadata: { name: 'web', namespace: 'ns', generation: 3 },
    spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1, ...spec },
    ...(status ? { status } : {}),
  };
}

function pod(
  name: string,
  opts: { ready?: boolean; labels?: Record<string, string>; deleting?: boolean; bound?: string } = {},
): Pod {
  return {
    metadata: {
      name,
      namespace: 'ns',
      labels: { app: 'web', ...opts.labels },
      ...(opts.bound ? { annotations: { 'kruise.io/related-pub': opts.bound } } : {}),
      ...(opts.deleting ? { deletionTimestamp: iso(1000) } : {}),
    },
    spec: { containers: [] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }] },
  };
}

const base = { overlaps: [], nowMs: NOW };

describe('PodUnavailableBudget status', () => {
  it('counts available pods against replicas − maxUnavailable', () => {
    const pods = ['a', 'b', 'c', 'd'].map((n) => pod(n, { bound: 'web' }));
    pods.push(pod('e', { ready: false, bound: 'web' }));
    const plan = planPub({ ...base, pub: pub(), pods, expectedReplicas: 5 });
    expect(plan.status).toEqual({
      observedGeneration: 3,
      unavailableAllowed: 0,
      currentAvailable: 4,
      desiredAvailable: 4,
      totalReplicas: 5,
    });
    expect(plan.bind).toEqual([]);
    expect(plan.requeueAfterMs).toBeUndefined();
  });

  it('treats pods in the admission records as unavailable and expires the records as OpenKruise does', () => {
    const pods = ['a', 'b', 'c', 'd', 'e'].map((n) => pod(n, { bound: 'web' }));
    const status = {
      disruptedPods: { a: iso(5_000), b: iso(25_000) },
      unavailablePods: { c: iso(3_000), d: iso(11_000), gone: iso(1_000) },
      unavailableAllowed: 0,
      currentAvailable: 0,
      desiredAvailable: 0,
      totalReplicas: 0,
    };
    const plan = planPub({ ...base, pub: pub({ maxUnavailable: '40%' }, status), pods, expectedReplicas: 5 });
    expect(plan.status.disruptedPods).toEqual({ a: iso(5_000) });
    expect(plan.status.unavailablePods).toEqual({ c: iso(3_000) });
    expect(plan.status).toMatchObject({ currentAvailable: 3, desiredAvailable: 3, unavailableAllowed: 0 });
    expect(plan.events).toEqual([expect.objectContaining({ on: { pod: 'b' }, type: 'Warning', reason: 'NotDeleted' })]);
    expect(plan.requeueAfterMs).toBe(7_000);
  });

  it('drops the record of a pod being deleted, and binds unbound pods', () => {
    const status = {
      disruptedPods: { a: iso(1_000) },
      unavailableAllowed: 0,
      currentAvailable: 0,
      desiredAvailable: 0,
      totalReplicas: 0,
    };
    const plan = planPub({
      ...base,
      pub: pub({}, status),
      pods: [pod('a', { deleting: true }), pod('b'), pod('c', { labels: { 'unavailable-pod.kruise.io/x': 'y' } })],
      expectedReplicas: 2,
    });
    expect(plan.status.disruptedPods).toBeUndefined();
    expect(plan.status).toMatchObject({ currentAvailable: 1, desiredAvailable: 1, unavailableAllowed: 0 });
    expect(plan.bind).toEqual(['b', 'c']);
  });

  it('reports a budget covering nothing, once', () => {
    const first = planPub({ ...base, pub: pub(), pods: [], expectedReplicas: 0 });
    expect(first.status.conditions).toEqual([
      expect.objectContaining({ type: 'NoPodsMatched', status: 'True', reason: 'NoPods' }),
    ]);
    expect(first.events).toEqual([expect.objectContaining({ on: 'pub', reason: 'NoPods' })]);
    const again = planPub({ ...base, nowMs: NOW + 5000, pub: pub({}, first.status), pods: [], expectedReplicas: 0 });
    expect(again.events).toEqual([]);
    expect(again.status).toEqual(first.status);
  });

  it('reports a missing target by name', () => {
    const target = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'nope' };
    const plan = planPub({
      ...base,
      pub: pub({ selector: undefined, targetRef: target }),
      pods: [],
      expectedReplicas: undefined,
    });
    expect(plan.status.conditions?.[0]).toMatchObject({
      type: 'TargetNotFound',
      message: 'targetRef CloneSet/nope (apps.kruise.io/v1alpha1) does not exist',
    });
    expect(plan.status).toMatchObject({ totalReplicas: 0, desiredAvailable: 0, unavailableAllowed: 0 });
  });

  it('reports pods two budgets cover, and leaves their binding to the first by name', () => {
    const other = { ...pub(), metadata: { name: 'aaa', namespace: 'ns' } };
    const pods = [pod('a'), pod('b', { bound: 'aaa' })];
    const overlaps = overlapsOf(pub(), pods, [pub(), other]);
    expect(overlaps).toEqual([
      { pod: 'a', otherPub: 'aaa' },
      { pod: 'b', otherPub: 'aaa' },
    ]);
    const plan = planPub({ ...base, pub: pub(), pods, expectedReplicas: 2, overlaps });
    expect(plan.bind).toEqual([]);
    expect(plan.status.conditions?.[0]).toMatchObject({ type: 'PodsOverlap', reason: 'OverlappingBudgets' });
    expect(plan.status.conditions?.[0]?.message).toContain('a (also aaa)');
  });
});

describe('budget arithmetic', () => {
  it.each([
    [{ maxUnavailable: 1 }, 5, 4],
    [{ maxUnavailable: '25%' }, 5, 3],
    [{ maxUnavailable: 9 }, 5, 0],
    [{ minAvailable: 2 }, 5, 2],
    [{ minAvailable: '50%' }, 5, 3],
  ] as const)('%j of %d replicas keeps %d available', (spec, replicas, expected) => {
    expect(desiredAvailable(pub({ maxUnavailable: undefined, ...spec }), replicas)).toBe(expected);
  });

  it('guards DELETE, UPDATE and EVICT by default, RESIZE with UPDATE while pods cannot resize in place', () => {
    expect([...protectedOperations(pub(), true)].sort()).toEqual(['DELETE', 'EVICT', 'UPDATE']);
    expect([...protectedOperations(pub(), false)].sort()).toEqual(['DELETE', 'EVICT', 'RESIZE', 'UPDATE']);
    const annotated = {
      ...pub(),
      metadata: { name: 'web', annotations: { 'kruise.io/pub-protect-operations': 'EVICT,RESIZE' } },
    };
    expect([...protectedOperations(annotated, true)].sort()).toEqual(['EVICT', 'RESIZE']);
  });
});

describe('statusChangeIsUrgent', () => {
  const before = {
    unavailableAllowed: 3,
    currentAvailable: 8,
    desiredAvailable: 5,
    totalReplicas: 8,
    observedGeneration: 2,
  };

  it('writes at once what admissions read: allowance, desired count, generation, conditions, a first status', () => {
    expect(statusChangeIsUrgent(before, { ...before, unavailableAllowed: 4, currentAvailable: 9 })).toBe(true);
    expect(statusChangeIsUrgent(before, { ...before, unavailableAllowed: 2, currentAvailable: 7 })).toBe(true);
    expect(statusChangeIsUrgent(before, { ...before, desiredAvailable: 6 })).toBe(true);
    expect(statusChangeIsUrgent(before, { ...before, observedGeneration: 3 })).toBe(true);
    const problem = { type: 'NoPodsMatched', status: 'True', reason: 'NoPods', message: 'x', lastTransitionTime: 't' };
    expect(statusChangeIsUrgent(before, { ...before, conditions: [problem] })).toBe(true);
    expect(statusChangeIsUrgent(undefined, before)).toBe(true);
  });

  it('lets counts and admission records wait', () => {
    const recorded = { ...before, disruptedPods: { a: iso(1000), b: iso(2000) } };
    expect(statusChangeIsUrgent(recorded, { ...before, currentAvailable: 6, totalReplicas: 6 })).toBe(false);
    expect(statusChangeIsUrgent(before, { ...before, unavailablePods: { c: iso(0) } })).toBe(false);
  });
});
