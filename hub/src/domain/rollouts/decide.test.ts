import { describe, expect, it } from 'vitest';
import { MESSAGE_REFRESH_MS, isDue, livenessOf, memberKey, triage, type FleetView, type RolloutRun } from './decide.js';
import { initialState } from './engine.js';
import { freezePlan } from './plan.js';

const clusters = ['a', 'b'].map((name) => ({ name, labels: {} }));
const frozen = freezePlan({ waves: [{ name: 'all', maxConcurrency: 2 }] }, clusters);
if (!frozen.ok) throw new Error('plan');
const plan = frozen.plan;

const run = (id: string, updatedAt = 0): RolloutRun & { id: string } => ({
  id,
  workloadId: 'w',
  targetRevision: 2,
  plan,
  state: { ...initialState(plan, updatedAt) },
});

/** Both members online (heartbeat at `at`) and the desired row at the given revision. */
function view(at: Date, desiredRevision: number): FleetView {
  return {
    workloads: new Set(['w']),
    desired: new Map(
      clusters.map((c) => [memberKey('w', c.name), { revision: desiredRevision, generation: 1, deleted: false }]),
    ),
    status: new Map(),
    clusters: new Map(clusters.map((c) => [c.name, { state: 'accepted', lastHeartbeatAt: at }])),
  };
}

const live = { heartbeatTimeoutMs: 30_000, observingSince: new Date(0) };

describe('triage of a tick', () => {
  it('steps a rollout that starts clusters under the desired-state lock', () => {
    const at = new Date(60_000);
    const r = run('r1', at.getTime());
    const sorted = triage([r], view(at, 1), at, live);
    expect(sorted.withDesired.map((x) => x.id)).toEqual(['r1']);
    expect(sorted.idle).toEqual([]);
  });
});

describe('isDue', () => {
  const r = run('r1', 1000);
  const d = { state: r.state, actions: [], changed: true, transition: false };
  it('writes new wording alone only after the refresh interval', () => {
    expect(isDue(d, r, new Date(1000 + MESSAGE_REFRESH_MS - 1))).toBe(false);
    expect(isDue(d, r, new Date(1000 + MESSAGE_REFRESH_MS))).toBe(true);
    expect(isDue({ ...d, transition: true }, r, new Date(1001))).toBe(true);
    expect(isDue({ ...d, changed: false }, r, new Date(1_000_000))).toBe(false);
  });
});

describe('livenessOf', () => {
  const base = { heartbeatTimeoutMs: 30_000, freshnessMs: undefined };
  it('observes since the lead was taken, or since the hub hears NATS again if later', () => {
    const leaderSince = new Date(1000);
    expect(livenessOf({ ...base, leaderSince, hearing: undefined }).observingSince).toEqual(leaderSince);
    expect(livenessOf({ ...base, leaderSince, hearing: { hearing: true, since: 5000 } }).observingSince).toEqual(
      new Date(5000),
    );
  });

  it('marks the hub deaf since it stopped hearing NATS', () => {
    const l = livenessOf({
      ...base,
      freshnessMs: 15_000,
      leaderSince: new Date(0),
      hearing: { hearing: false, since: 7 },
    });
    expect(l).toMatchObject({ deafSince: 7, freshnessMs: 15_000 });
  });
});
