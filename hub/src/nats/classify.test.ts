import { describe, expect, it } from 'vitest';
import { encodeMessage, type StatusMessage } from '@flotilla/api';
import { classifyMessage } from './classify.js';

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
const classify = (subject: string, data: Uint8Array) => classifyMessage({ subject, data, storedAtMs: 1000 }, accepted);
const enc = (v: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(v));

describe('classifyMessage', () => {
  it('accepts a status report about its own subject', () => {
    const c = classify('flotilla.status.a.CloneSet.apps.web', encodeMessage(status));
    expect(c.type).toBe('status');
    if (c.type === 'status') expect(c.status.reportedAtMs).toBe(Date.parse(status.reportedAt));
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
    expect(c.type === 'heartbeat' && c.heartbeat.sentAtMs).toBe(1000);
  });
});
