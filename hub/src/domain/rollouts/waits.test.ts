import { describe, expect, it } from 'vitest';
import type { HealthVerdict } from '@flotilla/api';
import { pause } from './controls.js';
import { advance, initialState } from './engine.js';
import { freezePlan } from './plan.js';
import type { ClusterObservation, FrozenPlan, RolloutState } from './types.js';
import { countWaits, waitOf } from './waits.js';

const healthy: HealthVerdict = { state: 'Healthy', reason: 'Available', message: '' };
const progressing: HealthVerdict = { state: 'Progressing', reason: 'Updating', message: '' };

function twoWaves(approval: 'None' | 'After' = 'None'): FrozenPlan {
  const r = freezePlan(
    {
      waves: [
        { name: 'canary', clusters: { names: ['a', 'b'] }, maxConcurrency: 1, soakSeconds: 60, approval },
        { name: 'rest', soakSeconds: 60 },
      ],
    },
    ['a', 'b', 'c'].map((name) => ({ name, labels: {} })),
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.plan;
}

const obs = (health: Record<string, HealthVerdict>, extra: Partial<ClusterObservation> = {}) =>
  Object.fromEntries(
    ['a', 'b', 'c'].map((n) => [n, { online: true, removed: false, health: health[n] ?? progressing, ...extra }]),
  );

const reasons = (s: RolloutState) => Object.fromEntries(['a', 'b', 'c'].map((n) => [n, waitOf(s, n)?.reason]));

describe('waitOf', () => {
  it('names health, concurrency and previous wave, then soak, then nothing once done', () => {
    const plan = twoWaves();
    let s = advance(plan, initialState(plan, 0), obs({}), 1000).state;
    expect(reasons(s)).toEqual({ a: 'health', b: 'concurrency', c: 'previousWave' });
    s = advance(plan, s, obs({ a: healthy }), 2000).state;
    expect(reasons(s)).toEqual({ a: 'soak', b: 'concurrency', c: 'previousWave' });
    expect(countWaits(plan, s)).toEqual({ soak: 1, concurrency: 1, previousWave: 1 });
    s = advance(plan, s, obs({ a: healthy }), 70_000).state;
    expect(s.clusters.a!.phase).toBe('Succeeded');
    expect(reasons(s)).toEqual({ a: undefined, b: 'health', c: 'previousWave' });
  });

  it('a gate of the whole rollout (approval, pause) holds every unfinished cluster', () => {
    const plan = twoWaves('After');
    let s = initialState(plan, 0);
    for (let t = 1000; t < 400_000; t += 30_000) s = advance(plan, s, obs({ a: healthy, b: healthy }), t).state;
    expect(s.phase).toBe('WaitingApproval');
    expect(reasons(s)).toEqual({ a: undefined, b: undefined, c: 'approval' });
    const paused = pause(advance(plan, initialState(plan, 0), obs({}), 1000).state, 2000);
    expect(countWaits(plan, paused)).toEqual({ paused: 3 });
  });

  it('a cluster the hub has no current news of waits for a heartbeat', () => {
    const plan = twoWaves();
    const s = advance(plan, initialState(plan, 0), obs({}, { online: false, unsure: true }), 1000).state;
    expect(waitOf(s, 'a')).toEqual({ reason: 'heartbeat' });
  });

  it('a wave held while the hub was deaf: once it starts, its clusters wait for their turn, not for news', () => {
    const plan = twoWaves();
    const deaf = { online: false, unsure: true, hubDeaf: true as const };
    let s = advance(plan, initialState(plan, 0), obs({}, deaf), 1000).state;
    expect(reasons(s)).toEqual({ a: 'heartbeat', b: 'heartbeat', c: 'previousWave' });
    s = advance(plan, s, obs({}), 2000).state;
    expect(reasons(s)).toEqual({ a: 'health', b: 'concurrency', c: 'previousWave' });
  });

  it('a finished rollout waits for nothing', () => {
    const plan = twoWaves();
    const s = { ...initialState(plan, 0), phase: 'Aborted' as const };
    expect(countWaits(plan, s)).toEqual({});
  });
});
