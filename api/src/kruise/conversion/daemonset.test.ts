import { describe, expect, it } from 'vitest';
import { convertKruiseObject } from './index.js';
import { validateKruiseObject } from '../validate.js';

const ALPHA = 'apps.kruise.io/v1alpha1';
const BETA = 'apps.kruise.io/v1beta1';

const alpha = {
  apiVersion: ALPHA,
  kind: 'DaemonSet',
  metadata: { name: 'ds', annotations: { 'daemonset.kruise.io/progressive-create-pod': 'true' } },
  spec: {
    selector: { matchLabels: { app: 'a' } },
    template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    updateStrategy: {
      type: 'RollingUpdate',
      rollingUpdate: { rollingUpdateType: 'Surging', maxSurge: 1, partition: '20%' },
    },
  },
  status: { desiredNumberScheduled: 3, daemonSetHash: 'abc' },
};

describe('DaemonSet conversion', () => {
  it('to v1beta1: Surging becomes Standard, the annotation becomes partitionedScaling and stays, hash → updateRevision', () => {
    const out = convertKruiseObject(alpha, BETA);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    const beta = out.object as typeof alpha & { spec: { scaleStrategy?: unknown }; status: Record<string, unknown> };
    expect(beta.apiVersion).toBe(BETA);
    expect(beta.spec.updateStrategy.rollingUpdate).toEqual({
      rollingUpdateType: 'Standard',
      maxSurge: 1,
      partition: '20%',
    });
    expect(beta.spec.scaleStrategy).toEqual({ partitionedScaling: true });
    expect(beta.metadata.annotations).toEqual(alpha.metadata.annotations);
    expect(beta.status).toEqual({ desiredNumberScheduled: 3, updateRevision: 'abc' });
  });

  it('to v1alpha1: partitionedScaling true becomes the annotation; false is lost; updateRevision → daemonSetHash', () => {
    const beta = {
      apiVersion: BETA,
      kind: 'DaemonSet',
      metadata: { name: 'ds' },
      spec: { ...alpha.spec, scaleStrategy: { partitionedScaling: true } },
      status: { updateRevision: 'h1' },
    };
    const out = convertKruiseObject(beta, ALPHA);
    if (!out.ok) throw new Error('conversion failed');
    expect(out.object.metadata).toEqual({
      name: 'ds',
      annotations: { 'daemonset.kruise.io/progressive-create-pod': 'true' },
    });
    expect((out.object.spec as Record<string, unknown>).scaleStrategy).toBeUndefined();
    expect(out.object.status).toEqual({ daemonSetHash: 'h1' });
    const off = convertKruiseObject(
      { ...beta, spec: { ...beta.spec, scaleStrategy: { partitionedScaling: false } } },
      ALPHA,
    );
    if (!off.ok) throw new Error('conversion failed');
    expect(off.object.metadata).toEqual({ name: 'ds' });
  });

  it('reports a malformed field instead of throwing', () => {
    const out = convertKruiseObject({ ...alpha, spec: { ...alpha.spec, updateStrategy: 'x' } }, BETA, 'objects[0]');
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.errors[0]?.path).toBe('objects[0].spec.updateStrategy');
  });

  it('validation refuses Surging at v1beta1 and accepts it at v1alpha1', () => {
    const { status: _status, ...object } = alpha;
    expect(validateKruiseObject(object)).toEqual([]);
    const errors = validateKruiseObject({ ...object, apiVersion: BETA, metadata: { name: 'ds' } });
    expect(errors.map((e) => e.path)).toEqual(['spec.updateStrategy.rollingUpdate.rollingUpdateType']);
  });
});
