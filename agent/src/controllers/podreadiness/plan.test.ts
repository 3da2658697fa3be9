import { describe, expect, it } from 'vitest';
import { missingKruisePodReady, needsKruisePodReady, type GatedPod } from './plan.js';

const now = new Date('2026-11-22T10:00:00.123Z');
const gated = (conditions: { type: string; status?: string }[] = []): GatedPod => ({
  metadata: {},
  spec: { readinessGates: [{ conditionType: 'KruisePodReady' }] },
  status: { conditions },
});

describe('missingKruisePodReady', () => {
  it('creates the condition True on a gated pod that lacks it', () => {
    expect(missingKruisePodReady(gated(), now)).toEqual({
      type: 'KruisePodReady',
      status: 'True',
      lastTransitionTime: '2026-11-22T10:00:00Z',
    });
  });

  it('leaves a condition that exists alone, even False (its owners flip it)', () => {
    expect(missingKruisePodReady(gated([{ type: 'KruisePodReady', status: 'False' }]), now)).toBeUndefined();
  });

  it('ignores pods without the gate and pods being deleted', () => {
    expect(missingKruisePodReady({ metadata: {}, spec: {}, status: {} }, now)).toBeUndefined();
    expect(
      missingKruisePodReady({ ...gated(), metadata: { deletionTimestamp: '2026-11-22T09:00:00Z' } }, now),
    ).toBeUndefined();
  });
});

describe('needsKruisePodReady', () => {
  it('is true exactly when the condition would be added', () => {
    expect(needsKruisePodReady(gated())).toBe(true);
    expect(needsKruisePodReady(gated([{ type: 'Ready', status: 'True' }]))).toBe(true);
    expect(needsKruisePodReady(gated([{ type: 'KruisePodReady', status: 'False' }]))).toBe(false);
    expect(needsKruisePodReady({ metadata: {}, spec: {}, status: {} })).toBe(false);
    expect(needsKruisePodReady({ ...gated(), metadata: { deletionTimestamp: '2026-11-22T09:00:00Z' } })).toBe(false);
  });
});
