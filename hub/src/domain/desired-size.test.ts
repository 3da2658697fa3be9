import { MsgHdrsImpl } from '@nats-io/transport-node';
import { desiredSubject } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { desiredMessage } from './desired-message.js';
import { desiredMessageBytes, desiredSizeProblems } from './desired-size.js';
import { renderManifest } from './manifest.js';

const web = { kind: 'CloneSet' as const, namespace: 'apps', name: 'web' };
const content = (spec: Record<string, unknown>, overrides: Record<string, Record<string, unknown>> = {}) => ({
  metadata: {},
  spec,
  overrides,
});
/** A spec of about `n` bytes of JSON. */
const specOf = (n: number, char = 'a'): Record<string, unknown> => ({ replicas: 1, blob: char.repeat(n) });

/** What the relay really sends for one object in one cluster: payload and headers. */
function wireBytes(
  workload: typeof web,
  c: ReturnType<typeof content>,
  o: { cluster: string; generation: number; revision: number; tag: string; partition?: string },
): number {
  const identity = { ...workload, id: '3f0b5c9e-2a7d-4c1e-9b8a-6d5e4f3a2b1c' };
  let manifest = renderManifest(identity, { ...c, revision: o.revision }, o.cluster);
  if (o.partition) {
    manifest = { ...manifest, spec: { ...(manifest.spec as object), updateStrategy: { partition: o.partition } } };
  }
  const payload = JSON.stringify(
    desiredMessage(
      identity,
      { cluster: o.cluster, generation: o.generation, revision: o.revision, deleted: false, manifest },
      new Date(),
    ),
  );
  const h = new MsgHdrsImpl();
  h.set('Nats-Msg-Id', `${desiredSubject(o.cluster, workload)}@${o.generation}${o.tag}`);
  h.set('Nats-Expected-Stream', 'DESIRED');
  return Buffer.byteLength(payload) + h.encode().length;
}

describe('desiredMessageBytes', () => {
  it('is never below what the relay sends, with the widest names, numbers and tags', () => {
    const widest = { kind: 'CloneSet' as const, namespace: 'n'.repeat(63), name: 'x'.repeat(253) };
    const c = content(specOf(5000));
    const sent = wireBytes(widest, c, {
      cluster: 'c'.repeat(63),
      generation: Number.MAX_SAFE_INTEGER,
      revision: 2_147_483_647,
      tag: `@link-${'l'.repeat(64)}`,
      partition: '100%',
    });
    const bound = desiredMessageBytes(widest, c, 'c'.repeat(63));
    expect(bound).toBeGreaterThanOrEqual(sent);
    // ...and not far above it: the allowance is for headers and a partition, not slack.
    expect(bound - sent).toBeLessThan(1024);
  });

  it('is not below a typical message either', () => {
    const c = content(specOf(100));
    const sent = wireBytes(web, c, { cluster: 'eu-1', generation: 3, revision: 2, tag: '@repair-123456' });
    expect(desiredMessageBytes(web, c, 'eu-1')).toBeGreaterThanOrEqual(sent);
  });

  it('counts UTF-8 bytes, not characters', () => {
    const ascii = desiredMessageBytes(web, content(specOf(1000, 'a')), 'c1');
    const accented = desiredMessageBytes(web, content(specOf(1000, 'é')), 'c1');
    expect(accented - ascii).toBe(1000);
  });
});

describe('desiredSizeProblems', () => {
  const limit = 20_000;

  it('finds nothing while every message fits', () => {
    expect(desiredSizeProblems(web, content(specOf(10_000), { c1: { replicas: 3 } }), limit)).toEqual([]);
  });

  it('names the spec and the sizes when the template is too large for any cluster', () => {
    const problems = desiredSizeProblems(web, content(specOf(30_000)), limit);
    expect(problems).toEqual([{ path: 'spec', message: expect.stringMatching(/^Too large: .* up to \d+ bytes/) }]);
    expect(problems[0]!.message).toContain(`at most ${limit} can be published`);
  });

  it('names the metadata when that is what makes the message large', () => {
    const c = { ...content(specOf(10)), metadata: { annotations: { note: 'm'.repeat(30_000) } } };
    expect(desiredSizeProblems(web, c, limit).map((p) => p.path)).toEqual(['metadata']);
  });

  it('names the one override that grows its cluster beyond the limit', () => {
    const c = content(specOf(10_000), { small: { replicas: 3 }, big: { extra: 'b'.repeat(15_000) } });
    expect(desiredSizeProblems(web, c, limit).map((p) => p.path)).toEqual(['overrides.big']);
  });

  it('lets an override shrink a message the template alone would make too large', () => {
    const c = content(specOf(30_000), { trimmed: { blob: null } });
    expect(desiredSizeProblems(web, c, limit).map((p) => p.path)).toEqual(['spec']);
  });
});
