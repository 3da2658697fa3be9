import { describe, expect, it } from 'vitest';
import type { AdmissionRequest } from '../admission/types.js';
import { kruiseValidatingHandler } from '../validating/kruise-validation.js';
import { kruiseDefaultingHandler } from './kruise-defaults.js';

const object = (version: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: `apps.kruise.io/${version}`,
  kind: 'StatefulSet',
  metadata: { name: 'web', namespace: 'ns' },
  spec: {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'm', image: 'nginx' }] } },
    ...spec,
  },
});

const request = (version: string, obj: unknown): AdmissionRequest => ({
  uid: 'u',
  kind: { group: 'apps.kruise.io', version, kind: 'StatefulSet' },
  resource: { group: 'apps.kruise.io', version, resource: 'statefulsets' },
  operation: 'CREATE',
  object: obj,
});

async function added(version: string): Promise<Record<string, unknown>> {
  const decision = await kruiseDefaultingHandler('StatefulSet')(request(version, object(version)));
  const patch = decision.allowed ? (decision.patch ?? []) : [];
  return Object.fromEntries(patch.map((op) => [op.path, (op as { value?: unknown }).value]));
}

describe('StatefulSet admission at both served versions', () => {
  it('defaults a v1beta1 set as OpenKruise v1.9 does, the PVC retention policy included', async () => {
    expect(await added('v1beta1')).toMatchObject({
      '/spec/podManagementPolicy': 'OrderedReady',
      '/spec/replicas': 1,
      '/spec/updateStrategy': {
        type: 'RollingUpdate',
        rollingUpdate: { partition: 0, maxUnavailable: 1, podUpdatePolicy: 'ReCreate', minReadySeconds: 0 },
      },
      '/spec/persistentVolumeClaimRetentionPolicy': { whenDeleted: 'Retain', whenScaled: 'Retain' },
    });
  });

  it('defaults a v1alpha1 set without v1beta1-only fields, which v1alpha1 cannot hold', async () => {
    const patch = await added('v1alpha1');
    expect(patch['/spec/podManagementPolicy']).toBe('OrderedReady');
    expect(Object.keys(patch).filter((p) => /retention|annotations/i.test(p))).toEqual([]);
  });

  it('refuses what OpenKruise refuses, naming the field, at either version', async () => {
    const validate = kruiseValidatingHandler('StatefulSet');
    const beta = await validate(request('v1beta1', object('v1beta1', { scaleStrategy: { maxUnavailable: 2 } })));
    expect(beta.allowed ? '' : beta.message).toContain('spec.scaleStrategy.maxUnavailable');
    const alpha = await validate(request('v1alpha1', object('v1alpha1', { reserveOrdinals: [1] })));
    expect(alpha.allowed ? '' : alpha.message).toContain('spec.reserveOrdinals');
    expect((await validate(request('v1alpha1', object('v1alpha1')))).allowed).toBe(true);
  });
});
