import { describe, expect, it } from 'vitest';
import { validateRolloutStrategy, type HealthVerdict } from '@flotilla/api';
import { approve } from './controls.js';
import { advance, initialState } from './engine.js';
import { freezePlan } from './plan.js';
import { stagedRollbackPlan, strategyOfPlan } from './rollback-plan.js';
import type { ClusterObservation, FrozenPlan } from './types.js';

const healthy: HealthVerdict = { state: 'Healthy', reason: 'Available', message: '' };
const degraded: HealthVerdict = { state: 'Degraded', reason: 'Crash', message: 'pods crash' };

function plan(rollback: 'Staged' | 'AllAtOnce'): FrozenPlan {
  const r = freezePlan(
    {
      waves: [
        { name: 'canary', clusters: { names: ['a'] }, soakSeconds: 10, approval: 'After' },
        { name: 'ring-1', clusters: { names: ['b', 'c'] }, soakSeconds: 10, maxConcurrency: 2 },
        { name: 'rest', soakSeconds: 10 },
      ],
      rollback,
    },
    ['a', 'b', 'c', 'd'].map((name) => ({ name, labels: {} })),
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.plan;
}

describe('staged rollback', () => {
  it('fails the rollout and asks for a rollback of the moved clusters, keeping their pins', () => {
    const p = plan('Staged');
    let s = initialState(p, 0);
    const obs = (h: Record<string, HealthVerdict>): Record<string, ClusterObservation> =>
      Object.fromEntries(
        ['a', 'b', 'c', 'd'].map((n) => [n, { online: true, removed: false, health: h[n] ?? healthy }]),
      );
    for (let t = 1000; t < 60_000 && s.phase !== 'WaitingApproval'; t += 5000) s = advance(p, s, obs({}), t).state;
    s = approve(s, p, 60_000);
    s = advance(p, s, obs({}), 60_000).state;
    const r = advance(p, s, obs({ b: degraded }), 61_000);
    expect(r.state.phase).toBe('Failed');
    expect(r.actions).toContainEqual({ type: 'stagedRollback', clusters: ['a', 'b', 'c'] });
    expect(r.actions.some((a) => a.type === 'setRevision' && a.revision === 'previous')).toBe(false);
    expect(r.state.message).toContain('rolling back 3 cluster(s) in stages');
  });

  it('returns the moved clusters in reverse wave order with the same gates and soak', () => {
    const back = stagedRollbackPlan(plan('Staged'), ['a', 'b', 'c']);
    expect(back.waves.map((w) => [w.name, w.members, w.approval, w.soakSeconds, w.maxConcurrency])).toEqual([
      ['ring-1', ['c', 'b'], 'None', 10, 2],
      ['canary', ['a'], 'After', 10, 1],
    ]);
    expect(back).toMatchObject({ onFailure: 'Pause', rollback: 'AllAtOnce' });
    // Written as a strategy (what the rollback's row shows) it is a valid one naming those clusters.
    const strategy = strategyOfPlan(back);
    expect(validateRolloutStrategy(strategy)).toEqual([]);
    expect(strategy.waves.map((w) => w.clusters?.names)).toEqual([['c', 'b'], ['a']]);
  });

  it('all at once (the default) rolls every moved cluster back in the same step', () => {
    const p = plan('AllAtOnce');
    const broken = { a: { online: true, removed: false, health: degraded } };
    const s = advance(p, advance(p, initialState(p, 0), broken, 1000).state, broken, 2000).state;
    expect(s.phase).toBe('RolledBack');
  });
});
