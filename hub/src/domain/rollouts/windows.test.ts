import { describe, expect, it } from 'vitest';
import type { HealthVerdict } from '@flotilla/api';
import { observeMembers, type FleetView } from './decide.js';
import { advance, initialState } from './engine.js';
import { freezePlan } from './plan.js';
import type { ClusterObservation, FrozenPlan } from './types.js';
import { waitOf } from './waits.js';

const healthy: HealthVerdict = { state: 'Healthy', reason: 'Available', message: '' };

function oneWave(): FrozenPlan {
  const r = freezePlan(
    { waves: [{ name: 'all', soakSeconds: 0 }] },
    ['a', 'b', 'c'].map((name) => ({ name, labels: {} })),
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.plan;
}

const OPENS = Date.parse('2026-07-01T22:00:00Z');

function obs(bOpen: boolean): Record<string, ClusterObservation> {
  const base = { online: true, removed: false, health: healthy };
  return { a: base, b: { ...base, window: bOpen ? { open: true } : { open: false, opensAt: OPENS } }, c: base };
}

describe('maintenance windows in the engine', () => {
  it('keeps a cluster outside its window waiting while the others proceed, and starts it once open', () => {
    const plan = oneWave();
    let r = advance(plan, initialState(plan, 0), obs(false), 1000);
    expect(r.state.clusters.a!.phase).not.toBe('Pending');
    expect(r.state.clusters.c!.phase).not.toBe('Pending');
    expect(r.state.clusters.b!.phase).toBe('Pending');
    expect(waitOf(r.state, 'b')).toEqual({ reason: 'window', until: OPENS });
    expect(r.state.clusters.b!.message).toContain('2026-07-01T22:00:00.000Z');
    expect(r.actions.filter((a) => a.type === 'setRevision').map((a) => a.cluster)).toEqual(['a', 'c']);
    expect(r.actions.some((a) => a.type === 'event' && a.message.includes('waits for its maintenance window'))).toBe(
      true,
    );
    // a and c finish; the wave stays open for b.
    r = advance(plan, r.state, obs(false), 2000);
    expect(r.state.clusters.a!.phase).toBe('Succeeded');
    expect(r.state.phase).toBe('Progressing');
    // The same wait again writes no new event.
    expect(advance(plan, r.state, obs(false), 3000).actions).toEqual([]);
    r = advance(plan, r.state, obs(true), OPENS);
    expect(r.state.clusters.b!.phase).toBe('Updating');
    expect(r.state.clusters.b!.blocked).toBeUndefined();
    expect(waitOf(r.state, 'b')?.reason).not.toBe('window');
  });
});

describe('observeMembers', () => {
  it('judges windows only for clusters whose turn may come, in this wave or a later one', () => {
    const plan = oneWave();
    const state = advance(plan, initialState(plan, 0), obs(true), 1000).state;
    state.clusters.c!.phase = 'Pending';
    const closed = [{ cron: '0 22 * * *', duration: '1h', timeZone: 'UTC' }];
    const cluster = { state: 'accepted', lastHeartbeatAt: new Date(OPENS - 60_000), maintenanceWindows: closed };
    const view: FleetView = {
      workloads: new Set(['w']),
      desired: new Map(),
      status: new Map(),
      clusters: new Map(['a', 'b', 'c'].map((n) => [n, cluster])),
    };
    const at = new Date(OPENS - 60_000);
    const o = observeMembers({ workloadId: 'w', targetRevision: 2, plan, state }, view, at, {
      heartbeatTimeoutMs: 30_000,
      observingSince: undefined,
    });
    expect(o.a!.window).toBeUndefined();
    expect(o.c!.window).toEqual({ open: false, opensAt: OPENS });
    // A step that finishes wave 0 starts wave 1 at once: its clusters' windows are judged too.
    const two = freezePlan(
      { waves: [{ name: 'first', clusters: { names: ['a'] } }, { name: 'second' }] },
      ['a', 'b', 'c'].map((name) => ({ name, labels: {} })),
    );
    if (!two.ok) throw new Error('plan');
    const fresh = initialState(two.plan, 0);
    const later = observeMembers({ workloadId: 'w', targetRevision: 2, plan: two.plan, state: fresh }, view, at, {
      heartbeatTimeoutMs: 30_000,
      observingSince: undefined,
    });
    expect(later.c!.window).toEqual({ open: false, opensAt: OPENS });
  });
});
