import { describe, expect, it } from 'vitest';
import type { HealthVerdict, RolloutStrategy } from '@flotilla/api';
import { advance, initialState } from './engine.js';
import { waitOf } from './waits.js';
import { abort, applyControl, approve, pause, resume, retry, RolloutStateError } from './controls.js';
import { freezePlan, type PlanCluster } from './plan.js';
import type { ClusterObservation, FrozenPlan, RolloutAction, RolloutState } from './types.js';

const healthy: HealthVerdict = { state: 'Healthy', reason: 'Available', message: 'all pods available' };
const progressing: HealthVerdict = { state: 'Progressing', reason: 'Updating', message: '1/3 updated' };
const degraded: HealthVerdict = { state: 'Degraded', reason: 'FailedUpdate', message: 'image pull failed' };

const fleet = (n: number): PlanCluster[] =>
  Array.from({ length: n }, (_, i) => ({
    name: `c${i + 1}`,
    labels: { env: i === 0 ? 'canary' : 'prod', order: String(n - i) },
  }));

function plan(strategy: RolloutStrategy, clusters = fleet(4)): FrozenPlan {
  const r = freezePlan(strategy, clusters);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.plan;
}

/**
 * A tiny fleet simulator: a cluster becomes healthy `delay` ms after it was given the target
 * revision, unless it is listed as broken (then it reports Degraded) or offline.
 */
class Sim {
  now = 1_000_000;
  state: RolloutState;
  readonly at = new Map<string, { revision: 'target' | 'previous'; since: number; partition?: number | string }>();
  readonly log: RolloutAction[] = [];
  broken = new Set<string>();
  offline = new Set<string>();
  /** Offline clusters the hub cannot judge yet (it has only just started observing). */
  unsure = false;
  /** With a freshness window, clusters are heard at every tick unless silent or the hub is deaf. */
  freshnessMs: number | undefined;
  readonly heardAt = new Map<string, number>();
  silent = new Set<string>();
  /** Since when the hub cannot hear NATS. */
  deafSince: number | undefined;
  /** Per cluster, the workloads it depends on that are not placed there / not healthy there. */
  readonly deps = new Map<string, { missing: string[]; waiting: string[] }>();
  constructor(
    readonly p: FrozenPlan,
    readonly delay = 1000,
  ) {
    this.state = initialState(p, this.now);
  }
  observations(): Record<string, ClusterObservation> {
    const out: Record<string, ClusterObservation> = {};
    for (const w of this.p.waves) {
      for (const m of w.members) {
        const a = this.at.get(m);
        let health = progressing;
        if (a?.revision === 'target' && this.broken.has(m)) health = degraded;
        else if (a && this.now - a.since >= this.delay) health = healthy;
        const off = this.offline.has(m);
        out[m] = {
          online: !off,
          removed: false,
          ...(off && this.unsure ? { unsure: true } : {}),
          ...this.freshness(m),
          health: off ? progressing : health,
          ...(this.deps.has(m) ? { dependencies: this.deps.get(m)! } : {}),
        };
      }
    }
    return out;
  }
  freshness(m: string): Partial<ClusterObservation> {
    const deaf = this.deafSince !== undefined;
    if (this.freshnessMs === undefined) return deaf ? { hubDeaf: true, unsure: true, freshUntil: this.deafSince } : {};
    if (!deaf && !this.silent.has(m)) this.heardAt.set(m, this.now);
    const until = (this.heardAt.get(m) ?? -Infinity) + this.freshnessMs;
    return deaf ? { hubDeaf: true, unsure: true, freshUntil: Math.min(until, this.deafSince!) } : { freshUntil: until };
  }
  tick(ms = 500): void {
    this.now += ms;
    const r = advance(this.p, this.state, this.observations(), this.now);
    this.state = r.state;
    for (const a of r.actions) {
      this.log.push(a);
      if (a.type === 'setRevision')
        this.at.set(a.cluster, { revision: a.revision, since: this.now, partition: a.partition });
    }
  }
  runUntil(done: (s: RolloutState) => boolean, maxTicks = 500): void {
    for (let i = 0; i < maxTicks && !done(this.state); i++) this.tick();
  }
  started(): string[] {
    return this.log
      .filter((a) => a.type === 'setRevision' && a.revision === 'target' && a.partition === undefined)
      .map((a) => (a as { cluster: string }).cluster);
  }
}

const threeWaves: RolloutStrategy = {
  waves: [
    { name: 'canary', clusters: { selector: { matchLabels: { env: 'canary' } } }, soakSeconds: 2 },
    { name: 'early', clusters: { names: ['c2'] }, soakSeconds: 1 },
    { name: 'rest', maxConcurrency: 1, orderBy: 'order' },
  ],
};

describe('rollout engine', () => {
  it('moves clusters wave by wave, never before the previous wave is healthy and soaked', () => {
    const sim = new Sim(plan(threeWaves));
    sim.runUntil((s) => s.phase === 'Succeeded');
    expect(sim.state.phase).toBe('Succeeded');
    // 'rest' is ordered by the order label: c4 (1) before c3 (2).
    expect(sim.started()).toEqual(['c1', 'c2', 'c4', 'c3']);
    const c1 = sim.state.clusters.c1!;
    const c2 = sim.state.clusters.c2!;
    expect(c2.startedAt!).toBeGreaterThanOrEqual(c1.finishedAt!);
    expect(c1.finishedAt! - c1.startedAt!).toBeGreaterThanOrEqual(1000 + 2000);
    expect(sim.state.waves.map((w) => w.phase)).toEqual(['Succeeded', 'Succeeded', 'Succeeded']);
    // maxConcurrency 1: c3 starts only after c4 finished.
    expect(sim.state.clusters.c3!.startedAt!).toBeGreaterThanOrEqual(sim.state.clusters.c4!.finishedAt!);
  });

  it('stops a failing canary in wave 1 and rolls it back; no other cluster sees the revision', () => {
    const sim = new Sim(plan(threeWaves));
    sim.broken.add('c1');
    sim.runUntil((s) => s.phase === 'RolledBack');
    expect(sim.state.phase).toBe('RolledBack');
    const touched = sim.log
      .filter((a) => a.type === 'setRevision')
      .map((a) => [(a as { cluster: string }).cluster, (a as { revision: string }).revision]);
    expect(touched).toEqual([
      ['c1', 'target'],
      ['c1', 'previous'],
    ]);
    expect(sim.state.message).toContain('canary');
    expect(sim.state.clusters.c1!.phase).toBe('RolledBack');
    expect(sim.state.clusters.c2!.phase).toBe('Pending');
  });

  it('pauses on failure when the strategy says so, and a resume accepts the failures', () => {
    const strategy: RolloutStrategy = { ...threeWaves, onFailure: 'Pause' };
    const sim = new Sim(plan(strategy));
    sim.broken.add('c1');
    sim.runUntil((s) => s.phase === 'Paused');
    expect(sim.state.phase).toBe('Paused');
    expect(sim.state.message).toMatch(/exceeded its failure budget of 0/);
    sim.tick();
    expect(sim.state.phase).toBe('Paused');
    sim.state = resume(sim.state, sim.now);
    sim.runUntil((s) => s.phase !== 'Progressing' && s.phase !== 'WaitingApproval');
    expect(sim.state.phase).toBe('Failed');
    expect(sim.state.clusters.c4!.phase).toBe('Succeeded');
  });

  it('waits at an approval gate until approved, before and after a wave', () => {
    const strategy: RolloutStrategy = {
      waves: [
        { name: 'canary', clusters: { names: ['c1'] }, approval: 'After' },
        { name: 'rest', approval: 'Before' },
      ],
    };
    const sim = new Sim(plan(strategy));
    sim.runUntil((s) => s.phase === 'WaitingApproval');
    expect(sim.state.waves[0]!.phase).toBe('WaitingApproval');
    for (let i = 0; i < 10; i++) sim.tick();
    expect(sim.started()).toEqual(['c1']);
    sim.state = approve(sim.state, sim.p, sim.now);
    sim.tick();
    expect(sim.state.phase).toBe('WaitingApproval');
    expect(sim.state.currentWave).toBe(1);
    expect(() => approve(sim.state, sim.p, sim.now, 'canary')).toThrow(RolloutStateError);
    sim.state = approve(sim.state, sim.p, sim.now, 'rest');
    sim.runUntil((s) => s.phase === 'Succeeded');
    expect(sim.started().sort()).toEqual(['c1', 'c2', 'c3', 'c4']);
  });

  it('pause and resume: nothing moves while paused', () => {
    const sim = new Sim(plan(threeWaves));
    sim.tick();
    sim.state = pause(sim.state, sim.now);
    const before = sim.log.length;
    for (let i = 0; i < 20; i++) sim.tick();
    expect(sim.log.length).toBe(before);
    expect(() => pause(sim.state, sim.now)).toThrow(/cannot pause a rollout that is Paused/);
    sim.state = resume(sim.state, sim.now);
    sim.runUntil((s) => s.phase === 'Succeeded');
    expect(sim.state.phase).toBe('Succeeded');
  });

  it('abort leaves clusters where they are and refuses further controls', () => {
    const sim = new Sim(plan(threeWaves));
    sim.runUntil((s) => s.currentWave === 1);
    sim.state = abort(sim.state, sim.now);
    const before = sim.log.length;
    sim.tick();
    expect(sim.log.length).toBe(before);
    expect(sim.state.phase).toBe('Aborted');
    expect(() => resume(sim.state, sim.now)).toThrow(/cannot resume a rollout that is Aborted/);
    expect(sim.log.some((a) => a.type === 'setRevision' && a.revision === 'previous')).toBe(false);
  });

  it('fails a cluster at its progress deadline and charges it to the budget', () => {
    const strategy: RolloutStrategy = {
      waves: [
        { name: 'canary', clusters: { names: ['c1'] } },
        { name: 'rest', failureBudget: 1, progressDeadlineSeconds: 5 },
      ],
      onFailure: 'Pause',
    };
    const sim = new Sim(plan(strategy));
    sim.runUntil((s) => s.currentWave === 1);
    sim.offline.add('c3');
    sim.runUntil((s) => s.phase !== 'Progressing');
    expect(sim.state.phase).toBe('Succeeded');
    expect(sim.state.clusters.c3!.phase).toBe('Failed');
    expect(sim.state.clusters.c3!.message).toMatch(/not healthy within 5s \(the agent is offline\)/);
    expect(sim.state.waves[1]!.message).toBe('2 succeeded, 1 failed, 0 skipped');
  });

  it('skips clusters that are offline when their turn comes, never counting them healthy', () => {
    const sim = new Sim(plan(threeWaves));
    sim.offline.add('c2');
    sim.runUntil((s) => s.phase !== 'Progressing');
    expect(sim.state.clusters.c2!.phase).toBe('Skipped');
    // The only member of wave "early" was skipped: that wave proved nothing, so it fails.
    expect(sim.state.phase).toBe('RolledBack');
  });

  it('neither starts nor skips a cluster the hub is unsure about; skips it once the hub knows', () => {
    const sim = new Sim(plan(threeWaves));
    sim.offline.add('c2');
    sim.unsure = true;
    sim.runUntil((s) => s.currentWave === 1 && s.clusters.c2!.message !== '', 50);
    for (let i = 0; i < 20; i++) sim.tick();
    expect(sim.state.clusters.c2).toMatchObject({ phase: 'Pending', message: expect.stringContaining('heartbeat') });
    expect(sim.state.phase).toBe('Progressing');
    sim.unsure = false;
    sim.tick();
    expect(sim.state.clusters.c2!.phase).toBe('Skipped');
  });

  it('walks in-cluster canary steps with pauses before the full update', () => {
    const strategy: RolloutStrategy = {
      waves: [
        {
          name: 'canary',
          clusters: { names: ['c1'] },
          canarySteps: [
            { partition: '90%', pauseSeconds: 3 },
            { partition: '50%', pauseSeconds: 1 },
          ],
        },
        { name: 'rest' },
      ],
    };
    const sim = new Sim(plan(strategy));
    sim.runUntil((s) => s.currentWave === 1);
    const c1 = sim.log.filter((a) => a.type === 'setRevision' && a.cluster === 'c1');
    expect(c1.map((a) => (a as { partition?: unknown }).partition)).toEqual(['90%', '50%', undefined]);
  });

  it('retries failed clusters with the frozen plan', () => {
    const strategy: RolloutStrategy = { ...threeWaves, onFailure: 'Pause' };
    const sim = new Sim(plan(strategy));
    sim.broken.add('c1');
    sim.runUntil((s) => s.phase === 'Paused');
    sim.broken.clear();
    sim.state = retry(sim.state, sim.now);
    expect(sim.state.clusters.c1!.phase).toBe('Pending');
    sim.runUntil((s) => s.phase === 'Succeeded');
    expect(sim.state.phase).toBe('Succeeded');
    expect(sim.state.clusters.c1!.phase).toBe('Succeeded');
  });

  it('resumes from a persisted state without repeating or skipping a cluster', () => {
    const p = plan(threeWaves);
    const a = new Sim(p);
    a.runUntil((s) => s.currentWave === 2);
    // A restarted hub reads the committed JSON and continues.
    const b = new Sim(p);
    b.now = a.now;
    b.state = JSON.parse(JSON.stringify(a.state)) as RolloutState;
    for (const [k, v] of a.at) b.at.set(k, v);
    b.runUntil((s) => s.phase === 'Succeeded');
    expect([...a.started(), ...b.started()]).toEqual(['c1', 'c2', 'c4', 'c3']);
  });
});

describe('soak and step pauses count only time with fresh news', () => {
  const soaked: RolloutStrategy = {
    waves: [
      { name: 'canary', clusters: { names: ['c1'] }, soakSeconds: 10 },
      { name: 'rest', soakSeconds: 0 },
    ],
  };

  /** A sim whose canary c1 has just become Soaking. */
  function soakingCanary(): Sim {
    const sim = new Sim(plan(soaked));
    sim.freshnessMs = 3000;
    sim.runUntil((s) => s.clusters.c1!.phase === 'Soaking');
    return sim;
  }

  it('pauses a soak while the cluster is silent, keeps what it credited, resumes when it is heard', () => {
    const sim = soakingCanary();
    const soakStart = sim.now;
    sim.tick(); // 0.5 s credited
    sim.silent.add('c1');
    for (let i = 0; i < 40; i++) sim.tick(); // 20 s of silence: at most 0.5 + 3 s count
    expect(sim.state.clusters.c1).toMatchObject({ phase: 'Soaking', freshSince: undefined });
    expect(sim.state.clusters.c1!.message).toMatch(/soak paused/);
    expect(sim.state.currentWave).toBe(0);
    expect(sim.started()).toEqual(['c1']);
    sim.silent.clear();
    sim.runUntil((s) => s.clusters.c1!.phase === 'Succeeded');
    const c1 = sim.state.clusters.c1!;
    // 10 s of fresh time: 3.5 s before the silence, the rest after it.
    expect(c1.finishedAt! - soakStart).toBeGreaterThanOrEqual(20_500 + 6_500);
    expect(c1.finishedAt! - soakStart).toBeLessThanOrEqual(20_500 + 7_000);
  });

  it('starts no wave and no cluster, and fails none, while the hub cannot hear NATS', () => {
    const strategy: RolloutStrategy = {
      waves: [
        { name: 'canary', clusters: { names: ['c1'] }, soakSeconds: 10 },
        { name: 'rest', soakSeconds: 0, progressDeadlineSeconds: 5 },
      ],
    };
    const sim = new Sim(plan(strategy));
    sim.freshnessMs = 3000;
    sim.runUntil((s) => s.clusters.c1!.phase === 'Soaking');
    sim.deafSince = sim.now;
    for (let i = 0; i < 60; i++) sim.tick(); // 30 s deaf, three soaks' worth
    expect(sim.state.clusters.c1!.phase).toBe('Soaking');
    expect(sim.state.waves[1]!.phase).toBe('Pending');
    expect(sim.started()).toEqual(['c1']);
    sim.deafSince = undefined;
    sim.runUntil((s) => s.waves[1]!.phase === 'Progressing');
    // Once it hears again: the canary soaks its full 10 s, then the next wave starts.
    expect(sim.state.clusters.c1!.finishedAt! - sim.state.clusters.c1!.startedAt!).toBeGreaterThanOrEqual(40_000);
    // c2 never gets healthy: deaf, the hub does not fail it at its deadline; hearing, it does.
    sim.offline.add('c2');
    sim.deafSince = sim.now;
    for (let i = 0; i < 40; i++) sim.tick(); // well past the 5 s deadline
    expect(sim.state.clusters.c2!.phase).toBe('Updating');
    expect(sim.state.clusters.c2!.message).toMatch(/cannot hear NATS/);
    sim.deafSince = undefined;
    sim.tick();
    const failures = sim.log.filter((a) => a.type === 'event' && a.cluster === 'c2' && /failed/.test(a.message));
    expect(failures.map((a) => (a as { message: string }).message)).toEqual([
      expect.stringMatching(/not healthy within 5s \(the agent is offline\)/),
    ]);
  });

  it('counts a canary step pause only while the cluster is heard', () => {
    const strategy: RolloutStrategy = {
      waves: [
        { name: 'canary', clusters: { names: ['c1'] }, canarySteps: [{ partition: '50%', pauseSeconds: 5 }] },
        { name: 'rest' },
      ],
    };
    const sim = new Sim(plan(strategy));
    sim.freshnessMs = 2000;
    sim.runUntil((s) => s.clusters.c1!.healthySince !== undefined);
    sim.silent.add('c1');
    for (let i = 0; i < 40; i++) sim.tick();
    expect(sim.state.clusters.c1!.step).toBe(0);
    expect(sim.state.clusters.c1!.message).toMatch(/canary step 1\/1 healthy, paused/);
    sim.silent.clear();
    sim.runUntil((s) => s.clusters.c1!.step === 1);
    expect(sim.state.clusters.c1!.step).toBe(1);
  });

  it('continues a soak written before credits existed from its healthySince', () => {
    const sim = soakingCanary();
    const c1 = sim.state.clusters.c1!;
    c1.healthySince = sim.now - 9_000;
    delete c1.creditedMs;
    delete c1.freshSince;
    sim.tick(1000);
    expect(sim.state.clusters.c1!.phase).toBe('Succeeded');
  });
});

describe('freezing a plan', () => {
  it('rejects overlapping waves, empty waves, unknown names and clusters left out', () => {
    const r = freezePlan(
      {
        waves: [
          { name: 'a', clusters: { names: ['c1', 'nope'] } },
          { name: 'b', clusters: { selector: { matchLabels: { env: 'canary' } } } },
          { name: 'c', clusters: { selector: { matchLabels: { env: 'staging' } } } },
        ],
      },
      fleet(3),
    );
    expect(r.ok).toBe(false);
    const messages = r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`);
    expect(messages).toEqual([
      'waves[0].clusters.names: cluster "nope" is not targeted by the workload\'s placement (or not accepted)',
      'waves[1]: cluster "c1" is in wave "a" and in wave "b"; waves must not overlap',
      'waves[2]: wave "c" matches no targeted cluster',
      'waves: targeted clusters in no wave: c2, c3; add them to a wave or end with a wave without clusters',
    ]);
  });

  it('resolves percentages against the wave size', () => {
    const p = plan(
      {
        waves: [
          { name: 'one', clusters: { names: ['c1'] } },
          { name: 'all', maxConcurrency: '50%', failureBudget: '50%' },
        ],
      },
      fleet(6),
    );
    expect(p.waves[1]).toMatchObject({ members: ['c2', 'c3', 'c4', 'c5', 'c6'], maxConcurrency: 3, failureBudget: 2 });
    expect(p.onFailure).toBe('Rollback');
  });
});

describe('applying an operator control', () => {
  const p = plan({ waves: [{ name: 'all', maxConcurrency: 2 }] });
  const start = initialState(p, 0);

  it('pauses naming the operator and the reason, and resumes to where it was', () => {
    const paused = applyControl('pause', start, p, 10, { actor: 'ops', reason: 'lunch' });
    expect(paused).toMatchObject({ phase: 'Paused', message: 'paused by ops: lunch', resumeTo: 'Progressing' });
    expect(applyControl('pause', start, p, 10, { actor: 'ops' }).message).toBe('paused by an operator');
    expect(applyControl('resume', paused, p, 20, { actor: 'ops' }).phase).toBe('Progressing');
  });

  it('refuses a control that does not apply to the phase', () => {
    const aborted = applyControl('abort', start, p, 10, { actor: 'ops' });
    expect(() => applyControl('resume', aborted, p, 20, { actor: 'ops' })).toThrow(RolloutStateError);
  });

  it('holds a cluster while a dependency is not healthy there; the others go on', () => {
    const strategy: RolloutStrategy = { waves: [{ name: 'all', maxConcurrency: 4 }] };
    const sim = new Sim(plan(strategy));
    sim.deps.set('c2', { missing: [], waiting: ['CloneSet apps/db'] });
    sim.runUntil((s) => ['c1', 'c3', 'c4'].every((c) => s.clusters[c]!.phase === 'Succeeded'));
    expect(sim.state.clusters.c2!.phase).toBe('Pending');
    expect(sim.state.clusters.c2!.message).toBe('waiting for CloneSet apps/db to be healthy at its target revision');
    expect(waitOf(sim.state, 'c2')).toEqual({ reason: 'dependency' });
    expect(sim.state.phase).toBe('Progressing');
    sim.deps.set('c2', { missing: [], waiting: [] });
    sim.runUntil((s) => s.phase === 'Succeeded');
    expect(sim.state.phase).toBe('Succeeded');
    expect(sim.started().at(-1)).toBe('c2');
  });

  it('pauses, naming cluster and dependency, when a dependency is not placed on a cluster', () => {
    const strategy: RolloutStrategy = { waves: [{ name: 'all', maxConcurrency: 1 }] };
    const sim = new Sim(plan(strategy));
    sim.deps.set('c1', { missing: ['CloneSet apps/db'], waiting: [] });
    sim.tick();
    expect(sim.state.phase).toBe('Paused');
    expect(sim.state.message).toContain('cluster c1 depends on CloneSet apps/db, which is not placed there');
    expect(sim.started()).toEqual([]);
    // Placed and healthy now: a resume carries on.
    sim.deps.delete('c1');
    sim.state = resume(sim.state, sim.now);
    sim.runUntil((s) => s.phase === 'Succeeded');
    expect(sim.state.phase).toBe('Succeeded');
  });
});
