import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { podUnavailableBudgetHealth } from './podUnavailableBudgetHealth.js';

const pub = (status: Record<string, unknown>, generation = 2) => ({
  metadata: { generation },
  status: {
    observedGeneration: 2,
    unavailableAllowed: 1,
    currentAvailable: 3,
    desiredAvailable: 2,
    totalReplicas: 3,
    ...status,
  },
});

describe('PodUnavailableBudget health', () => {
  it('is Healthy while the budget holds', () => {
    expect(podUnavailableBudgetHealth(pub({}))).toEqual({
      state: 'Healthy',
      reason: 'BudgetHeld',
      message: '3 of 3 pods available, the budget keeps 2; 1 more may be disrupted',
    });
    expect(podUnavailableBudgetHealth(pub({ unavailableAllowed: 0, currentAvailable: 2 })).state).toBe('Healthy');
  });

  it('is Progressing below the available count it keeps', () => {
    expect(podUnavailableBudgetHealth(pub({ unavailableAllowed: 0, currentAvailable: 1 }))).toMatchObject({
      state: 'Progressing',
      reason: 'BelowDesiredAvailable',
    });
  });

  it('is Degraded with the problem the controller reports', () => {
    const lost = pub({
      conditions: [
        {
          type: 'TargetNotFound',
          status: 'True',
          reason: 'TargetNotFound',
          message: 'targetRef CloneSet/web (apps.kruise.io/v1alpha1) does not exist',
        },
      ],
    });
    expect(podUnavailableBudgetHealth(lost)).toEqual({
      state: 'Degraded',
      reason: 'TargetNotFound',
      message: 'targetRef CloneSet/web (apps.kruise.io/v1alpha1) does not exist',
    });
  });

  it('is Stale before its status catches up, Unknown on malformed input', () => {
    expect(podUnavailableBudgetHealth(pub({}, 3)).state).toBe('Stale');
    expect(podUnavailableBudgetHealth(pub({ currentAvailable: 'many' })).state).toBe('Unknown');
    expect(podUnavailableBudgetHealth(null as never).state).toBe('Unknown');
    expect(podUnavailableBudgetHealth(pub({ conditions: 'NoPods' }))).toEqual({
      state: 'Unknown',
      reason: 'MalformedInput',
      message: 'status.conditions is not a list',
    });
    expect(podUnavailableBudgetHealth(pub({ conditions: [7] })).message).toBe('status.conditions[0] is not an object');
    expect(podUnavailableBudgetHealth(pub({ unavailableAllowed: -1 })).message).toBe(
      'status.unavailableAllowed is not a non-negative integer: -1',
    );
  });

  it('never throws, whatever a cluster reports', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (status, condition) => {
        for (const input of [{ metadata: { generation: 2 }, status }, pub({ conditions: [condition] })]) {
          expect(['Healthy', 'Progressing', 'Degraded', 'Stale', 'Unknown']).toContain(
            podUnavailableBudgetHealth(input as never).state,
          );
        }
      }),
    );
  });
});
