import { decodeDesired } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { desiredChangeMessages, republishMessage, type StoredDesiredRow } from './desired-message.js';

const identity = {
  id: '3f0b5c9e-2a7d-4c1e-9b8a-6d5e4f3a2b1c',
  kind: 'CloneSet' as const,
  namespace: 'apps',
  name: 'web',
};
const at = new Date('2026-11-27T12:00:00.000Z');
const manifest = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'web' }, spec: {} };

describe('desiredChangeMessages', () => {
  it('addresses each change to its cluster, with the generation in the msgID', () => {
    const messages = desiredChangeMessages(
      identity,
      [
        { cluster: 'c1', generation: 3, revision: 2, deleted: false, manifest, manifestHash: 'h' },
        { cluster: 'c2', generation: 1, revision: 2, deleted: true, manifest: null, manifestHash: 't' },
      ],
      at,
    );
    expect(messages.map((m) => [m.subject, m.msgId])).toEqual([
      ['flotilla.desired.c1.CloneSet.apps.web', 'flotilla.desired.c1.CloneSet.apps.web@3'],
      ['flotilla.desired.c2.CloneSet.apps.web', 'flotilla.desired.c2.CloneSet.apps.web@1'],
    ]);
    const tombstone = decodeDesired(new TextEncoder().encode(messages[1]!.payload));
    expect(tombstone.ok && tombstone.value).toMatchObject({ cluster: 'c2', deleted: true, generation: 1 });
    expect(tombstone.ok && tombstone.value.manifest).toBeUndefined();
  });
});

describe('republishMessage', () => {
  const row: StoredDesiredRow = {
    clusterName: 'c1',
    kind: 'CloneSet',
    namespace: 'apps',
    name: 'web',
    workloadId: identity.id,
    revision: 2,
    generation: 7,
    deleted: false,
    manifest,
  };

  it('publishes the stored value again under a msgID naming why', () => {
    const m = republishMessage(row, 'link-abc', at);
    expect(m.subject).toBe('flotilla.desired.c1.CloneSet.apps.web');
    expect(m.msgId).toBe('flotilla.desired.c1.CloneSet.apps.web@7@link-abc');
    const decoded = decodeDesired(new TextEncoder().encode(m.payload));
    expect(decoded.ok && decoded.value).toMatchObject({
      generation: 7,
      revision: 2,
      manifest,
      publishedAt: at.toISOString(),
    });
  });

  it('never sends a manifest with a tombstone', () => {
    const m = republishMessage({ ...row, deleted: true }, 'repair-12', at);
    const decoded = decodeDesired(new TextEncoder().encode(m.payload));
    expect(decoded.ok && decoded.value.manifest).toBeUndefined();
  });
});
