import { describe, expect, it } from 'vitest';
import type { HealthVerdict, RolloutStrategy } from '@flotilla/api';
import { resume } from './controls.js';
import { advance, initialState } from './engine.js';
import { freezePlan } from './plan.js';
import type { ClusterObservation, FrozenPlan, RolloutState } from './types.js';
import { waitOf } from './waits.js';

const healthy: HealthVerdict = { state: 'Healthy', reason: 'Available', message: '' };
const query = { name: 'errors', query: 'x', successCondition: 'result < 0.05', failureCondition: 'result >= 0.1' };

function plan(strategy: Partial<RolloutStrategy> = {}): FrozenPlan {
  const r = freezePlan(
    {
      waves: [{ name: 'all', soakSeconds: 10, analysis: { queries: [query], intervalSeconds: 30, count: 2 } }],
      ...strategy,
    },
    [
      { name: 'a', labels: {} },
      { name: 'b', labels: {} },
    ],
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.plan;
}

type Measured = NonNullable<ClusterObservation['analysis']>;

/** Every cluster online and healthy; `measured` what the runner stored for each cluster. */
function step(p: FrozenPlan, s: RolloutState, now: number, measured: Record<string, Measured> = {}) {
  const obs: Record<string, ClusterObservation> = {};
  for (const m of p.waves.flatMap((w) => w.members)) {
    obs[m] = { online: true, removed: false, health: healthy, ...(measured[m] ? { analysis: measured[m] } : {}) };
  }
  return advance(p, s, obs, now);
}

const result = (value: number, outcome: Measured['verdict']) => ({
  name: 'errors',
  value,
  outcome: outcome === 'Running' ? ('Passed' as const) : outcome,
  message: '',
});
const running = (n: number): Measured => ({
  verdict: 'Running',
  measurements: n,
  message: '',
  results: [result(0.01, 'Passed')],
});

describe('analysis in the engine', () => {
  it('holds a healthy cluster (wait reason analysis) until it passed, then soaks and succeeds', () => {
    const p = plan();
    let s = step(p, initialState(p, 0), 0).state; // both started
    s = step(p, s, 1000).state; // healthy: analysis attempt 1
    expect(s.clusters.a).toMatchObject({ phase: 'Soaking', analysis: { attempt: 1, verdict: 'Running' } });
    expect(waitOf(s, 'a')).toEqual({ reason: 'analysis' });
    s = step(p, s, 60_000, { a: running(1), b: running(1) }).state;
    expect(s.clusters.a!.message).toBe('healthy, analysis 1/2 measurement(s) passed');
    // No soak is credited while the analysis runs.
    expect(s.clusters.a!.healthySince).toBeUndefined();
    const passed: Measured = { ...running(2), verdict: 'Passed', message: '2/2 passed' };
    const r = step(p, s, 90_000, { a: passed, b: passed });
    s = r.state;
    expect(s.clusters.a).toMatchObject({
      phase: 'Soaking',
      message: 'healthy, soaking',
      analysis: { verdict: 'Passed' },
    });
    expect(waitOf(s, 'a')).toEqual({ reason: 'soak' });
    expect(r.actions.some((a) => a.type === 'event' && a.message.includes('analysis passed (2/2)'))).toBe(true);
    s = step(p, s, 100_000).state;
    expect(s.phase).toBe('Succeeded');
  });

  it('fails a cluster whose analysis failed; the budget decides (here: rollback)', () => {
    const p = plan({ onFailure: 'Rollback' });
    let s = step(p, initialState(p, 0), 0).state;
    s = step(p, s, 1000).state;
    const failed: Measured = {
      verdict: 'Failed',
      measurements: 1,
      message: 'errors: result >= 0.1 (0.4)',
      results: [],
    };
    const r = step(p, s, 2000, { a: failed, b: running(1) });
    expect(r.state.clusters.a).toMatchObject({ phase: 'RolledBack' });
    expect(r.state.phase).toBe('RolledBack');
    expect(r.state.message).toContain('failed: a');
  });

  it('pauses the rollout on an inconclusive analysis, saying why; resume measures again', () => {
    const p = plan();
    let s = step(p, initialState(p, 0), 0).state;
    s = step(p, s, 1000).state;
    const unknown: Measured = {
      verdict: 'Inconclusive',
      measurements: 1,
      message: 'errors: the Prometheus of cluster a is unreachable',
      results: [],
    };
    s = step(p, s, 2000, { a: unknown, b: running(1) }).state;
    expect(s.phase).toBe('Paused');
    expect(s.message).toBe(
      'cluster a: analysis inconclusive (errors: the Prometheus of cluster a is unreachable); resume to measure again',
    );
    expect(waitOf(s, 'a')).toEqual({ reason: 'paused' });
    // Paused: nothing moves.
    expect(step(p, s, 3000, { b: running(2) }).state).toBe(s);
    s = resume(s, 4000);
    s = step(p, s, 5000).state;
    expect(s.phase).toBe('Progressing');
    expect(s.clusters.a!.analysis).toMatchObject({ attempt: 2, verdict: 'Running', measurements: 0 });
  });

  it('starts a new attempt when the cluster becomes healthy again after losing health', () => {
    const p = plan();
    let s = step(p, initialState(p, 0), 0).state;
    s = step(p, s, 1000).state;
    const lost = advance(
      p,
      s,
      {
        a: { online: true, removed: false, health: { state: 'Progressing', reason: 'Updating', message: '' } },
        b: { online: true, removed: false, health: healthy },
      },
      2000,
    ).state;
    expect(lost.clusters.a!.phase).toBe('Updating');
    s = step(p, lost, 3000).state;
    expect(s.clusters.a!.analysis).toMatchObject({ attempt: 2, verdict: 'Running' });
  });
});
