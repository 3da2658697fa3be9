import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../../validation/field-error.js';
import { FINALIZER_DELETION_PROTECTION } from '../constants.js';
import { defaultImagePullJob } from './defaults.js';
import type { ImagePullJob } from './schema.js';
import { validateImagePullJob } from './validation.js';

function job(spec: Partial<ImagePullJob['spec']> = {}): ImagePullJob {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImagePullJob',
    metadata: { name: 'pull' },
    spec: { image: 'nginx:1.25', ...spec },
  };
}

describe('ImagePullJob defaults', () => {
  it('are OpenKruise’s, and parallelism stays unset as OpenKruise stores it', () => {
    const defaulted = defaultImagePullJob(job());
    expect(defaulted.spec).toEqual({
      image: 'nginx:1.25',
      completionPolicy: { type: 'Always' },
      pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 },
      imagePullPolicy: 'IfNotPresent',
    });
    expect(defaulted.metadata?.finalizers).toEqual([FINALIZER_DELETION_PROTECTION]);
  });

  it('add the protection finalizer on create only when asked', () => {
    expect(defaultImagePullJob(job(), { addProtectionFinalizer: false }).metadata?.finalizers).toBeUndefined();
    const twice = defaultImagePullJob(defaultImagePullJob(job()));
    expect(twice.metadata?.finalizers).toEqual([FINALIZER_DELETION_PROTECTION]);
  });
});

describe('ImagePullJob validation', () => {
  it('measures the deadline against the default timeout when none is set', () => {
    expect(validateImagePullJob(job({ completionPolicy: { activeDeadlineSeconds: 600 } }))).toEqual([]);
    expect(
      validateImagePullJob(job({ completionPolicy: { activeDeadlineSeconds: 599 } })).map(formatFieldError),
    ).toEqual([
      'spec.completionPolicy.activeDeadlineSeconds: Invalid value: 599: completionPolicy.activeDeadlineSeconds must be greater than pullPolicy.timeoutSeconds (600)',
    ]);
    expect(
      validateImagePullJob(
        job({ pullPolicy: { timeoutSeconds: 60 }, completionPolicy: { activeDeadlineSeconds: 120 } }),
      ),
    ).toEqual([]);
  });

  it('accepts digests and registries with ports', () => {
    expect(validateImagePullJob(job({ image: `registry.local:5000/app@sha256:${'c'.repeat(64)}` }))).toEqual([]);
  });

  it('rejects duplicate node names and a bad parallelism', () => {
    expect(
      validateImagePullJob(job({ selector: { names: ['a', 'a'] }, parallelism: 'ten' })).map((e) => e.path),
    ).toEqual(['spec.selector.names[1]', 'spec.parallelism']);
  });

  it.each([
    [0, []],
    [3, []],
    ['3', []],
    ['50%', ['spec.parallelism: Invalid value: "50%": parallelism does not support percentage value']],
    [-1, ['spec.parallelism: Invalid value: -1: must be greater than or equal to 0']],
    ['-1', ['spec.parallelism: Invalid value: "-1": must be a whole number of nodes, such as 2 or "2"']],
  ])('takes parallelism %j as OpenKruise v1.9 does (a count, never a percentage)', (parallelism, expected) => {
    expect(validateImagePullJob(job({ parallelism })).map(formatFieldError)).toEqual(expected);
  });
});
