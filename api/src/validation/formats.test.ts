import { describe, expect, it } from 'vitest';
import { effectiveImageTag, parseImageReference } from './image-ref.js';
import { parseIntOrPercent, scaledValue } from './intstr.js';
import { selectorMatches, validateLabelSelector, validateLabels } from './labels.js';
import { dns1123LabelErrors, dns1123SubdomainErrors, finalizerNameErrors, qualifiedNameErrors } from './names.js';

describe('Kubernetes names', () => {
  it.each([
    ['nginx', true],
    ['my-app-1', true],
    ['a'.repeat(63), true],
    ['a'.repeat(64), false],
    ['Nginx', false],
    ['-nginx', false],
    ['nginx-', false],
    ['ngi.nx', false],
  ])('DNS-1123 label %s → %s', (name, ok) => expect(dns1123LabelErrors(name).length === 0).toBe(ok));

  it.each([
    ['example.com', true],
    ['sample-59c7d6fb4', true],
    ['a.b-c.d', true],
    ['a..b', false],
    ['A.com', false],
  ])('DNS-1123 subdomain %s → %s', (name, ok) => expect(dns1123SubdomainErrors(name).length === 0).toBe(ok));

  it.each([
    ['app', true],
    ['apps.kruise.io/cloneset-instance-id', true],
    ['MyName', true],
    ['/app', false],
    ['a/b/c', false],
    ['example.com/', false],
    ['x'.repeat(64), false],
  ])('qualified name %s → %s', (name, ok) => expect(qualifiedNameErrors(name).length === 0).toBe(ok));

  it('accepts standard and domain-qualified finalizers only', () => {
    expect(finalizerNameErrors('example.io/unready-blocker')).toEqual([]);
    expect(finalizerNameErrors('foregroundDeletion')).toEqual([]);
    expect(finalizerNameErrors('unready-blocker')).toEqual([
      'name is neither a standard finalizer name nor is it fully qualified',
    ]);
  });
});

describe('labels and selectors', () => {
  it('names the label whose value is invalid', () => {
    expect(validateLabels({ app: 'bad value' }, 'metadata.labels').map((e) => e.path)).toEqual([
      'metadata.labels[app]',
    ]);
  });

  it('checks operators and their values as kube-apiserver does', () => {
    const errors = validateLabelSelector(
      {
        matchExpressions: [
          { key: 'a', operator: 'In', values: [] },
          { key: 'b', operator: 'Exists', values: ['x'] },
          { key: 'c', operator: 'Gt', values: ['1'] },
        ],
      },
      'spec.selector',
    );
    expect(errors.map((e) => `${e.path}: ${e.message}`)).toEqual([
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      "spec.selector.matchExpressions[1].values: Invalid value: \"x\": may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      'spec.selector.matchExpressions[2].operator: Unsupported value: "Gt": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
    ]);
  });

  it.each([
    [{}, { app: 'x' }, true],
    [{ matchLabels: { app: 'x' } }, { app: 'x', tier: 'web' }, true],
    [{ matchLabels: { app: 'x' } }, { app: 'y' }, false],
    [{ matchExpressions: [{ key: 'app', operator: 'In', values: ['x', 'y'] }] }, { app: 'y' }, true],
    [{ matchExpressions: [{ key: 'app', operator: 'NotIn', values: ['x'] }] }, {}, true],
    [{ matchExpressions: [{ key: 'app', operator: 'Exists' }] }, {}, false],
    [{ matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] }, {}, true],
  ])('selector %j matches %j → %s', (selector, labels, matches) => {
    expect(selectorMatches(selector, labels)).toBe(matches);
  });
});

describe('int-or-percent', () => {
  it.each([
    [3, { kind: 'int', value: 3 }],
    ['25%', { kind: 'percent', value: 25 }],
    ['25', { kind: 'invalid' }],
    ['-5%', { kind: 'invalid' }],
    ['5 %', { kind: 'invalid' }],
    // Go's limits: an int32 number, a percentage strconv.Atoi can read (int64).
    [2 ** 31 - 1, { kind: 'int', value: 2 ** 31 - 1 }],
    [2 ** 31, { kind: 'invalid', reason: 'must be an integer from -2147483648 to 2147483647' }],
    [-(2 ** 31) - 1, { kind: 'invalid' }],
    ['9223372036854775807%', { kind: 'percent' }],
    ['9223372036854775808%', { kind: 'invalid', reason: 'percentage is out of range' }],
    [`${'9'.repeat(400)}%`, { kind: 'invalid' }],
  ])('%j parses as %j', (value, expected) => expect(parseIntOrPercent(value)).toMatchObject(expected));

  it('rounds percentages of a total up or down as asked', () => {
    expect(scaledValue('20%', 5, true)).toBe(1);
    expect(scaledValue('20%', 4, true)).toBe(1);
    expect(scaledValue('20%', 4, false)).toBe(0);
    expect(scaledValue(7, 4, true)).toBe(7);
    expect(scaledValue('x', 4, true)).toBeUndefined();
  });
});

describe('image references', () => {
  it.each([
    ['nginx', 'nginx', undefined, undefined],
    ['nginx:1.25', 'nginx', '1.25', undefined],
    ['localhost:5000/team/app:v1', 'localhost:5000/team/app', 'v1', undefined],
    ['[::1]:5000/app', '[::1]:5000/app', undefined, undefined],
    [
      `docker.io/library/busybox@sha256:${'a'.repeat(64)}`,
      'docker.io/library/busybox',
      undefined,
      `sha256:${'a'.repeat(64)}`,
    ],
  ])('%s parses into name, tag and digest', (image, name, tag, digest) => {
    expect(parseImageReference(image)).toEqual({
      ok: true,
      name,
      ...(tag ? { tag } : {}),
      ...(digest ? { digest } : {}),
    });
  });

  it.each([
    ['', 'must not be empty'],
    ['Nginx:latest', 'repository name must be lowercase'],
    ['nginx:', 'invalid reference format'],
    ['nginx@sha256:abc', 'invalid reference format'],
    [`nginx@sha256:${'a'.repeat(63)}`, 'invalid sha256 digest length'],
    [`nginx@md5:${'a'.repeat(32)}`, 'unsupported digest algorithm "md5"'],
    ['a'.repeat(64), 'cannot specify 64-byte hexadecimal strings as a repository name'],
  ])('%j is rejected: %s', (image, reason) => expect(parseImageReference(image)).toEqual({ ok: false, reason }));

  it('gives the tag the kubelet assumes', () => {
    expect(effectiveImageTag('nginx')).toBe('latest');
    expect(effectiveImageTag('nginx:1.25')).toBe('1.25');
    expect(effectiveImageTag(`nginx@sha256:${'b'.repeat(64)}`)).toBe('');
    expect(effectiveImageTag('not a reference')).toBe('');
  });
});
