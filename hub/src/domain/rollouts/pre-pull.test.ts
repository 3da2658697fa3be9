import { describe, expect, it } from 'vitest';
import type { HealthVerdict, RolloutStrategy } from '@flotilla/api';
import { abort } from './controls.js';
import { advance, initialState } from './engine.js';
import { freezePlan } from './plan.js';
import { combinePulls, prePullClusters } from './pre-pull.js';
import type { ClusterObservation, FrozenPlan, ObservedPrePull, RolloutAction, RolloutState } from './types.js';
import { waitOf } from './waits.js';

const healthy: HealthVerdict = { state: 'Healthy', reason: 'Available', message: 'all pods available' };
const progressing: HealthVerdict = { state: 'Progressing', reason: 'Updating', message: 'updating' };
const degraded: HealthVerdict = { state: 'Degraded', reason: 'FailedUpdate', message: 'crash' };

const clusters = ['c1', 'c2', 'c3'].map((name) => ({ name, labels: {} }));

function plan(prePull: RolloutStrategy['prePull'], onFailure: RolloutStrategy['onFailure'] = 'Rollback'): FrozenPlan {
  const r = freezePlan(
    {
      waves: [
        { name: 'canary', clusters: { names: ['c1'] }, soakSeconds: 10 },
        { name: 'rest', soakSeconds: 0 },
      ],
      onFailure,
      ...(prePull ? { prePull } : {}),
    },
    clusters,
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.plan;
}

/**
 * A small fleet: a cluster is healthy 1 s after it got the target revision (Degraded when
 * broken); a cluster holding pre-pull jobs reports what `pulls` says of it.
 */
class Fleet {
  now = 1_000_000;
  state: RolloutState;
  readonly log: RolloutAction[] = [];
  readonly movedAt = new Map<string, number>();
  readonly pulls = new Map<string, ObservedPrePull>();
  broken = new Set<string>();
  offline = new Set<string>();
  constructor(readonly p: FrozenPlan) {
    this.state = initialState(p, this.now);
  }
  observe(m: string): ClusterObservation {
    const since = this.movedAt.get(m);
    let health = progressing;
    if (since !== undefined && this.broken.has(m)) health = degraded;
    else if (since !== undefined && this.now - since >= 1000) health = healthy;
    const pull = prePullClusters(this.p, this.state).includes(m) ? this.pulls.get(m) : undefined;
    return { online: !this.offline.has(m), removed: false, health, ...(pull ? { prePull: pull } : {}) };
  }
  tick(ms = 500): RolloutAction[] {
    this.now += ms;
    const obs = Object.fromEntries(clusters.map((c) => [c.name, this.observe(c.name)]));
    const r = advance(this.p, this.state, obs, this.now);
    this.state = r.state;
    for (const a of r.actions) {
      this.log.push(a);
      if (a.type === 'setRevision' && a.revision === 'target') this.movedAt.set(a.cluster, this.now);
    }
    return r.actions;
  }
  until(done: (f: Fleet) => boolean, max = 200): void {
    for (let i = 0; i < max && !done(this); i++) this.tick();
  }
  prePullActions(): { wave: string; place: boolean }[] {
    return this.log.flatMap((a) => (a.type === 'prePull' ? [{ wave: a.wave, place: a.place }] : []));
  }
}

const pulled: ObservedPrePull = { state: 'Pulled', message: '1 image(s) pulled' };
const soaking = (f: Fleet): boolean => f.state.clusters.c1!.phase === 'Soaking';

describe('pre-pull of the next wave', () => {
  it('places the next wave’s pre-pull when the canary soaks, not before', () => {
    const f = new Fleet(plan({ maxWaitSeconds: 60 }));
    f.tick();
    expect(prePullClusters(f.p, f.state)).toEqual([]);
    f.until(soaking);
    expect(f.prePullActions()).toEqual([{ wave: 'rest', place: true }]);
    expect(prePullClusters(f.p, f.state)).toEqual(['c2', 'c3']);
    // While the canary soaks, the next wave's clusters still wait for the wave before them.
    expect(waitOf(f.state, 'c2')).toEqual({ reason: 'previousWave' });
  });

  it('starts the next wave as soon as every cluster pulled, ending the pre-pull', () => {
    const f = new Fleet(plan({ maxWaitSeconds: 600 }));
    f.until(soaking);
    f.pulls.set('c2', pulled);
    f.until((x) => x.state.clusters.c1!.phase === 'Succeeded');
    // The canary finished; c3 still pulls, so the wave waits and says why.
    expect(f.state.clusters.c2!.phase).toBe('Pending');
    expect(waitOf(f.state, 'c3')).toMatchObject({ reason: 'prePull' });
    expect(waitOf(f.state, 'c3')!.until).toBe(f.state.waves[1]!.prePull!.waitFrom! + 600_000);
    expect(f.state.message).toContain('waits for the pre-pull of its images on c3');
    f.tick();
    f.tick();
    expect(f.movedAt.has('c2')).toBe(false);
    f.pulls.set('c3', pulled);
    f.tick();
    expect(f.movedAt.has('c2') && f.movedAt.has('c3')).toBe(true);
    expect(f.prePullActions()).toEqual([
      { wave: 'rest', place: true },
      { wave: 'rest', place: false },
    ]);
    expect(prePullClusters(f.p, f.state)).toEqual([]);
    f.until((x) => x.state.phase === 'Succeeded');
    expect(f.state.phase).toBe('Succeeded');
  });

  it('waits at most maxWaitSeconds from the moment the wave could start, then starts anyway', () => {
    const f = new Fleet(plan({ maxWaitSeconds: 30 }));
    f.until((x) => x.state.waves[1]!.prePull?.waitFrom !== undefined);
    const from = f.state.waves[1]!.prePull!.waitFrom!;
    f.until((x) => x.movedAt.has('c2'));
    expect(f.movedAt.get('c2')).toBeGreaterThanOrEqual(from + 30_000);
    expect(f.movedAt.get('c2')).toBeLessThan(from + 31_000);
    const warned = f.log.filter((a) => a.type === 'event' && a.message.includes('not finished within 30s'));
    expect(warned).toHaveLength(1);
  });

  it('does not wait for a failed pull or an offline cluster, and says so', () => {
    const f = new Fleet(plan({ maxWaitSeconds: 600 }));
    f.until(soaking);
    f.pulls.set('c2', { state: 'Failed', message: 'web-prepull-1: 1 of 1 nodes failed to pull: n1' });
    f.offline.add('c3');
    f.until((x) => x.state.waves[1]!.phase !== 'Pending');
    expect(f.state.waves[1]!.prePull!.endedAt).toBeDefined();
    expect(f.movedAt.has('c2')).toBe(true);
    const failed = f.log.find((a) => a.type === 'event' && a.message.includes('pre-pull failed on c2'));
    expect(failed).toBeDefined();
  });

  it('keeps waiting for a cluster the hub cannot judge yet (just started observing)', () => {
    const f = new Fleet(plan({ maxWaitSeconds: 600 }));
    f.until(soaking);
    f.pulls.set('c2', pulled);
    f.offline.add('c3');
    const observe = f.observe.bind(f);
    f.observe = (m) => (m === 'c3' ? { ...observe(m), unsure: true } : observe(m));
    f.until((x) => x.state.clusters.c1!.phase === 'Succeeded');
    f.tick();
    expect(waitOf(f.state, 'c2')).toMatchObject({ reason: 'prePull' });
    f.observe = observe;
    f.tick();
    expect(f.state.waves[1]!.phase).toBe('Progressing');
  });

  it('never waits with maxWaitSeconds 0, yet pulls during the soak', () => {
    const f = new Fleet(plan({ maxWaitSeconds: 0 }));
    f.until((x) => x.state.clusters.c1!.phase === 'Succeeded');
    expect(f.state.waves[1]!.phase).toBe('Progressing');
    expect(f.prePullActions()).toEqual([
      { wave: 'rest', place: true },
      { wave: 'rest', place: false },
    ]);
  });

  it('does nothing when disabled or not given', () => {
    for (const p of [plan({ enabled: false, maxWaitSeconds: 60 }), plan(undefined)]) {
      expect(p.prePull).toBeUndefined();
      const f = new Fleet(p);
      f.until((x) => x.state.phase === 'Succeeded');
      expect(f.prePullActions()).toEqual([]);
      expect(f.log.some((a) => a.type === 'event' && a.message.includes('pre-pull'))).toBe(false);
    }
  });

  it('defaults the wait to 300 s', () => {
    expect(plan({}).prePull).toEqual({ maxWaitSeconds: 300 });
  });

  it('removes the jobs when the rollout rolls back, aborts or finishes', () => {
    const rolledBack = new Fleet(plan({ maxWaitSeconds: 600 }));
    rolledBack.until((x) => x.state.clusters.c1!.phase === 'Succeeded');
    expect(prePullClusters(rolledBack.p, rolledBack.state)).toEqual(['c2', 'c3']);
    // A failure rolls back; the rollout is over, so no cluster holds pre-pull jobs.
    rolledBack.pulls.set('c2', pulled).set('c3', pulled);
    rolledBack.broken.add('c2');
    rolledBack.until((x) => x.state.phase === 'RolledBack');
    expect(prePullClusters(rolledBack.p, rolledBack.state)).toEqual([]);

    const aborted = new Fleet(plan({ maxWaitSeconds: 600 }));
    aborted.until(soaking);
    expect(prePullClusters(aborted.p, aborted.state)).toEqual(['c2', 'c3']);
    expect(prePullClusters(aborted.p, abort(aborted.state, aborted.now))).toEqual([]);
  });

  it('keeps the jobs while a failure pauses the rollout', () => {
    const f = new Fleet(plan({ maxWaitSeconds: 600 }, 'Pause'));
    f.until(soaking);
    f.broken.add('c1');
    f.movedAt.set('c1', f.now);
    f.until((x) => x.state.phase === 'Paused');
    expect(prePullClusters(f.p, f.state)).toEqual(['c2', 'c3']);
  });
});

describe('combinePulls', () => {
  it('is pulled when every job is healthy, failed when any failed, else pulling', () => {
    const job = (name: string, health: string | undefined) => ({ name, health, message: `${name} says` });
    expect(combinePulls([job('a', 'Healthy'), job('b', 'Healthy')]).state).toBe('Pulled');
    expect(combinePulls([job('a', 'Healthy'), job('b', undefined)])).toEqual({
      state: 'Pulling',
      message: '1 of 2 image(s) pulled',
    });
    expect(combinePulls([job('a', 'Progressing'), job('b', 'Degraded')])).toEqual({
      state: 'Failed',
      message: 'b: b says',
    });
    expect(combinePulls([]).state).toBe('Pulling');
  });
});
