import { describe, expect, it } from 'vitest';
import {
  controllerRef,
  deepFreeze,
  groupOf,
  namespacedKey,
  objectKey,
  sameJson,
  splitKey,
  toPlainJson,
} from './kube-object.js';
import { formatMicroTime, formatTime, parseTime } from './kube-time.js';

describe('object helpers', () => {
  it('builds and splits namespace/name keys, cluster-scoped keys are bare names', () => {
    expect(objectKey({ metadata: { namespace: 'ns', name: 'a' } })).toBe('ns/a');
    expect(objectKey({ metadata: { name: 'node-1' } })).toBe('node-1');
    expect(namespacedKey(undefined, 'n')).toBe('n');
    expect(splitKey('ns/a')).toEqual({ namespace: 'ns', name: 'a' });
    expect(splitKey('node-1')).toEqual({ namespace: undefined, name: 'node-1' });
  });

  it('compares JSON values whatever the order of their keys, undefined members counting as absent', () => {
    expect(sameJson({ a: 1, b: { c: [1, 2], d: 'x' } }, { b: { d: 'x', c: [1, 2] }, a: 1 })).toBe(true);
    expect(sameJson({ a: 1, gone: undefined }, { a: 1 })).toBe(true);
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] }), 'arrays keep their order').toBe(false);
    expect(sameJson({ a: 1 }, { a: '1' })).toBe(false);
  });

  it('finds the controller owner reference and the API group', () => {
    const ref = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'c', uid: 'u', controller: true };
    expect(controllerRef({ metadata: { ownerReferences: [{ ...ref, controller: false }, ref] } })).toBe(ref);
    expect(controllerRef({ metadata: {} })).toBeUndefined();
    expect(groupOf(ref.apiVersion)).toBe('apps.kruise.io');
    expect(groupOf('v1')).toBe('');
  });

  it('turns typed-client objects into wire JSON: Dates become RFC 3339, undefined members vanish', () => {
    const typed = {
      metadata: { creationTimestamp: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)), uid: undefined },
      a: [1, { b: null }],
    };
    expect(toPlainJson(typed)).toEqual({
      metadata: { creationTimestamp: '2026-01-02T03:04:05Z' },
      a: [1, { b: null }],
    });
  });

  it('deep-freezes nested objects and arrays', () => {
    const o = deepFreeze({ a: { b: [{ c: 1 }] } });
    expect(Object.isFrozen(o.a.b[0])).toBe(true);
  });

  it('formats metav1.Time and MicroTime as the apiserver parses them', () => {
    const ms = Date.UTC(2026, 0, 2, 3, 4, 5, 678);
    expect(formatTime(ms)).toBe('2026-01-02T03:04:05Z');
    expect(formatMicroTime(ms)).toBe('2026-01-02T03:04:05.678000Z');
    expect(parseTime('2026-01-02T03:04:05.678000Z')).toBe(ms);
    expect(parseTime(undefined)).toBeUndefined();
    expect(parseTime('garbage')).toBeUndefined();
  });
});
