/**
 * Lease leader election between two candidates on one real coordination.k8s.io Lease: exactly
 * one leads, a graceful stop hands over at once, a vanished leader is replaced within the lease
 * duration. Short timings (3 s lease, 2 s renew deadline, 0.5 s retry) keep the suite fast.
 */
import { describe, expect, it } from 'vitest';
import { kubeLeaseClient, LeaderElector, type ElectionOutcome, type LeaseClient } from '@flotilla/agent/runtime';
import { eventually, testNamespace } from '../helpers/kube.js';
import { runtimeEnv } from './support.js';

const env = runtimeEnv();
const TIMING = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 };

interface Candidate {
  elector: LeaderElector;
  outcome: Promise<ElectionOutcome>;
  stop(): Promise<ElectionOutcome>;
  log: string[];
}

function candidate(client: LeaseClient, namespace: string, identity: string, releaseOnCancel = true): Candidate {
  const ac = new AbortController();
  const log: string[] = [];
  const elector = new LeaderElector({
    namespace,
    name: 'agent',
    identity,
    client,
    logger: env.logger,
    releaseOnCancel,
    ...TIMING,
    onStartedLeading: () => void log.push('started'),
    onStoppedLeading: () => void log.push('stopped'),
  });
  const outcome = elector.run(ac.signal);
  return {
    elector,
    outcome,
    log,
    stop: () => {
      ac.abort();
      return outcome;
    },
  };
}

/** Milliseconds until `cond` holds, polled every 50 ms. */
async function timeUntil(cond: () => boolean, limitMs = 15_000): Promise<number> {
  const t0 = performance.now();
  await eventually('condition', () => Promise.resolve(cond()), limitMs, 50);
  return performance.now() - t0;
}

describe('Lease leader election against a real apiserver', () => {
  it('elects exactly one of two candidates and hands over at once on a graceful release', async () => {
    const ns = await testNamespace(env.k, 'le-graceful');
    const client = kubeLeaseClient(env.rest);
    const a = candidate(client, ns, 'agent-a');
    await timeUntil(() => a.elector.isLeader());
    const b = candidate(client, ns, 'agent-b');
    await new Promise((r) => setTimeout(r, 2 * TIMING.leaseDurationMs)); // b polls through two lease periods
    expect([a.elector.isLeader(), b.elector.isLeader()]).toEqual([true, false]);
    expect(b.elector.leader()).toBe('agent-a');

    const lease = (await client.get(ns, 'agent'))!;
    expect(lease.spec).toMatchObject({ holderIdentity: 'agent-a', leaseDurationSeconds: 3, leaseTransitions: 0 });
    expect(lease.spec?.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(Date.now() - Date.parse(lease.spec!.renewTime!)).toBeLessThan(2000);

    expect(await a.stop()).toBe('stopped');
    expect(a.log).toEqual(['started', 'stopped']);
    expect((await client.get(ns, 'agent'))?.spec?.holderIdentity).toBe('');
    const handover = await timeUntil(() => b.elector.isLeader());
    expect(handover).toBeLessThan(TIMING.retryPeriodMs * 1.2 + 1000);
    expect((await client.get(ns, 'agent'))?.spec).toMatchObject({ holderIdentity: 'agent-b', leaseTransitions: 1 });
    await b.stop();
  });

  it('takes over within the lease duration when the leader vanishes without releasing', async () => {
    const ns = await testNamespace(env.k, 'le-crash');
    const client = kubeLeaseClient(env.rest);
    const a = candidate(client, ns, 'agent-a', false);
    await timeUntil(() => a.elector.isLeader());
    const b = candidate(client, ns, 'agent-b');
    await new Promise((r) => setTimeout(r, TIMING.leaseDurationMs));
    expect(b.elector.isLeader()).toBe(false);

    await a.stop(); // as if the process died: no release
    expect((await client.get(ns, 'agent'))?.spec?.holderIdentity).toBe('agent-a');
    const takeover = await timeUntil(() => b.elector.isLeader());
    expect(takeover).toBeGreaterThan(TIMING.leaseDurationMs - TIMING.retryPeriodMs * 1.2 - 500);
    expect(takeover).toBeLessThan(TIMING.leaseDurationMs + TIMING.retryPeriodMs * 1.2 + 1500);
    await b.stop();
  });

  it('a leader whose lease is taken steps down with outcome lost', async () => {
    const ns = await testNamespace(env.k, 'le-lost');
    const client = kubeLeaseClient(env.rest);
    const a = candidate(client, ns, 'agent-a');
    await timeUntil(() => a.elector.isLeader());
    const lease = (await client.get(ns, 'agent'))!;
    await client.replace({ ...lease, spec: { ...lease.spec, holderIdentity: 'usurper' } });
    expect(await a.outcome).toBe('lost');
    expect(a.log).toEqual(['started', 'stopped']);
    expect((await client.get(ns, 'agent'))?.spec?.holderIdentity).toBe('usurper');
  });
});
