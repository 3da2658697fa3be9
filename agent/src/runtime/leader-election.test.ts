import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { decideLeadership, LeaderElector, nextLease, releasedLease, type Lease } from './leader-election.js';
import { FakeClock, flush } from './testing/fake-clock.js';
import { FakeLeaseClient } from './testing/fake-lease-client.js';

const silent = pino({ level: 'silent' });
const T0 = 1_700_000_000_000;

function held(holder: string, durationSeconds = 15): Lease {
  return {
    metadata: { name: 'l', namespace: 'ns' },
    spec: { holderIdentity: holder, leaseDurationSeconds: durationSeconds },
  };
}

describe('decideLeadership', () => {
  const base = { identity: 'me', nowMs: T0, observedAtMs: T0, leaseDurationMs: 15_000 };

  it.each([
    ['no lease yet', undefined, T0, { action: 'create' }],
    ['a released lease', held(''), T0, { action: 'acquire' }],
    ['a lease without a holder field', { metadata: {}, spec: {} }, T0, { action: 'acquire' }],
    ['our own lease', held('me'), T0 - 60_000, { action: 'renew' }],
    [
      'a lease another renewed 5 s ago',
      held('other'),
      T0 - 5_000,
      { action: 'wait', holder: 'other', expiresInMs: 10_000 },
    ],
    ['a lease another has not renewed for 15 s', held('other'), T0 - 15_000, { action: 'acquire' }],
    [
      'a 30 s lease not renewed for 20 s',
      held('other', 30),
      T0 - 20_000,
      { action: 'wait', holder: 'other', expiresInMs: 10_000 },
    ],
  ] as const)('%s → %j', (_what, lease, observedAtMs, expected) => {
    expect(decideLeadership({ ...base, lease, observedAtMs })).toEqual(expected);
  });

  it('judges expiry by when the candidate observed the holder, not by the (possibly skewed) renewTime', () => {
    const lease = held('other');
    lease.spec!.renewTime = '2000-01-01T00:00:00.000000Z';
    expect(decideLeadership({ ...base, lease, observedAtMs: T0 }).action).toBe('wait');
  });
});

describe('nextLease', () => {
  const params = { identity: 'me', nowMs: T0, leaseDurationMs: 15_000, namespace: 'ns', name: 'l' };
  const now = '2023-11-14T22:13:20.000000Z';

  it('creates a lease held by us with zero transitions', () => {
    expect(nextLease(undefined, 'create', params)).toEqual({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'l', namespace: 'ns' },
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15, acquireTime: now, renewTime: now, leaseTransitions: 0 },
    });
  });

  it('counts a transition when taking over and keeps acquireTime on renew', () => {
    const old: Lease = {
      metadata: { name: 'l', namespace: 'ns', resourceVersion: '7' },
      spec: { holderIdentity: 'other', acquireTime: 'then', leaseTransitions: 3 },
    };
    const taken = nextLease(old, 'acquire', params);
    expect(taken.spec).toMatchObject({ holderIdentity: 'me', acquireTime: now, leaseTransitions: 4 });
    expect(taken.metadata?.resourceVersion).toBe('7');
    const renewed = nextLease(taken, 'renew', { ...params, nowMs: T0 + 2000 });
    expect(renewed.spec).toMatchObject({
      acquireTime: now,
      renewTime: '2023-11-14T22:13:22.000000Z',
      leaseTransitions: 4,
    });
  });

  it('releases by clearing the holder with a 1 s duration', () => {
    expect(releasedLease(held('me'), T0).spec).toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
  });
});

describe('LeaderElector', () => {
  function candidate(client: FakeLeaseClient, clock: FakeClock, identity: string, log: string[], release = true) {
    const ac = new AbortController();
    const elector = new LeaderElector({
      namespace: 'ns',
      name: 'agent',
      identity,
      client,
      clock,
      logger: silent,
      random: () => 0,
      releaseOnCancel: release,
      onStartedLeading: (signal) => {
        log.push(`${identity} started`);
        signal.addEventListener('abort', () => log.push(`${identity} signal aborted`));
      },
      onStoppedLeading: () => {
        log.push(`${identity} stopped`);
      },
    });
    const outcome = elector.run(ac.signal);
    return { elector, stop: () => ac.abort(), outcome };
  }

  it('elects exactly one of two candidates and hands over at once on a graceful release', async () => {
    const client = new FakeLeaseClient();
    const clock = new FakeClock(T0);
    const log: string[] = [];
    const a = candidate(client, clock, 'a', log);
    await flush();
    const b = candidate(client, clock, 'b', log);
    await clock.tick(10_000);
    expect([a.elector.isLeader(), b.elector.isLeader()]).toEqual([true, false]);
    expect(b.elector.leader()).toBe('a');
    expect(log).toEqual(['a started']);

    a.stop();
    expect(await a.outcome).toBe('stopped');
    expect(log).toEqual(['a started', 'a signal aborted', 'a stopped']);
    expect(client.stored('ns', 'agent')?.spec?.holderIdentity).toBe('');
    await clock.tick(2_000); // b's next poll
    expect(b.elector.isLeader()).toBe(true);
    expect(client.stored('ns', 'agent')?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    b.stop();
    await b.outcome;
  });

  it('takes over a lease whose holder vanished once the lease duration has passed', async () => {
    const client = new FakeLeaseClient();
    const clock = new FakeClock(T0);
    const log: string[] = [];
    const a = candidate(client, clock, 'a', log, false);
    await flush();
    const b = candidate(client, clock, 'b', log);
    await clock.tick(4_000);
    expect([a.elector.isLeader(), b.elector.isLeader()]).toEqual([true, false]);
    // a dies without releasing: its last renewal stands until the lease duration has passed.
    a.stop();
    await a.outcome;
    expect(client.stored('ns', 'agent')?.spec?.holderIdentity).toBe('a');
    const tookOverAfter = await until(clock, () => b.elector.isLeader());
    expect(tookOverAfter).toBeGreaterThanOrEqual(13_000);
    expect(tookOverAfter).toBeLessThanOrEqual(15_000 + 2_000);
    expect(client.stored('ns', 'agent')?.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    b.stop();
    await b.outcome;
  });

  it('steps down when it cannot renew within the renew deadline', async () => {
    const client = new FakeLeaseClient();
    const clock = new FakeClock(T0);
    const log: string[] = [];
    const a = candidate(client, clock, 'a', log);
    await flush();
    expect(a.elector.isLeader()).toBe(true);
    client.down = true;
    await clock.tick(8_000);
    expect(a.elector.isLeader()).toBe(true);
    await clock.tick(2_000);
    expect(await a.outcome).toBe('lost');
    expect(log).toEqual(['a started', 'a signal aborted', 'a stopped']);
  });

  it('steps down at the renew deadline even when renewal requests hang', async () => {
    const client = new FakeLeaseClient();
    const clock = new FakeClock(T0);
    const log: string[] = [];
    const a = candidate(client, clock, 'a', log);
    await flush();
    expect(a.elector.isLeader()).toBe(true);
    client.hang = true;
    await clock.tick(9_999); // acquired at t=0; the renewal at t=2 s hangs
    expect(a.elector.isLeader()).toBe(true);
    await clock.tick(1);
    expect(await a.outcome).toBe('lost');
  });

  it('steps down at once when another candidate holds the lease', async () => {
    const client = new FakeLeaseClient();
    const clock = new FakeClock(T0);
    const log: string[] = [];
    const a = candidate(client, clock, 'a', log);
    await flush();
    const lease = client.stored('ns', 'agent')!;
    await client.replace({ ...lease, spec: { ...lease.spec, holderIdentity: 'intruder' } });
    await clock.tick(2_000);
    expect(await a.outcome).toBe('lost');
    expect(client.stored('ns', 'agent')?.spec?.holderIdentity).toBe('intruder');
  });
});

/** Advances in 100 ms steps until `cond` holds; returns the time it took. */
async function until(clock: FakeClock, cond: () => boolean, limitMs = 60_000): Promise<number> {
  const start = clock.now();
  while (!cond()) {
    if (clock.now() - start > limitMs) throw new Error('condition never held');
    await clock.tick(100);
  }
  return clock.now() - start;
}
