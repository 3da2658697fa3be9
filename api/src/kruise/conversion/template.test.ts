import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../../validation/field-error.js';
import { templateAsV1alpha1 } from './template.js';

const BETA = 'apps.kruise.io/v1beta1';
const spec = { selector: { matchLabels: { app: 'a' } }, containers: [{ name: 'c', image: 'i' }] };

describe('templateAsV1alpha1', () => {
  it('takes a PodUnavailableBudget template at policy.kruise.io/v1alpha1, its only version', () => {
    const budget = { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 1 };
    expect(
      templateAsV1alpha1('PodUnavailableBudget', { apiVersion: 'policy.kruise.io/v1alpha1', spec: budget }),
    ).toEqual({
      ok: true,
      template: { spec: budget },
    });
    const wrong = templateAsV1alpha1('PodUnavailableBudget', { apiVersion: 'apps.kruise.io/v1alpha1', spec: budget });
    expect(wrong.ok).toBe(false);
  });

  it('returns a v1alpha1 (or version-less) template without its apiVersion', () => {
    expect(templateAsV1alpha1('CloneSet', { spec })).toEqual({ ok: true, template: { spec } });
    expect(templateAsV1alpha1('CloneSet', { apiVersion: 'apps.kruise.io/v1alpha1', spec })).toEqual({
      ok: true,
      template: { spec },
    });
  });

  it('converts a v1beta1 SidecarSet template: customVersion becomes the label', () => {
    const out = templateAsV1alpha1('SidecarSet', {
      apiVersion: BETA,
      metadata: { labels: { team: 'x' } },
      spec: { ...spec, customVersion: 'v3' },
      overrides: { c1: { revisionHistoryLimit: 3 } },
    });
    expect(out).toEqual({
      ok: true,
      template: {
        metadata: { labels: { team: 'x', 'apps.kruise.io/sidecarset-custom-version': 'v3' } },
        spec,
        overrides: { c1: { revisionHistoryLimit: 3 } },
      },
    });
  });

  it('keeps a v1beta1 ImagePullJob template as it is', () => {
    const ipj = { image: 'nginx:1' };
    expect(templateAsV1alpha1('ImagePullJob', { apiVersion: BETA, spec: ipj })).toEqual({
      ok: true,
      template: { spec: ipj },
    });
  });

  it('refuses v1beta1 for CloneSet, overrides of fields without a counterpart, and malformed fields', () => {
    const errors = (out: ReturnType<typeof templateAsV1alpha1>): string[] =>
      out.ok ? [] : out.errors.map(formatFieldError);
    expect(errors(templateAsV1alpha1('CloneSet', { apiVersion: BETA, spec }))).toEqual([
      'apiVersion: Unsupported value: "apps.kruise.io/v1beta1": supported values: "apps.kruise.io/v1alpha1"',
    ]);
    expect(
      errors(templateAsV1alpha1('SidecarSet', { apiVersion: BETA, spec, overrides: { c1: { customVersion: 'v2' } } })),
    ).toEqual(['overrides.c1.customVersion: Forbidden: set customVersion in spec, not per cluster, at v1beta1']);
    expect(errors(templateAsV1alpha1('SidecarSet', { apiVersion: BETA, spec: { ...spec, customVersion: 1 } }))).toEqual(
      ['spec.customVersion: Invalid value: 1: must be of type string'],
    );
  });
});
