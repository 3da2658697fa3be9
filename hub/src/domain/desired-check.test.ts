import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSION, type DesiredMessage } from '@flotilla/api';
import { contentHash } from './canonical-json.js';
import { checkDesired, desiredKey, type StoredDesired } from './desired-check.js';
import { TOMBSTONE_HASH } from './desired-plan.js';

const SUBJECT = 'flotilla.desired.b.CloneSet.apps.web';
const WORKLOAD = '7d1f0c44-3f2c-4d55-9f7e-0d9b2f1b3a10';
const manifest = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', spec: { replicas: 2 } };

const live: StoredDesired = {
  workloadId: WORKLOAD,
  revision: 3,
  generation: 5,
  deleted: false,
  manifestHash: contentHash(manifest),
};
const tombstone: StoredDesired = { ...live, generation: 6, deleted: true, manifestHash: TOMBSTONE_HASH };

function message(change: Partial<DesiredMessage> = {}): DesiredMessage {
  return {
    v: PROTOCOL_VERSION,
    cluster: 'b',
    kind: 'CloneSet',
    namespace: 'apps',
    name: 'web',
    workloadId: WORKLOAD,
    revision: 3,
    generation: 5,
    deleted: false,
    manifest,
    publishedAt: '2026-11-27T10:00:00.000Z',
    ...change,
  };
}

const bytes = (value: unknown): Uint8Array => new TextEncoder().encode(JSON.stringify(value));
const rows = (row: StoredDesired | undefined) => (key: string) => (key === SUBJECT ? row : undefined);

describe('checkDesired', () => {
  it.each<[string, Uint8Array, StoredDesired | undefined, string, string | undefined]>([
    ['what the hub published', bytes(message()), live, 'keep', undefined],
    [
      'the same with keys in another order',
      bytes({
        ...message(),
        manifest: { spec: { replicas: 2 }, kind: 'CloneSet', apiVersion: 'apps.kruise.io/v1alpha1' },
      }),
      live,
      'keep',
      undefined,
    ],
    ['an older generation the relay is about to replace', bytes(message({ generation: 4 })), live, 'keep', undefined],
    [
      'a tombstone as stored',
      bytes(message({ generation: 6, deleted: true, manifest: undefined })),
      tombstone,
      'keep',
      undefined,
    ],
    [
      'a JetStream API answer (the reply-subject clobber)',
      bytes({ type: 'io.nats.jetstream.api.v1.consumer_info_response', name: 'agent-a' }),
      live,
      'republish',
      'invalid',
    ],
    ['not JSON', new TextEncoder().encode('{not json'), live, 'republish', 'invalid'],
    ['empty', new Uint8Array(), live, 'republish', 'invalid'],
    ["another object's message", bytes(message({ name: 'api' })), live, 'republish', 'mismatch'],
    ["another cluster's message", bytes(message({ cluster: 'a' })), live, 'republish', 'mismatch'],
    [
      'a generation the hub never reached',
      bytes(message({ generation: 9_007_199_254_740 })),
      live,
      'republish',
      'mismatch',
    ],
    [
      'other content under the stored generation',
      bytes(message({ manifest: { ...manifest, spec: { replicas: 9 } } })),
      live,
      'republish',
      'mismatch',
    ],
    ['another workload', bytes(message({ workloadId: 'other' })), live, 'republish', 'mismatch'],
    ['another revision', bytes(message({ revision: 2 })), live, 'republish', 'mismatch'],
    [
      'a tombstone where the object is live',
      bytes(message({ deleted: true, manifest: undefined })),
      live,
      'republish',
      'mismatch',
    ],
    [
      'a manifest where the object is deleted',
      bytes(message({ generation: 6, deleted: true })),
      tombstone,
      'republish',
      'mismatch',
    ],
    [
      'a live message where the object is deleted',
      bytes(message({ generation: 6 })),
      tombstone,
      'republish',
      'mismatch',
    ],
    ['an object the hub never placed', bytes(message()), undefined, 'delete', 'unknown'],
  ])('%s', (_step, data, row, action, reason) => {
    const verdict = checkDesired(SUBJECT, data, rows(row));
    expect(verdict.action).toBe(action);
    expect('reason' in verdict ? verdict.reason : undefined).toBe(reason);
  });

  it.each(['flotilla.desired.b.junk', 'flotilla.desired.b', 'flotilla.desired.B.CloneSet.apps.web'])(
    'deletes what sits on a subject outside the grammar: %s',
    (subject) => {
      expect(checkDesired(subject, bytes(message()), () => live)).toEqual({ action: 'delete', reason: 'unknown' });
    },
  );

  it('names the object to republish, keyed as the stored rows are', () => {
    const verdict = checkDesired(SUBJECT, new Uint8Array(), rows(live));
    expect(verdict).toMatchObject({
      action: 'republish',
      key: { cluster: 'b', kind: 'CloneSet', namespace: 'apps', name: 'web' },
    });
    if (verdict.action === 'republish') expect(desiredKey(verdict.key)).toBe(SUBJECT);
  });
});
