import { describe, expect, it } from 'vitest';
import {
  STATUS_DURABLE_TUNING,
  decideStatusDurable,
  startAfter,
  type StatusDurableView,
} from './status-consumer-plan.js';

const MEMORY_R3 = { memory: true, replicas: 3 };

function durable(change: Partial<StatusDurableView> = {}): StatusDurableView {
  return {
    memory: true,
    replicas: 3,
    ackWaitMs: STATUS_DURABLE_TUNING.ackWaitMs,
    maxAckPending: STATUS_DURABLE_TUNING.maxAckPending,
    maxDeliver: STATUS_DURABLE_TUNING.maxDeliver,
    ackFloor: 0,
    ...change,
  };
}

describe('decideStatusDurable', () => {
  it('creates a missing durable over the whole stream', () => {
    expect(decideStatusDurable(undefined, MEMORY_R3)).toEqual({ action: 'create', start: { from: 'all' } });
  });

  it('creates it after the floor of the one this start already deleted', () => {
    expect(decideStatusDurable(undefined, MEMORY_R3, STATUS_DURABLE_TUNING, 41)).toEqual({
      action: 'create',
      start: { from: 'sequence', sequence: 42 },
    });
  });

  it('leaves a durable of the setup alone, whatever its start', () => {
    expect(decideStatusDurable(durable({ ackFloor: 1234 }), MEMORY_R3)).toEqual({ action: 'unchanged' });
  });

  it('tunes a durable of the setup in place', () => {
    expect(decideStatusDurable(durable({ ackWaitMs: 5000 }), MEMORY_R3)).toEqual({ action: 'update' });
    expect(decideStatusDurable(durable({ maxAckPending: 1000 }), MEMORY_R3)).toEqual({ action: 'update' });
    expect(decideStatusDurable(durable({ maxDeliver: 5 }), MEMORY_R3)).toEqual({ action: 'update' });
  });

  it('remakes a durable of another storage or replicas from after its ack floor', () => {
    expect(decideStatusDurable(durable({ memory: false, ackFloor: 900 }), MEMORY_R3)).toEqual({
      action: 'remake',
      drift: ['storage'],
      start: { from: 'sequence', sequence: 901 },
    });
    expect(decideStatusDurable(durable({ memory: false, replicas: 1, ackWaitMs: 1 }), MEMORY_R3)).toEqual({
      action: 'remake',
      drift: ['storage', 'replicas'],
      start: { from: 'all' },
    });
    expect(decideStatusDurable(durable({ ackFloor: 7 }), { memory: false, replicas: 3 })).toEqual({
      action: 'remake',
      drift: ['storage'],
      start: { from: 'sequence', sequence: 8 },
    });
  });
});

describe('startAfter', () => {
  it('starts after the floor, or from the start when nothing was acknowledged', () => {
    expect(startAfter(0)).toEqual({ from: 'all' });
    expect(startAfter(1)).toEqual({ from: 'sequence', sequence: 2 });
  });
});
