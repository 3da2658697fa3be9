import { describe, expect, it } from 'vitest';
import { applyJsonPatch, createJsonPatch, pointer } from './admission/json-patch.js';
import { denyInvalid, parseAdmissionReview, reviewResponse } from './admission/review.js';
import { planRotation, type ObservedCerts, type RotationInput, type RotationPolicy } from './certs/rotation.js';
import type { CertState } from './certs/state.js';
import { injectKruiseReadinessGate } from './mutating/readiness-gate.js';

describe('json patch', () => {
  it('turns one document into another (add, replace, remove, escaped keys, whole arrays)', () => {
    const from = { a: 1, b: { 'x/y': 1, gone: true }, list: [1, 2] };
    const to = { a: 2, b: { 'x/y': 2 }, list: [1, 2, 3], added: { z: 1 } };
    const patch = createJsonPatch(from, to);
    expect(patch).toContainEqual({ op: 'replace', path: '/b/x~1y', value: 2 });
    expect(patch).toContainEqual({ op: 'remove', path: '/b/gone' });
    expect(applyJsonPatch(from, patch)).toEqual(to);
    expect(createJsonPatch(to, structuredClone(to))).toEqual([]);
    expect(pointer(['a~b', 'c/d'])).toBe('/a~0b/c~1d');
  });
});

describe('AdmissionReview envelope', () => {
  it('rejects malformed reviews with WEBHOOK_ERR_BAD_REVIEW', () => {
    for (const body of [
      '{',
      '[]',
      '{"apiVersion":"v1"}',
      '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}',
    ]) {
      expect(() => parseAdmissionReview(body)).toThrow(expect.objectContaining({ code: 'WEBHOOK_ERR_BAD_REVIEW' }));
    }
  });

  it('answers denials with the field paths as causes', () => {
    const decision = denyInvalid('CloneSet.apps.kruise.io "a"', [
      { path: 'spec.replicas', code: 'Invalid', message: 'Invalid value: -1: must be >= 0' },
    ]);
    const review = reviewResponse('u1', decision);
    expect(review.response).toMatchObject({ uid: 'u1', allowed: false, status: { code: 422 } });
    expect(review.response!.status!.message).toContain('spec.replicas: Invalid value');
    expect(review.response!.status!.details!.causes[0]!.field).toBe('spec.replicas');
  });
});

describe('KruisePodReady gate', () => {
  it('is added once, only for pods a Kruise workload controls', () => {
    const ref = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'c', uid: 'u', controller: true };
    const pod = { metadata: { ownerReferences: [ref] }, spec: {} };
    expect(injectKruiseReadinessGate(pod)).toBe(true);
    expect(injectKruiseReadinessGate(pod)).toBe(false);
    expect(pod.spec).toEqual({ readinessGates: [{ conditionType: 'KruisePodReady' }] });
    const deployment = { metadata: { ownerReferences: [{ ...ref, apiVersion: 'apps/v1' }] }, spec: {} };
    expect(injectKruiseReadinessGate(deployment)).toBe(false);
  });
});

describe('certificate rotation plan', () => {
  const policy: RotationPolicy = {
    caValidityMs: 100,
    servingValidityMs: 50,
    renewFraction: 0.5,
    propagationMs: 10,
    retireAfterMs: 20,
  };
  const ca = { certPem: 'CA', keyPem: 'k' };
  const next = { certPem: 'NEXT', keyPem: 'k' };
  const servingOk = { notBefore: 0, notAfter: 50, hosts: ['h'], signedByCa: true };
  /** The step for host h under `policy`, unless `more` says otherwise. */
  const plan = (state: CertState, observed: ObservedCerts, now: number, more: Partial<RotationInput> = {}) =>
    planRotation({ state, observed, policy, wantedHosts: ['h'], now, ...more });

  it('steps through create, announce, promote (only once published), retire', () => {
    expect(plan({ bundle: [] }, {}, 0)).toEqual({ action: 'create' });
    const fresh = { ca: { notBefore: 0, notAfter: 100 }, serving: servingOk };
    expect(plan({ ca, bundle: ['CA'] }, fresh, 10)).toEqual({ action: 'none' });
    expect(plan({ ca, bundle: ['CA'] }, fresh, 60)).toEqual({
      action: 'announce-ca',
    });
    const announced = { ca, nextCa: next, bundle: ['CA', 'NEXT'], bundleChangedAt: 60 };
    const young = { ...fresh, serving: { ...servingOk, notBefore: 60, notAfter: 110 } };
    expect(plan(announced, young, 80).action).toBe('wait');
    expect(plan(announced, fresh, 75, { publishedAt: 61 })).toEqual({ action: 'promote-ca' });
    const promoted = { ca: next, bundle: ['NEXT', 'CA'], bundleChangedAt: 75 };
    const after = { ca: { notBefore: 60, notAfter: 160 }, serving: { ...servingOk, notBefore: 75, notAfter: 125 } };
    expect(plan(promoted, after, 80).action).toBe('wait');
    expect(plan(promoted, after, 96)).toEqual({ action: 'retire-ca' });
  });

  it('renews the serving certificate when expiring, unsigned by the CA or missing a host', () => {
    const state = { ca, bundle: ['CA'] };
    const observed = (s: Partial<typeof servingOk>) => ({
      ca: { notBefore: 0, notAfter: 100 },
      serving: { ...servingOk, ...s },
    });
    expect(plan(state, observed({}), 30).action).toBe('renew-serving');
    expect(plan(state, observed({ signedByCa: false }), 1).action).toBe('renew-serving');
    expect(plan(state, observed({}), 1, { wantedHosts: ['h', 'other'] }).action).toBe('renew-serving');
  });

  it('renews an expiring serving certificate under the current CA while the next CA waits to propagate', () => {
    const announced = { ca, nextCa: next, bundle: ['CA', 'NEXT'], bundleChangedAt: 60 };
    const fresh = { ca: { notBefore: 0, notAfter: 100 }, serving: { ...servingOk, notBefore: 40, notAfter: 90 } };
    // Not yet published by this replica: promotion waits, the serving certificate is still young.
    expect(plan(announced, fresh, 62).action).toBe('wait');
    // Still waiting when less than half of the serving lifetime is left: renew it now.
    expect(plan(announced, fresh, 70)).toEqual({
      action: 'renew-serving',
      reason: 'expiring while the next CA propagates',
    });
    // Once promotion is due it wins: the new CA signs the next serving certificate anyway.
    expect(plan(announced, fresh, 75, { publishedAt: 61 })).toEqual({ action: 'promote-ca' });
  });
});
