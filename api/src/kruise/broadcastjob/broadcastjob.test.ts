import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../../validation/field-error.js';
import { defaultBroadcastJob } from './defaults.js';
import type { BroadcastJob } from './schema.js';
import { validateBroadcastJob } from './validation.js';

function job(spec: Partial<BroadcastJob['spec']> = {}): BroadcastJob {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'BroadcastJob',
    metadata: { name: 'bcj' },
    spec: {
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } },
      ...spec,
    },
  };
}

describe('BroadcastJob defaults', () => {
  it('are OpenKruise v1.9’s: Always, no parallelism limit, FailFast, and the pod defaults', () => {
    const { spec } = defaultBroadcastJob(job());
    expect(spec.completionPolicy).toEqual({ type: 'Always' });
    expect(spec.parallelism).toBe(2147483647);
    expect(spec.failurePolicy).toEqual({ type: 'FailFast' });
    expect(spec.template.spec).toMatchObject({ restartPolicy: 'Never', dnsPolicy: 'ClusterFirst' });
    expect(defaultBroadcastJob(defaultBroadcastJob(job()))).toEqual(defaultBroadcastJob(job()));
  });

  it('keep what is set', () => {
    const { spec } = defaultBroadcastJob(
      job({ parallelism: '50%', completionPolicy: { type: 'Never' }, failurePolicy: { type: 'Pause' } }),
    );
    expect([spec.parallelism, spec.completionPolicy?.type, spec.failurePolicy?.type]).toEqual([
      '50%',
      'Never',
      'Pause',
    ]);
  });
});

describe('BroadcastJob validation', () => {
  it.each([
    [{ parallelism: 0 }, []],
    [{ parallelism: '100%' }, []],
    [{ parallelism: -1 }, ['spec.parallelism: Invalid value: -1: must be greater than or equal to 0']],
    [{ completionPolicy: { ttlSecondsAfterFinished: 0 } }, []],
    [
      { completionPolicy: { ttlSecondsAfterFinished: -5 } },
      ['spec.completionPolicy.ttlSecondsAfterFinished: Invalid value: -5: must be greater than or equal to 0'],
    ],
    [{ failurePolicy: { type: 'Continue', restartLimit: 2 } }, []],
  ] as const)('%j → %j', (spec, expected) => {
    expect(validateBroadcastJob(job(spec as Partial<BroadcastJob['spec']>)).map(formatFieldError)).toEqual(expected);
  });

  it('refuses a template without restartPolicy, which defaults to Always', () => {
    const noPolicy = job({ template: { spec: { containers: [{ name: 'main', image: 'busybox' }] } } });
    expect(validateBroadcastJob(noPolicy).map(formatFieldError)).toEqual([
      'spec.template.spec.restartPolicy: Invalid value: "Always": pod restartPolicy can only be Never or OnFailure',
    ]);
  });

  it('refuses a long name, and the controller-uid label preset', () => {
    const long = { ...job(), metadata: { name: 'a'.repeat(64) } };
    expect(validateBroadcastJob(long).map((e) => e.path)).toContain('metadata.name');
    const preset = job({
      template: {
        metadata: { labels: { 'broadcastjob-controller-uid': 'x' } },
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] },
      },
    });
    expect(validateBroadcastJob(preset).map((e) => e.path)).toEqual(['spec.template.metadata.labels']);
  });
});
