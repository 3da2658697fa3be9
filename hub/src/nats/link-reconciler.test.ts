import { describe, expect, it } from 'vitest';
import { DESIRED_ACK_WAIT_MS } from '@flotilla/api';
import { createLogger } from '../logger.js';
import { ACK_EXPLICIT, LAST_PER_SUBJECT, type ConsumerView } from '../domain/agent-consumer-plan.js';
import type { AgentConsumers } from './agent-consumers.js';
import { createLinkReconciler } from './link-reconciler.js';

/** Durables in memory; every call is recorded, `failing` clusters throw on ensure. */
function fakeConsumers(existing: ConsumerView[], failing: string[] = []): AgentConsumers & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    list: () => {
      calls.push('list');
      return Promise.resolve(existing);
    },
    ensure: (cluster) => {
      calls.push(`ensure ${cluster}`);
      return failing.includes(cluster)
        ? Promise.reject(new Error('NATS timeout'))
        : Promise.resolve({ action: 'created' });
    },
    remove: (name) => {
      calls.push(`remove ${name}`);
      return Promise.resolve(true);
    },
  };
}

const durable = (cluster: string, filter = `flotilla.desired.${cluster}.>`): ConsumerView => ({
  name: `agent-${cluster}`,
  filterSubjects: [filter],
  deliverSubject: undefined,
  deliverPolicy: LAST_PER_SUBJECT,
  ackPolicy: ACK_EXPLICIT,
  ackWaitMs: DESIRED_ACK_WAIT_MS,
  memory: false,
  replicas: 1,
});
const durableSetup = { memory: false, replicas: 1 };

describe('createLinkReconciler', () => {
  it('syncs identities, lists durables before reading the clusters, then creates, repairs and removes', async () => {
    const consumers = fakeConsumers([durable('a'), durable('b', 'flotilla.desired.>'), durable('gone')]);
    const order: string[] = [];
    const link = createLinkReconciler({
      consumers,
      durableSetup,
      acceptedClusters: () => {
        order.push(`clusters after ${consumers.calls.join(',')}`);
        return Promise.resolve(['a', 'b', 'c']);
      },
      syncAccounts: () => {
        order.push('accounts');
        return Promise.resolve();
      },
      logger: createLogger('silent'),
      intervalMs: 60_000,
    });
    const plan = await link.pass();
    expect(order).toEqual(['accounts', 'clusters after list']);
    expect(plan).toEqual({
      create: ['c'],
      repair: [{ cluster: 'b', drift: ['filter'] }],
      update: [],
      remove: ['agent-gone'],
    });
    expect(consumers.calls).toEqual(['list', 'ensure c', 'ensure b', 'remove agent-gone']);
  });

  it('goes on past a failing step: the next pass retries it', async () => {
    const consumers = fakeConsumers([durable('gone')], ['a']);
    const link = createLinkReconciler({
      consumers,
      durableSetup,
      acceptedClusters: () => Promise.resolve(['a', 'b']),
      syncAccounts: () => Promise.reject(new Error('NATS resolver timeout')),
      logger: createLogger('silent'),
      intervalMs: 60_000,
    });
    await link.pass();
    expect(consumers.calls).toEqual(['list', 'ensure a', 'ensure b', 'remove agent-gone']);
  });

  it('runs a pass soon after a kick once started, and none after stop', async () => {
    const consumers = fakeConsumers([]);
    let passes = 0;
    const link = createLinkReconciler({
      consumers,
      durableSetup,
      acceptedClusters: () => Promise.resolve([]),
      syncAccounts: () => {
        passes++;
        return Promise.resolve();
      },
      logger: createLogger('silent'),
      intervalMs: 60_000,
    });
    link.start();
    link.kick();
    await new Promise((r) => setTimeout(r, 50));
    expect(passes).toBe(1);
    await link.stop();
    link.kick();
    await new Promise((r) => setTimeout(r, 50));
    expect(passes).toBe(1);
  });
});
