import { describe, expect, it } from 'vitest';
import { compileWindows } from '../maintenance-windows.js';
import { freezePlan } from './plan.js';
import { expectedSchedule, previewPlan, type PreviewFleetCluster } from './preview.js';
import type { FrozenPlan } from './types.js';

const AT = Date.parse('2026-07-01T10:00:00Z');
const MIN = 60_000;

function plan(): FrozenPlan {
  const r = freezePlan(
    {
      waves: [
        {
          name: 'canary',
          clusters: { names: ['a'] },
          soakSeconds: 600,
          canarySteps: [{ partition: '50%', pauseSeconds: 300 }],
        },
        { name: 'rest', soakSeconds: 600, maxConcurrency: 1 },
      ],
      offlinePolicy: 'Skip',
    },
    ['a', 'b', 'c'].map((name) => ({ name, labels: {} })),
  );
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.plan;
}

const noWindows = (): [] => [];

describe('expectedSchedule', () => {
  it('adds canary pauses and soak per cluster, one wave after the other, within concurrency', () => {
    const s = expectedSchedule(plan(), noWindows, AT);
    expect(s.waves).toEqual([
      { start: AT, end: AT + 15 * MIN },
      { start: AT + 15 * MIN, end: AT + 35 * MIN },
    ]);
    expect(s.starts.get('b')).toBe(AT + 15 * MIN);
    expect(s.starts.get('c')).toBe(AT + 25 * MIN);
  });

  it('adds a passing analysis: count - 1 intervals after the first measurement', () => {
    const analysis = {
      queries: [{ name: 'e', query: 'x', successCondition: 'result < 1' }],
      intervalSeconds: 60,
      count: 6,
    };
    const p = plan();
    const s = expectedSchedule({ ...p, waves: p.waves.map((w) => ({ ...w, analysis })) }, noWindows, AT);
    expect(s.waves[0]).toEqual({ start: AT, end: AT + 20 * MIN });
    expect(s.starts.get('c')).toBe(AT + 35 * MIN);
  });

  it('starts a cluster at its next window opening and lets the others go first', () => {
    // b's window opens at 12:00 UTC: c goes first, b starts at noon.
    const windows = compileWindows([{ cron: '0 12 * * *', duration: '1h', timeZone: 'UTC' }]);
    const s = expectedSchedule(plan(), (n) => (n === 'b' ? windows : []), AT);
    expect(s.starts.get('c')).toBe(AT + 15 * MIN);
    expect(s.starts.get('b')).toBe(Date.parse('2026-07-01T12:00:00Z'));
    expect(s.waves[1]!.end).toBe(Date.parse('2026-07-01T12:10:00Z'));
  });
});

describe('previewPlan', () => {
  const fleet: PreviewFleetCluster[] = [
    {
      name: 'a',
      state: 'accepted',
      online: true,
      windows: [],
      current: { revision: 1, manifest: { spec: { image: 'v1' } } },
    },
    {
      name: 'b',
      state: 'accepted',
      online: false,
      windows: compileWindows([{ cron: '0 12 * * *', duration: '1h', timeZone: 'UTC' }]),
    },
    { name: 'c', state: 'accepted', online: true, windows: [] },
    { name: 'd', state: 'accepted', online: true, windows: [] },
    { name: 'e', state: 'pending', online: false, windows: [] },
  ];
  const p = previewPlan({ plan: plan(), fleet, manifestFor: (c) => ({ spec: { image: 'v2', cluster: c } }), at: AT });

  it('lists the plan’s clusters in wave order, then the rest, each with why it is in or out', () => {
    expect(p.clusters.map((c) => [c.name, c.included, c.wave])).toEqual([
      ['a', true, 'canary'],
      ['b', true, 'rest'],
      ['c', true, 'rest'],
      ['d', false, null],
      ['e', false, null],
    ]);
    const reasons = Object.fromEntries(p.clusters.map((c) => [c.name, c.reasons.map((r) => r.reason)]));
    expect(reasons).toEqual({
      a: ['selector'],
      b: ['selector', 'offline', 'window'],
      c: ['selector'],
      d: ['selector'],
      e: ['state'],
    });
    expect(p.clusters[1]!.reasons[2]!.message).toContain('2026-07-01T12:00:00.000Z');
  });

  it('renders each member’s manifest and diffs it against what it has now', () => {
    const a = p.clusters[0]!;
    expect(a).toMatchObject({ currentRevision: 1, manifest: { spec: { image: 'v2', cluster: 'a' } } });
    expect(a.diff).toEqual([
      { path: 'spec.cluster', to: 'a' },
      { path: 'spec.image', from: 'v1', to: 'v2' },
    ]);
    expect(p.clusters[2]!.diff).toEqual([{ path: '', to: { spec: { image: 'v2', cluster: 'c' } } }]);
    expect(p.clusters[3]).toMatchObject({ manifest: null, diff: [], expectedStartAt: null });
  });

  it('gives each wave its frozen settings and expected times', () => {
    expect(p.waves.map((w) => [w.name, w.members, w.expectedStartAt])).toEqual([
      ['canary', ['a'], '2026-07-01T10:00:00.000Z'],
      ['rest', ['b', 'c'], '2026-07-01T10:15:00.000Z'],
    ]);
    expect(p.waves[0]!.canarySteps).toEqual([{ partition: '50%', pauseSeconds: 300 }]);
  });
});
