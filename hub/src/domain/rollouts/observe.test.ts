import { describe, expect, it } from 'vitest';
import { observeCluster, type ObserveInput } from './observe.js';

const now = new Date('2026-11-22T12:00:00Z');
const base: ObserveInput = {
  targetRevision: 3,
  clusterState: 'accepted',
  lastHeartbeatAt: new Date(now.getTime() - 5_000),
  desired: { revision: 3, generation: 7, deleted: false },
  status: { revision: 3, generation: 7, health: 'Healthy', message: 'ok' },
  now,
  heartbeatTimeoutMs: 30_000,
};

describe('observeCluster', () => {
  it.each<[string, Partial<ObserveInput>, string, string]>([
    ['a fresh healthy report at the target', {}, 'Healthy', 'AgentHealthy'],
    ['no report yet', { status: undefined }, 'Unknown', 'NoStatus'],
    [
      'a report about an older desired generation',
      { status: { ...base.status!, generation: 6 } },
      'Stale',
      'StaleStatus',
    ],
    [
      'desired state not yet at the target',
      { desired: { revision: 2, generation: 7, deleted: false } },
      'Progressing',
      'NotDispatched',
    ],
    ['a report at another revision', { status: { ...base.status!, revision: 2 } }, 'Progressing', 'OtherRevision'],
    [
      'a degraded report',
      { status: { ...base.status!, health: 'Degraded', message: 'pods crash' } },
      'Degraded',
      'AgentDegraded',
    ],
    [
      'the object missing from the cluster',
      { status: { ...base.status!, health: 'Missing' } },
      'Degraded',
      'ObjectMissing',
    ],
  ])('%s', (_what, patch, state, reason) => {
    const o = observeCluster({ ...base, ...patch });
    expect(o.health.state).toBe(state);
    expect(o.health.reason).toBe(reason);
  });

  it('marks a cluster offline after the heartbeat timeout and removed clusters as removed', () => {
    expect(observeCluster({ ...base, lastHeartbeatAt: new Date(now.getTime() - 31_000) }).online).toBe(false);
    expect(observeCluster({ ...base, lastHeartbeatAt: null }).online).toBe(false);
    const removed = observeCluster({ ...base, clusterState: 'removed' });
    expect(removed).toMatchObject({ removed: true, online: false });
  });

  it('is unsure of a stale heartbeat until the hub has observed for a whole heartbeat timeout', () => {
    const stale = { ...base, lastHeartbeatAt: new Date(now.getTime() - 60_000) };
    const justStarted = observeCluster({ ...stale, observingSince: new Date(now.getTime() - 10_000) });
    expect(justStarted).toMatchObject({ online: false, unsure: true });
    const longEnough = observeCluster({ ...stale, observingSince: new Date(now.getTime() - 30_000) });
    expect(longEnough.online).toBe(false);
    expect(longEnough.unsure).toBeUndefined();
    // Fresh heartbeats and removed clusters are never "unsure".
    expect(observeCluster({ ...base, observingSince: now }).unsure).toBeUndefined();
    expect(observeCluster({ ...stale, clusterState: 'removed', observingSince: now }).unsure).toBeUndefined();
  });

  it('dates what the hub heard by the newest heartbeat or report, and never past the moment it went deaf', () => {
    const heartbeat = now.getTime() - 5_000;
    const report = now.getTime() - 2_000;
    const withReport = { ...base, freshnessMs: 15_000, status: { ...base.status!, storedAt: new Date(report) } };
    expect(observeCluster({ ...base, freshnessMs: 15_000 }).freshUntil).toBe(heartbeat + 15_000);
    expect(observeCluster(withReport).freshUntil).toBe(report + 15_000);
    expect(observeCluster({ ...base, freshnessMs: 15_000, lastHeartbeatAt: null, status: undefined }).freshUntil).toBe(
      0,
    );
    expect(observeCluster(base).freshUntil).toBeUndefined();
    const deafSince = now.getTime() - 10_000;
    expect(observeCluster({ ...withReport, deafSince })).toMatchObject({
      freshUntil: deafSince,
      hubDeaf: true,
      unsure: true,
      online: true,
    });
    expect(observeCluster({ ...base, clusterState: 'removed', deafSince }).hubDeaf).toBeUndefined();
  });
});
