import { describe, expect, it } from 'vitest';
import { encodeMessage, type StatusMessage } from '@flotilla/api';
import { classifyMessage } from './status-classify.js';

const status: StatusMessage = {
  v: 1,
  cluster: 'a',
  kind: 'CloneSet',
  namespace: 'apps',
  name: 'web',
  workloadId: 'w',
  revision: 1,
  generation: 1,
  observedGeneration: 1,
  counts: { replicas: 1, readyReplicas: 1, updatedReplicas: 1, updatedReadyReplicas: 1, availableReplicas: 1 },
  health: 'Healthy',
  message: '',
  reportedAt: '2026-01-01T00:00:00Z',
};
const accepted = (c: string): boolean => c === 'a';
const storedAtMs = Date.parse('2026-01-01T00:00:00Z');
const classify = (subject: string, data: Uint8Array) =>
  classifyMessage({ subject, data, storedAtMs, streamSequence: 7 }, { isAccepted: accepted, clockSkewMs: 60_000 });
const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));

describe('classifyMessage', () => {
  it('accepts a status report about its own subject', () => {
    const c = classify('flotilla.status.a.CloneSet.apps.web', encodeMessage(status));
    expect(c.type).toBe('status');
    if (c.type === 'status') {
      expect(c.status).toMatchObject({ reportedAtMs: Date.parse(status.reportedAt), storedAtMs, streamSequence: 7 });
    }
  });

  it('accepts a reportedAt ahead of the stored time by at most the clock skew', () => {
    const skewed = { ...status, reportedAt: '2026-01-01T00:01:00Z' };
    expect(classify('flotilla.status.a.CloneSet.apps.web', encodeMessage(skewed)).type).toBe('status');
  });

  it.each([
    ['an unparseable subject', 'flotilla.status.a.nope', encodeMessage(status), 'subject'],
    ['broken JSON', 'flotilla.status.a.CloneSet.apps.web', new TextEncoder().encode('{'), 'json'],
    ['a schema violation', 'flotilla.status.a.CloneSet.apps.web', enc({ ...status, generation: -1 }), 'schema'],
    [
      'a payload naming another cluster',
      'flotilla.status.a.CloneSet.apps.web',
      enc({ ...status, cluster: 'b' }),
      'foreign',
    ],
    ['a payload naming another object', 'flotilla.status.a.CloneSet.apps.db', encodeMessage(status), 'foreign'],
    [
      'a cluster that is not accepted',
      'flotilla.status.b.CloneSet.apps.web',
      enc({ ...status, cluster: 'b' }),
      'unknown_cluster',
    ],
    ['a bad timestamp', 'flotilla.status.a.CloneSet.apps.web', enc({ ...status, reportedAt: 'yesterday' }), 'schema'],
    [
      'a reportedAt Postgres cannot store',
      'flotilla.status.a.CloneSet.apps.web',
      enc({ ...status, reportedAt: '0000-01-01T00:00:00Z' }),
      'schema',
    ],
    ['a NUL character', 'flotilla.status.a.CloneSet.apps.web', enc({ ...status, message: 'a\u0000b' }), 'schema'],
    ['a revision beyond int4', 'flotilla.status.a.CloneSet.apps.web', enc({ ...status, revision: 2 ** 31 }), 'schema'],
    ['a generation beyond 2^53', 'flotilla.status.a.CloneSet.apps.web', enc({ ...status, generation: 1e20 }), 'schema'],
    [
      'a count beyond int4',
      'flotilla.status.a.CloneSet.apps.web',
      enc({ ...status, counts: { ...status.counts, replicas: 2 ** 40 } }),
      'schema',
    ],
    [
      'a heartbeat with a NUL character',
      'flotilla.heartbeat.a',
      enc({ v: 1, cluster: 'a', agentVersion: '\u0000', kubernetesVersion: '', managedObjects: 0, sentAt: 'x' }),
      'schema',
    ],
    [
      'a reportedAt beyond the clock skew',
      'flotilla.status.a.CloneSet.apps.web',
      enc({ ...status, reportedAt: '2026-01-01T00:01:00.001Z' }),
      'future_reported_at',
    ],
    [
      'a reportedAt at the end of time',
      'flotilla.status.a.CloneSet.apps.web',
      enc({ ...status, reportedAt: '9999-12-31T23:59:59Z' }),
      'future_reported_at',
    ],
    [
      'a heartbeat for another cluster',
      'flotilla.heartbeat.a',
      enc({ v: 1, cluster: 'b', agentVersion: '', kubernetesVersion: '', managedObjects: 0, sentAt: 'x' }),
      'foreign',
    ],
  ])('drops %s', (_name, subject, data, reason) => {
    const c = classify(subject, data);
    expect(c).toMatchObject({ type: 'drop', reason });
  });

  it('stamps heartbeats with the stream time, not the agent clock', () => {
    const c = classify(
      'flotilla.heartbeat.a',
      enc({ v: 1, cluster: 'a', agentVersion: '1', kubernetesVersion: 'v1', managedObjects: 2, sentAt: '1999-01-01' }),
    );
    expect(c.type === 'heartbeat' && c.heartbeat.sentAtMs).toBe(storedAtMs);
  });
});
