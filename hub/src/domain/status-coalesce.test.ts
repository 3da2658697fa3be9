import { describe, expect, it } from 'vitest';
import type { HeartbeatMessage, StatusMessage } from '@flotilla/api';
import { coalesceHeartbeats, isoMicros, coalesceStatus } from './status-coalesce.js';

const report = (name: string, generation: number, storedAtMs: number, seq: number, ready = 0) => ({
  reportedAtMs: 0,
  storedAtMs,
  streamSequence: seq,
  message: {
    v: 1,
    cluster: 'c1',
    kind: 'CloneSet',
    namespace: 'apps',
    name,
    workloadId: 'w',
    revision: 1,
    generation,
    observedGeneration: 1,
    counts: { replicas: 3, readyReplicas: ready, updatedReplicas: 0, updatedReadyReplicas: 0, availableReplicas: 0 },
    health: 'Progressing',
    message: '',
    reportedAt: '9999-12-31T00:00:00Z',
  } satisfies StatusMessage,
});

describe('coalesceStatus', () => {
  it('keeps the newest report per object, whatever the arrival order', () => {
    const out = coalesceStatus([
      report('web', 2, 30, 7, 1),
      report('web', 3, 10, 2, 2), // newer generation wins despite an earlier stored time
      report('db', 1, 5, 1, 1),
      report('web', 3, 20, 5, 3), // same generation, stored later: wins
      report('db', 1, 5, 0, 9), // same instant, earlier in the stream: loses
    ]);
    expect(out.map((r) => [r.message.name, r.message.generation, r.message.counts.readyReplicas])).toEqual([
      ['web', 3, 3],
      ['db', 1, 1],
    ]);
  });

  it('never orders by what the agent chose (reportedAt, observedGeneration)', () => {
    const forged = { ...report('web', 1, 10, 1, 0), reportedAtMs: Date.parse('9999-12-31T00:00:00Z') };
    forged.message = { ...forged.message, observedGeneration: 9007199254740000 };
    const real = report('web', 1, 11, 2, 3);
    expect(coalesceStatus([forged, real]).map((r) => r.message.counts.readyReplicas)).toEqual([3]);
  });
});

describe('coalesceHeartbeats', () => {
  it('keeps the latest heartbeat per cluster', () => {
    const beat = (cluster: string, at: number, agentVersion: string) => ({
      sentAtMs: at,
      message: {
        v: 1,
        cluster,
        agentVersion,
        kubernetesVersion: 'v1.36.3',
        managedObjects: 0,
        sentAt: '',
      } satisfies HeartbeatMessage,
    });
    const out = coalesceHeartbeats([beat('a', 2, 'new'), beat('a', 1, 'old'), beat('b', 1, 'b')]);
    expect(out.map((b) => [b.message.cluster, b.message.agentVersion])).toEqual([
      ['a', 'new'],
      ['b', 'b'],
    ]);
    // Stored in the same instant: the later one in stream order wins.
    const tie = coalesceHeartbeats([beat('a', 5, 'first'), beat('a', 5, 'second')]);
    expect(tie.map((b) => b.message.agentVersion)).toEqual(['second']);
  });
});

describe('isoMicros', () => {
  it('keeps the microseconds a Date drops', () => {
    const ms = Date.UTC(2026, 10, 22, 20, 30, 1, 123) + 0.4567;
    expect(isoMicros(ms)).toBe('2026-11-22T20:30:01.123456Z');
    expect(isoMicros(Date.UTC(2026, 0, 1))).toBe('2026-01-01T00:00:00.000000Z');
    expect(isoMicros(ms) > isoMicros(ms - 0.2)).toBe(true);
  });
});
