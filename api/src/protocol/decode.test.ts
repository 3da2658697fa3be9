import { describe, expect, it } from 'vitest';
import { MAX_MESSAGE_DEPTH, decodeDesired, decodeStatus, encodeMessage } from './decode.js';
import { PROTOCOL_VERSION, type StatusMessage } from './messages.js';
import { isNewerStatus } from './status-order.js';

const status: StatusMessage = {
  v: PROTOCOL_VERSION,
  cluster: 'c1',
  kind: 'CloneSet',
  namespace: 'apps',
  name: 'web',
  workloadId: 'w',
  revision: 2,
  generation: 3,
  observedGeneration: 4,
  counts: { replicas: 1, readyReplicas: 1, updatedReplicas: 1, updatedReadyReplicas: 1, availableReplicas: 1 },
  health: 'Healthy',
  message: '',
  reportedAt: '2026-01-01T00:00:00Z',
};

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('message decoding', () => {
  it('round-trips a valid message', () => {
    expect(decodeStatus(encodeMessage(status))).toEqual({ ok: true, value: status });
  });

  it.each([
    ['not JSON', bytes('{nope'), 'json'],
    ['invalid UTF-8', new Uint8Array([0xff, 0xfe]), 'json'],
    ['a JSON string', bytes('"x"'), 'schema'],
    ['an unknown version', encodeMessage({ ...status, v: 2 as 1 }), 'schema'],
    ['an extra field', bytes(JSON.stringify({ ...status, extra: 1 })), 'schema'],
    ['a negative count', bytes(JSON.stringify({ ...status, counts: { ...status.counts, replicas: -1 } })), 'schema'],
    ['an unknown health', bytes(JSON.stringify({ ...status, health: 'Fine' })), 'schema'],
  ])('drops %s without throwing', (_name, data, reason) => {
    const r = decodeStatus(data);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toBe(reason);
  });

  it('drops a message nested deeper than it could be re-encoded or applied', () => {
    const msg = {
      v: 1,
      cluster: 'c1',
      kind: 'CloneSet',
      namespace: 'a',
      name: 'b',
      workloadId: 'w',
      revision: 1,
      generation: 1,
      deleted: false,
      publishedAt: 'now',
    };
    // Built as text: JSON.stringify itself cannot write a value this deep.
    const deep = `${JSON.stringify(msg).slice(0, -1)},"manifest":${'{"a":'.repeat(10_000)}{}${'}'.repeat(10_000)}}`;
    expect(decodeDesired(bytes(deep))).toEqual({
      ok: false,
      reason: 'schema',
      detail: `nested deeper than ${MAX_MESSAGE_DEPTH} levels`,
    });
    expect(decodeDesired(bytes(JSON.stringify({ ...msg, manifest: { spec: { a: { b: [1] } } } }))).ok).toBe(true);
  });

  it('rejects a desired message of an unknown kind', () => {
    const msg = {
      v: 1,
      cluster: 'c1',
      kind: 'Deployment',
      namespace: 'a',
      name: 'b',
      workloadId: 'w',
      revision: 1,
      generation: 1,
      deleted: false,
      publishedAt: 'now',
    };
    expect(decodeDesired(bytes(JSON.stringify(msg))).ok).toBe(false);
    expect(decodeDesired(bytes(JSON.stringify({ ...msg, kind: 'CloneSet' }))).ok).toBe(true);
  });
});

describe('status order', () => {
  const k = (generation: number, storedAtMs: number, streamSequence: number) => ({
    generation,
    storedAtMs,
    streamSequence,
  });
  it.each([
    ['nothing stored yet', undefined, k(1, 1, 1), true],
    ['newer generation', k(1, 9, 9), k(2, 0, 0), true],
    ['older generation', k(2, 0, 0), k(1, 9, 9), false],
    ['same generation, stored later', k(2, 1, 9), k(2, 2, 0), true],
    ['same generation, stored earlier', k(2, 2, 0), k(2, 1, 9), false],
    ['same instant, later in the stream', k(2, 2, 1), k(2, 2, 2), true],
    ['identical (redelivery)', k(2, 2, 2), k(2, 2, 2), false],
  ])('%s', (_name, prev, next, expected) => {
    expect(isNewerStatus(prev, next)).toBe(expected);
  });
});
