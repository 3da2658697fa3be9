import type { PodUnavailableBudget } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../kube/types.js';
import type { AdmissionRequest } from '../../webhook/admission/types.js';
import { canResizeInPlace, decidePub, updateOperation } from './decision.js';
import { pubQueryOf } from '../../webhook/validating/pub-handler.js';

const NOW = '2026-01-01T00:00:00Z';

function pod(over: { annotations?: Record<string, string>; ready?: boolean; cpu?: string; image?: string } = {}): Pod {
  return {
    metadata: {
      name: 'web-1',
      namespace: 'ns',
      annotations: { 'kruise.io/related-pub': 'web', ...over.annotations },
    },
    spec: {
      containers: [
        { name: 'main', image: over.image ?? 'nginx:1', resources: { requests: { cpu: over.cpu ?? '100m' } } },
      ],
    },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: over.ready === false ? 'False' : 'True' }] },
  };
}

function pub(allowed: number, extra: Partial<NonNullable<PodUnavailableBudget['status']>> = {}): PodUnavailableBudget {
  return {
    apiVersion: 'policy.kruise.io/v1alpha1',
    kind: 'PodUnavailableBudget',
    metadata: { name: 'web', namespace: 'ns' },
    spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 },
    status: { unavailableAllowed: allowed, currentAvailable: 3, desiredAvailable: 2, totalReplicas: 3, ...extra },
  };
}

describe('PodUnavailableBudget admission decision', () => {
  it('takes one from the budget and records the pod (disruptedPods for DELETE, EVICT, RESIZE)', () => {
    for (const op of ['DELETE', 'EVICT'] as const) {
      expect(decidePub(pod(), pub(1), op, false, NOW)).toEqual({
        action: 'take',
        status: { ...pub(1).status, unavailableAllowed: 0, disruptedPods: { 'web-1': NOW } },
      });
    }
  });

  it('records an in-place UPDATE in unavailablePods', () => {
    const decision = decidePub(pod(), pub(2), 'UPDATE', false, NOW);
    expect(decision).toMatchObject({
      action: 'take',
      status: { unavailableAllowed: 1, unavailablePods: { 'web-1': NOW } },
    });
  });

  it('refuses with OpenKruise’s message when nothing is left', () => {
    expect(decidePub(pod(), pub(0), 'EVICT', false, NOW)).toEqual({
      action: 'deny',
      message: 'podunavailablebudget.policy.kruise.io "web" is forbidden: pub unavailable allowed is negative',
    });
  });

  it('lets through what costs nothing: no-protect, an unavailable pod, a recorded pod, an unguarded operation', () => {
    expect(
      decidePub(pod({ annotations: { 'pub.kruise.io/no-protect': 'true' } }), pub(0), 'DELETE', false, NOW),
    ).toEqual({
      action: 'allow',
    });
    expect(decidePub(pod({ ready: false }), pub(0), 'DELETE', false, NOW)).toEqual({ action: 'allow' });
    expect(decidePub(pod(), pub(0, { disruptedPods: { 'web-1': NOW } }), 'DELETE', false, NOW)).toEqual({
      action: 'allow',
    });
    expect(decidePub(pod(), pub(0, { desiredAvailable: 0 }), 'DELETE', false, NOW)).toEqual({ action: 'allow' });
    const deleteOnly = pub(0);
    deleteOnly.metadata = { name: 'web', annotations: { 'kruise.io/pub-protect-operations': 'DELETE' } };
    expect(decidePub(pod(), deleteOnly, 'EVICT', false, NOW)).toEqual({ action: 'allow' });
    // RESIZE is guarded with UPDATE while pods cannot resize in place, not once they can.
    expect(decidePub(pod(), pub(0), 'RESIZE', false, NOW).action).toBe('deny');
    expect(decidePub(pod(), pub(0), 'RESIZE', true, NOW).action).toBe('allow');
  });

  it('refuses when the records grow past 2000', () => {
    const many = Object.fromEntries(Array.from({ length: 2001 }, (_, i) => [`p${i}`, NOW]));
    const decision = decidePub(pod(), pub(5, { disruptedPods: many }), 'DELETE', false, NOW);
    expect(decision).toMatchObject({ action: 'deny' });
    expect((decision as { message: string }).message).toContain('map too big');
  });
});

describe('pod requests as guarded operations', () => {
  const gates = { deleteGate: true, updateGate: true, inPlaceResize: false };
  const request = (over: Partial<AdmissionRequest>): AdmissionRequest => ({
    uid: 'u',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace: 'ns',
    name: 'web-1',
    operation: 'DELETE',
    ...over,
  });

  it('reads DELETE, eviction and UPDATE as OpenKruise does, and honours dry runs', () => {
    expect(pubQueryOf(request({ oldObject: pod(), dryRun: true }), gates)).toMatchObject({
      operation: 'DELETE',
      podName: 'web-1',
      dryRun: true,
    });
    expect(pubQueryOf(request({ operation: 'CREATE', subResource: 'eviction' }), gates)).toEqual({
      operation: 'EVICT',
      namespace: 'ns',
      podName: 'web-1',
      dryRun: false,
    });
    const update = request({ operation: 'UPDATE', oldObject: pod(), object: pod({ image: 'nginx:2' }) });
    expect(pubQueryOf(update, gates)).toMatchObject({ operation: 'UPDATE' });
    const resize = request({ operation: 'UPDATE', oldObject: pod(), object: pod({ cpu: '200m' }) });
    expect(pubQueryOf(resize, gates)).toMatchObject({ operation: 'RESIZE' });
  });

  it('asks nothing for unbound pods, metadata-only updates and gates that are off', () => {
    const unbound = pod();
    unbound.metadata.annotations = {};
    expect(pubQueryOf(request({ oldObject: unbound }), gates)).toBeUndefined();
    const relabel = pod({ annotations: { note: 'x' } });
    expect(pubQueryOf(request({ operation: 'UPDATE', oldObject: pod(), object: relabel }), gates)).toBeUndefined();
    const off = { ...gates, deleteGate: false, updateGate: false };
    expect(pubQueryOf(request({ oldObject: pod() }), off)).toBeUndefined();
    expect(pubQueryOf(request({ operation: 'CREATE', subResource: 'eviction' }), off)).toBeUndefined();
  });

  it('tells a resize from an update', () => {
    expect(canResizeInPlace(pod(), pod({ cpu: '300m' }))).toBe(true);
    expect(canResizeInPlace(pod(), pod({ image: 'nginx:2' }))).toBe(false);
    expect(updateOperation(pod(), pod())).toBeUndefined();
  });
});
