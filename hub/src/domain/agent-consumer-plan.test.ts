import { describe, expect, it } from 'vitest';
import { DESIRED_ACK_WAIT_MS } from '@flotilla/api';
import {
  ACK_EXPLICIT,
  LAST_PER_SUBJECT,
  clusterOfConsumer,
  consumerDrift,
  planAgentConsumers,
  type ConsumerView,
} from './agent-consumer-plan.js';

/** The durable the hub creates for `cluster`, with `change` applied. */
function durable(cluster: string, change: Partial<ConsumerView> = {}): ConsumerView {
  return {
    name: `agent-${cluster}`,
    filterSubjects: [`flotilla.desired.${cluster}.>`],
    deliverSubject: undefined,
    deliverPolicy: LAST_PER_SUBJECT,
    ackPolicy: ACK_EXPLICIT,
    ackWaitMs: DESIRED_ACK_WAIT_MS,
    memory: false,
    replicas: 3,
    ...change,
  };
}

const SETUP = { memory: false, replicas: 3 };

describe('consumerDrift', () => {
  it.each<[string, Partial<ConsumerView>, string[]]>([
    ['as created', {}, []],
    ['an empty deliver subject', { deliverSubject: '' }, []],
    ['widened to every cluster', { filterSubjects: ['flotilla.desired.>'] }, ['filter']],
    ['no filter (the whole stream)', { filterSubjects: [] }, ['filter']],
    ['another cluster', { filterSubjects: ['flotilla.desired.b.>'] }, ['filter']],
    ['its own plus another', { filterSubjects: ['flotilla.desired.a.>', 'flotilla.desired.b.>'] }, ['filter']],
    ['pushing to a heartbeat subject', { deliverSubject: 'flotilla.heartbeat.b' }, ['push']],
    ['the whole history', { deliverPolicy: 'all' }, ['deliver_policy']],
    ['no acks', { ackPolicy: 'none' }, ['ack_policy']],
    [
      'everything at once',
      { filterSubjects: ['>'], deliverSubject: 'x', deliverPolicy: 'new', ackPolicy: 'all' },
      ['filter', 'push', 'deliver_policy', 'ack_policy'],
    ],
    ['kept in memory', { memory: true }, ['storage']],
    ['one replica', { replicas: 1 }, ['replicas']],
  ])('%s', (_step, change, want) => {
    expect(consumerDrift('a', durable('a', change), SETUP)).toEqual(want);
  });
});

describe('clusterOfConsumer', () => {
  it.each([
    ['agent-a', 'a'],
    ['agent-edge-7', 'edge-7'],
    ['agent-', undefined],
    ['agent-A', undefined],
    ['hub-status', undefined],
    ['agentx', undefined],
  ])('%s → %s', (name, cluster) => {
    expect(clusterOfConsumer(name)).toBe(cluster);
  });
});

describe('planAgentConsumers', () => {
  it('creates missing durables, repairs drifted ones and removes those of clusters not accepted', () => {
    const plan = planAgentConsumers(
      ['a', 'b', 'c', 'd'],
      [
        durable('a'),
        durable('b', { filterSubjects: ['flotilla.desired.>'], deliverSubject: 'flotilla.heartbeat.c' }),
        durable('gone'),
        durable('d', { ackWaitMs: 60_000 }),
        durable('x', { name: 'agent-Not_A_Cluster' }),
        // Not an agent durable: left alone.
        durable('x', { name: 'hub-watch', filterSubjects: ['flotilla.desired.>'] }),
      ],
      SETUP,
    );
    expect(plan).toEqual({
      create: ['c'],
      repair: [{ cluster: 'b', drift: ['filter', 'push'] }],
      // A durable from before the ack wait changed keeps its position: updated, not recreated.
      update: ['d'],
      remove: ['agent-Not_A_Cluster', 'agent-gone'],
    });
  });

  it('plans nothing when everything is in place', () => {
    expect(planAgentConsumers(['a'], [durable('a')], SETUP)).toEqual({
      create: [],
      repair: [],
      update: [],
      remove: [],
    });
  });

  it('makes durables of another setup again when the setup changes', () => {
    const plan = planAgentConsumers(['a', 'b'], [durable('a'), durable('b', { memory: true, replicas: 1 })], {
      memory: true,
      replicas: 1,
    });
    expect(plan.repair).toEqual([{ cluster: 'a', drift: ['storage', 'replicas'] }]);
    expect(plan.create).toEqual([]);
  });

  it('removes every agent durable when no cluster is accepted', () => {
    expect(planAgentConsumers([], [durable('a'), durable('b')], SETUP).remove).toEqual(['agent-a', 'agent-b']);
  });
});
