import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../../validation/field-error.js';
import { KRUISE_API_VERSION, KRUISE_V1BETA1_API_VERSION } from '../constants.js';
import {
  ANNOTATION_STATEFULSET_V1BETA1_PARTS,
  statefulSetToV1alpha1,
  statefulSetToV1beta1,
} from '../conversion/statefulset.js';
import { convertKruiseObject, templateAsV1alpha1, type TemplateLike } from '../conversion/index.js';
import { validateKruiseObject, validateKruiseObjectUpdate } from '../validate.js';
import { defaultStatefulSet } from './defaults.js';
import { reservedOrdinals } from './ordinals.js';
import type { StatefulSet } from './schema.js';

function set(spec: Partial<StatefulSet['spec']> = {}): StatefulSet {
  return {
    apiVersion: KRUISE_V1BETA1_API_VERSION,
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx' }] } },
      ...spec,
    },
  };
}

describe('StatefulSet defaults', () => {
  it('are OpenKruise v1.9’s with its default gates', () => {
    const { spec } = defaultStatefulSet(set());
    expect(spec.podManagementPolicy).toBe('OrderedReady');
    expect(spec.updateStrategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { partition: 0, maxUnavailable: 1, podUpdatePolicy: 'ReCreate', minReadySeconds: 0 },
    });
    expect(spec.persistentVolumeClaimRetentionPolicy).toEqual({ whenDeleted: 'Retain', whenScaled: 'Retain' });
    expect([spec.replicas, spec.revisionHistoryLimit]).toEqual([1, 10]);
    expect(spec.volumeClaimUpdateStrategy).toBeUndefined();
    expect(spec.template.spec).toMatchObject({ restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' });
    expect(defaultStatefulSet(defaultStatefulSet(set()))).toEqual(defaultStatefulSet(set()));
  });

  it('leave OnDelete without a rollingUpdate', () => {
    expect(defaultStatefulSet(set({ updateStrategy: { type: 'OnDelete' } })).spec.updateStrategy).toEqual({
      type: 'OnDelete',
    });
  });
});

describe('StatefulSet validation', () => {
  it('accepts Parallel with a percentage maxUnavailable, at both versions', () => {
    const parallel = set({
      podManagementPolicy: 'Parallel',
      updateStrategy: { rollingUpdate: { maxUnavailable: '50%' } },
    });
    expect(validateKruiseObject(parallel)).toEqual([]);
    const alpha = { ...parallel, apiVersion: KRUISE_API_VERSION };
    expect(validateKruiseObject(alpha)).toEqual([]);
  });

  it('refuses scaleStrategy.maxUnavailable above 1 without Parallel', () => {
    const errors = validateKruiseObject(set({ scaleStrategy: { maxUnavailable: 2 } })).map(formatFieldError);
    expect(errors).toEqual([
      'spec.scaleStrategy.maxUnavailable: Invalid value: 2: can only work with Parallel PodManagementPolicyType',
    ]);
  });

  it('names readinessGates that are not a list instead of failing (in-place policies read them)', () => {
    const bad = set({ updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } } });
    (bad.spec.template.spec as Record<string, unknown>).readinessGates = false;
    const errors = validateKruiseObject(bad);
    expect(errors.map((e) => e.code)).not.toContain('Internal');
    expect(errors.map((e) => e.path)).toContain('spec.template.spec.readinessGates');
  });

  it('refuses changes to selector, serviceName and podManagementPolicy on update, and allows the rest', () => {
    const before = defaultStatefulSet(set({ serviceName: 'web' }));
    const scaled = { ...before, spec: { ...before.spec, replicas: 5, reserveOrdinals: [0] } };
    expect(validateKruiseObjectUpdate(scaled, before)).toEqual([]);
    const renamed = { ...before, spec: { ...before.spec, serviceName: 'other' } };
    expect(validateKruiseObjectUpdate(renamed, before).map((e) => e.path)).toEqual(['spec']);
    const parallel = { ...before, spec: { ...before.spec, podManagementPolicy: 'Parallel' } };
    expect(validateKruiseObjectUpdate(parallel, before).map((e) => e.code)).toEqual(['Forbidden']);
  });
});

describe('StatefulSet conversion', () => {
  const beta = defaultStatefulSet(
    set({
      reserveOrdinals: [1, '3-4'],
      lifecycle: { preDelete: { labelsHandler: { hold: 'true' } } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
    }),
  );
  const withStatus = {
    ...beta,
    status: {
      replicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      updatedReadyReplicas: 3,
    },
  };

  it('to v1alpha1 moves the v1beta1-only spec into an annotation and drops v1beta1-only status', () => {
    const alpha = statefulSetToV1alpha1(withStatus, KRUISE_API_VERSION) as unknown as StatefulSet;
    expect(alpha.apiVersion).toBe(KRUISE_API_VERSION);
    expect(alpha.spec.reserveOrdinals).toBeUndefined();
    expect(alpha.spec.persistentVolumeClaimRetentionPolicy).toBeUndefined();
    expect(alpha.status).not.toHaveProperty('updatedReadyReplicas');
    expect(JSON.parse(alpha.metadata?.annotations?.[ANNOTATION_STATEFULSET_V1BETA1_PARTS] ?? '{}')).toEqual({
      reserveOrdinals: [1, '3-4'],
      lifecycle: { preDelete: { labelsHandler: { hold: 'true' } } },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
    });
    expect(validateKruiseObject(alpha)).toEqual([]);
  });

  it('round-trips the spec exactly', () => {
    const back = statefulSetToV1beta1(statefulSetToV1alpha1(beta, KRUISE_API_VERSION), KRUISE_V1BETA1_API_VERSION);
    expect(back).toEqual(beta);
  });

  it('goes through the conversion dispatch, and a v1alpha1 set without the annotation converts 1:1', () => {
    const alpha = { ...set(), apiVersion: KRUISE_API_VERSION };
    const outcome = convertKruiseObject(alpha, KRUISE_V1BETA1_API_VERSION);
    expect(outcome).toEqual({ ok: true, object: { ...alpha, apiVersion: KRUISE_V1BETA1_API_VERSION } });
    const bad = convertKruiseObject({ ...alpha, spec: 'x' }, KRUISE_V1BETA1_API_VERSION);
    expect(bad.ok).toBe(false);
  });
});

describe('reserveOrdinals', () => {
  it('expands numbers and inclusive ranges, and reserves nothing when an entry is invalid', () => {
    expect([...reservedOrdinals([1, '3-5'])].sort()).toEqual([1, 3, 4, 5]);
    expect(reservedOrdinals([1, 'x']).size).toBe(0);
  });
});

describe('StatefulSet templates for the hub', () => {
  it('store a v1beta1 template at v1alpha1 with the v1beta1-only fields in the conversion annotation', () => {
    const spec = { ...set({ reserveOrdinals: [2] }).spec } as unknown as Record<string, unknown>;
    const input: TemplateLike = { apiVersion: KRUISE_V1BETA1_API_VERSION, spec };
    const out = templateAsV1alpha1('StatefulSet', input);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.template.spec).not.toHaveProperty('reserveOrdinals');
    expect(out.template.metadata?.annotations?.[ANNOTATION_STATEFULSET_V1BETA1_PARTS]).toBe('{"reserveOrdinals":[2]}');
    const override = templateAsV1alpha1('StatefulSet', {
      apiVersion: KRUISE_V1BETA1_API_VERSION,
      spec,
      overrides: { c1: { reserveOrdinals: [3] } },
    });
    expect(override.ok ? [] : override.errors.map((e) => e.path)).toEqual(['overrides.c1.reserveOrdinals']);
  });

  it('validate the annotation’s fields against the v1beta1 schema', () => {
    const alpha = statefulSetToV1alpha1(set({ reserveOrdinals: [1] }), KRUISE_API_VERSION) as unknown as StatefulSet;
    alpha.metadata!.annotations![ANNOTATION_STATEFULSET_V1BETA1_PARTS] = '{"reserveOrdinals":[true]}';
    expect(validateKruiseObject(alpha).map((e) => e.path)).toContain('spec.reserveOrdinals[0]');
  });
});
