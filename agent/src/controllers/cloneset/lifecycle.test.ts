import { describe, expect, it } from 'vitest';
import { LifecycleState, type Lifecycle } from '@flotilla/api';
import { isPodAllHooked, isPodHooked, nextRefreshState } from './lifecycle.js';
import {
  addNotReadyKey,
  inPlaceReadyConditions,
  PRE_DELETE_KEY,
  PRE_UPDATE_KEY,
  removeNotReadyKey,
} from './readiness.js';
import { NOW, pod } from './testing/fixtures.js';
import type { Pod } from '../../kube/types.js';

const hook = { labelsHandler: { 'example.com/ready': 'true' }, finalizersHandler: ['example.com/guard'] };
const fully = { labels: { 'example.com/ready': 'true' }, finalizers: ['example.com/guard'] };
const half = { labels: { 'example.com/ready': 'true' } };

describe('hooks', () => {
  it('a hook is on a pod when any label or finalizer is; fully on when all are', () => {
    expect([isPodHooked(hook, pod(half)), isPodAllHooked(hook, pod(half))]).toEqual([true, false]);
    expect([isPodHooked(hook, pod(fully)), isPodAllHooked(hook, pod(fully))]).toEqual([true, true]);
    expect([isPodHooked(hook, pod()), isPodAllHooked(undefined, pod(fully))]).toEqual([false, false]);
  });
});

describe('nextRefreshState: the lifecycle state machine', () => {
  it.each<[string, Lifecycle | undefined, Pod, boolean, string | undefined]>([
    ['PreparingNormal → Normal without preNormal hook', undefined, pod({ state: 'PreparingNormal' }), true, 'Normal'],
    [
      'PreparingNormal stays while the preNormal hook is incomplete',
      { preNormal: hook },
      pod({ state: 'PreparingNormal', ...half }),
      true,
      undefined,
    ],
    [
      'PreparingNormal → Normal once the preNormal hook is fully on',
      { preNormal: hook },
      pod({ state: 'PreparingNormal', ...fully }),
      true,
      'Normal',
    ],
    [
      'Updating stays until the update completes',
      { inPlaceUpdate: hook },
      pod({ state: 'Updating' }),
      false,
      undefined,
    ],
    [
      'Updating → Updated when the inPlaceUpdate hook is not fully back',
      { inPlaceUpdate: hook },
      pod({ state: 'Updating', ...half }),
      true,
      'Updated',
    ],
    [
      'Updating → Normal when the hook is fully back',
      { inPlaceUpdate: hook },
      pod({ state: 'Updating', ...fully }),
      true,
      'Normal',
    ],
    ['Updating → Normal without any lifecycle', undefined, pod({ state: 'Updating' }), true, 'Normal'],
    [
      'Updated → Normal once the hook is fully back',
      { inPlaceUpdate: hook },
      pod({ state: 'Updated', ...fully }),
      true,
      'Normal',
    ],
    ['Updated stays while the hook is missing', { inPlaceUpdate: hook }, pod({ state: 'Updated' }), true, undefined],
    [
      'PreparingUpdate at the update revision (rolled back) → Updated',
      { inPlaceUpdate: hook },
      pod({ state: 'PreparingUpdate', revision: 'cs-new' }),
      true,
      'Updated',
    ],
    [
      'PreparingUpdate at an old revision waits for the update',
      { inPlaceUpdate: hook },
      pod({ state: 'PreparingUpdate', revision: 'cs-old' }),
      true,
      undefined,
    ],
    ['Normal stays Normal', undefined, pod({ state: 'Normal' }), true, undefined],
    ['PreparingDelete is left to the scale step', undefined, pod({ state: 'PreparingDelete' }), true, undefined],
  ])('%s', (_name, lifecycle, p, completed, expected) => {
    expect(nextRefreshState({ lifecycle, pod: p, updateRevision: 'cs-new', updateCompleted: completed })).toBe(
      expected,
    );
  });
});

describe('readiness conditions', () => {
  const gated = (types: string[], extra: Parameters<typeof pod>[0] = {}): Pod => {
    const p = pod(extra);
    p.spec.readinessGates = types.map((conditionType) => ({ conditionType }));
    return p;
  };

  it('InPlaceUpdateReady=True is written once on a pod with the gate, never on one without', () => {
    expect(inPlaceReadyConditions(pod(), true, NOW)).toEqual([]);
    const p = gated(['InPlaceUpdateReady']);
    expect(inPlaceReadyConditions(p, true, NOW)).toEqual([
      { type: 'InPlaceUpdateReady', status: 'True', lastTransitionTime: '2026-01-01T00:10:00Z' },
    ]);
    expect(inPlaceReadyConditions(gated(['InPlaceUpdateReady'], { inPlaceReady: true }), true, NOW)).toEqual([]);
  });

  it('InPlaceUpdateReady=False (StartInPlaceUpdate) also turns Ready False at once', () => {
    const conds = inPlaceReadyConditions(gated(['InPlaceUpdateReady'], { inPlaceReady: true }), false, NOW);
    expect(conds.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['InPlaceUpdateReady', 'False', 'StartInPlaceUpdate'],
      ['Ready', 'False', 'ReadinessGatesNotReady'],
    ]);
  });

  it('markPodNotReady adds and removes lifecycle keys in KruisePodReady, only with that gate', () => {
    expect(addNotReadyKey(pod(), PRE_DELETE_KEY, NOW)).toEqual([]);
    const p = gated(['KruisePodReady'], { conditions: [{ type: 'KruisePodReady', status: 'True' }] });
    const added = addNotReadyKey(p, PRE_UPDATE_KEY, NOW);
    expect(added[0]).toMatchObject({
      type: 'KruisePodReady',
      status: 'False',
      message: '[{"userAgent":"Lifecycle","key":"preUpdateHook"}]',
    });
    expect(added[1]).toMatchObject({ type: 'Ready', status: 'False' });
    p.status!.conditions = [...p.status!.conditions!.filter((c) => c.type !== 'KruisePodReady'), added[0]!];
    expect(addNotReadyKey(p, PRE_UPDATE_KEY, NOW)).toEqual([]);
    expect(removeNotReadyKey(p, PRE_UPDATE_KEY, NOW)[0]).toMatchObject({ status: 'True', message: '' });
  });
});

describe('LifecycleState values', () => {
  it('are the OpenKruise strings', () => {
    expect(Object.values(LifecycleState)).toEqual([
      'PreparingNormal',
      'Normal',
      'PreparingUpdate',
      'Updating',
      'Updated',
      'PreparingDelete',
    ]);
  });
});
