/**
 * Fuzz target: the NATS receivers. One input is a message as it comes off a stream (a subject,
 * its bytes, when and where JetStream stored it) plus the receiver's context (the accepted
 * clusters, the agent's own cluster). Subjects are the protocol's with valid, hostile or random
 * tokens, or random strings; payloads are schema-shaped messages (aligned with the subject or
 * not), the same broken in places, any JSON, JSON-like text and random bytes.
 *
 * Properties:
 * - the hub's `classifyMessage` never throws, always answers status, heartbeat or drop (with a
 *   reason), answers the same twice, and accepts a status only when its payload is the subject's
 *   object of an accepted cluster with a believable `reportedAt`, a heartbeat only from an
 *   accepted cluster's own subject;
 * - the decoders never throw; what they accept passes the schema and survives encode → decode;
 * - the subject parsers never throw, and what they accept is what the builders write back;
 * - the agent's `validateDesired` never throws and accepts only its own cluster's objects.
 */
import fc from 'fast-check';
import {
  DesiredMessage,
  HeartbeatMessage,
  StatusMessage,
  decodeDesired,
  decodeHeartbeat,
  decodeStatus,
  desiredSubject,
  encodeMessage,
  heartbeatSubject,
  parseDesiredSubject,
  parseHeartbeatSubject,
  parseStatusSubject,
  statusSubject,
  type Decoder,
} from '@flotilla/api';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { validateDesired } from '../../../agent/src/hublink/desired-consumer.js';
import { classifyMessage } from '../../../hub/src/domain/status-classify.js';
import { thrown, type Findings, type Violation } from './lib/findings.js';
import { EDGE_NUMBERS, INTERESTING_STRINGS, hostileString } from './lib/hostile.js';
import { jsonEqual, stringify } from './lib/json.js';
import { mutated, shaped } from './lib/schema-arbitrary.js';

export interface NatsInput {
  subject: string;
  data: Uint8Array;
  storedAtMs: number;
  streamSequence: number;
  /** Clusters the hub has accepted. */
  accepted: string[];
  /** The agent's own cluster (for validateDesired). */
  own: string;
  clockSkewMs: number;
}

const CLUSTERS = ['c1', 'c2', 'constructor', 'a-b'];
const utf8 = new TextEncoder();

/** A subject token the way subjects.ts encodes names (dots become `_`, '' becomes `_`). */
const token = (s: string): string => (s === '' ? '_' : s.replaceAll('.', '_'));

const hostileToken: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...CLUSTERS, '_', '*', '>', '', 'CloneSet', 'Pod', 'a.b', 'A', '-a', 'a-'),
  hostileString,
);

/** Object names that are valid most of the time, so messages get past the subject checks. */
const NAME_HINTS = {
  namespace: fc.oneof(
    { arbitrary: fc.constantFrom('default', '', 'team-a', 'a.b'), weight: 6 },
    { arbitrary: hostileString, weight: 1 },
  ),
  name: fc.oneof(
    { arbitrary: fc.constantFrom('web', 'a.b', 'x'), weight: 3 },
    { arbitrary: fc.stringMatching(/^[a-z0-9]([-a-z0-9.]{0,30}[a-z0-9])?$/), weight: 3 },
    { arbitrary: hostileString, weight: 1 },
  ),
};

type Payload = Record<string, unknown>;
type Prefix = 'status' | 'heartbeat' | 'desired';

function subjectFor(prefix: Prefix, p: Payload): string {
  const s = (k: string): string => {
    const v = p[k];
    const scalar = typeof v === 'number' || typeof v === 'boolean' || v === undefined;
    return token(typeof v === 'string' ? v : scalar ? String(v) : 'x');
  };
  if (prefix === 'heartbeat') return `flotilla.heartbeat.${s('cluster')}`;
  return `flotilla.${prefix}.${s('cluster')}.${s('kind')}.${s('namespace')}.${s('name')}`;
}

/** A schema-shaped message whose cluster is one of the known ones most of the time. */
function message(schema: TSchema, prefix: Prefix): fc.Arbitrary<[Prefix, Payload]> {
  const base = shaped(schema, {
    maxDepth: 4,
    maxOptional: 2,
    maxItems: 2,
    hints: NAME_HINTS,
  }) as fc.Arbitrary<Payload>;
  const now = Date.now();
  const dated = fc
    .tuple(base, fc.constantFrom(...CLUSTERS), fc.integer({ min: -86_400_000, max: 600_000 }))
    .map(([m, cluster, offset]) => ({
      ...m,
      cluster,
      ...(prefix === 'status' ? { reportedAt: new Date(now + offset).toISOString() } : {}),
    }));
  return fc
    .oneof(
      { arbitrary: dated, weight: 3 },
      { arbitrary: base, weight: 1 },
      { arbitrary: mutated(dated) as fc.Arbitrary<Payload>, weight: 2 },
    )
    .map((m) => [prefix, m]);
}

const structured: fc.Arbitrary<{ subject: string; payload: unknown }> = fc
  .tuple(
    fc.oneof(
      message(StatusMessage, 'status'),
      message(HeartbeatMessage, 'heartbeat'),
      message(DesiredMessage, 'desired'),
    ),
    fc.oneof(
      { arbitrary: fc.constant<'aligned'>('aligned'), weight: 4 },
      { arbitrary: fc.constantFrom<Prefix>('status', 'heartbeat', 'desired'), weight: 1 },
    ),
    fc.oneof(
      { arbitrary: fc.constant([]), weight: 3 },
      { arbitrary: fc.array(fc.tuple(fc.nat(5), hostileToken), { minLength: 1, maxLength: 2 }), weight: 1 },
    ),
  )
  .map(([[prefix, payload], which, swaps]) => {
    const tokens = subjectFor(
      which === 'aligned' ? prefix : which,
      typeof payload === 'object' && payload ? payload : {},
    ).split('.');
    for (const [i, t] of swaps) tokens[Math.min(i + 2, tokens.length - 1)] = t;
    return { subject: tokens.join('.'), payload };
  });

/** Text that is almost JSON, or JSON a strict reader should refuse. */
const jsonishText: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.constantFrom(
    '',
    ' ',
    'null',
    '{',
    '{"v":1,"v":2}',
    '{"v":1e400}',
    '{"generation":9007199254740993}',
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '[{"v":1}]',
    '"\\ud800"',
    `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
  ),
  fc
    .tuple(structured, fc.constantFrom('\ufeff', ' ', '\n'), fc.constantFrom('', 'x', '}', '\u0000'))
    .map(([s, pre, post]) => `${pre}${stringify(s.payload)}${post}`),
);

const bytes: fc.Arbitrary<Uint8Array> = fc.oneof(
  { arbitrary: structured.map((s) => utf8.encode(stringify(s.payload))), weight: 6 },
  { arbitrary: jsonishText.map((t) => utf8.encode(t)), weight: 2 },
  { arbitrary: fc.uint8Array({ maxLength: 64 }), weight: 1 },
  { arbitrary: fc.constantFrom(new Uint8Array([0xff, 0xfe]), new Uint8Array([0xc3]), new Uint8Array(0)), weight: 1 },
);

const subject: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: structured.map((s) => s.subject), weight: 4 },
  { arbitrary: fc.constantFrom(...INTERESTING_STRINGS), weight: 1 },
  { arbitrary: fc.string({ maxLength: 60 }), weight: 1 },
);

export const natsInput: fc.Arbitrary<NatsInput> = fc
  .record({
    pair: fc.oneof(
      {
        arbitrary: structured.map((s) => ({ subject: s.subject, data: utf8.encode(stringify(s.payload)) })),
        weight: 4,
      },
      { arbitrary: fc.record({ subject, data: bytes }), weight: 3 },
    ),
    storedOffset: fc.oneof(fc.integer({ min: -60_000, max: 60_000 }), fc.constantFrom(...EDGE_NUMBERS)),
    streamSequence: fc.oneof(fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom(1, 2 ** 53 - 1)),
    accepted: fc.subarray(CLUSTERS),
    own: fc.constantFrom(...CLUSTERS),
    /** Half the time the agent is the cluster the subject names (its own messages). */
    ownFromSubject: fc.boolean(),
    clockSkewMs: fc.constantFrom(0, 60_000),
  })
  .map(({ pair, storedOffset, own, ownFromSubject, ...rest }) => ({
    ...pair,
    storedAtMs: Date.now() + storedOffset,
    own: ownFromSubject ? (pair.subject.split('.')[2] ?? own) : own,
    ...rest,
  }));

const checks = new Map<TSchema, ReturnType<typeof Compile>>();
function schemaCheck(schema: TSchema, value: unknown): boolean {
  if (!checks.has(schema)) checks.set(schema, Compile(schema));
  return checks.get(schema)!.Check(value);
}

function attempt<T>(where: string, fn: () => T, out: Violation[]): T | undefined {
  try {
    return fn();
  } catch (err) {
    out.push(thrown(where, err));
    return undefined;
  }
}

function checkClassify(m: NatsInput, out: Violation[], findings?: Findings): void {
  const accepted = new Set(m.accepted);
  const options = { isAccepted: (c: string) => accepted.has(c), clockSkewMs: m.clockSkewMs };
  const raw = { subject: m.subject, data: m.data, storedAtMs: m.storedAtMs, streamSequence: m.streamSequence };
  const c = attempt('classifyMessage', () => classifyMessage(raw, options), out);
  if (!c) return;
  const again = attempt('classifyMessage', () => classifyMessage(raw, options), out);
  if (again && !jsonEqual(again, c)) out.push({ kind: 'nondeterministic', where: 'classifyMessage', detail: '' });
  const wrong = (detail: string): void =>
    void out.push({ kind: 'wrong-class', where: `classifyMessage ${c.type}`, detail });
  if (c.type === 'drop') {
    findings?.count(`classify: drop ${c.reason}`);
    if (!c.reason || typeof c.detail !== 'string') wrong('a drop without reason');
  } else if (c.type === 'status') {
    findings?.count('classify: status');
    const key = parseStatusSubject(m.subject);
    const s = c.status.message;
    if (
      !key ||
      key.cluster !== s.cluster ||
      key.kind !== s.kind ||
      key.namespace !== s.namespace ||
      key.name !== s.name
    )
      wrong('payload is not the subject object');
    if (!accepted.has(s.cluster)) wrong('cluster not accepted');
    if (!decodeStatus(m.data).ok) wrong('undecodable payload');
    const at = Date.parse(s.reportedAt);
    if (!Number.isFinite(at) || at > m.storedAtMs + m.clockSkewMs) wrong(`reportedAt ${s.reportedAt}`);
  } else if (c.type === 'heartbeat') {
    findings?.count('classify: heartbeat');
    const cluster = parseHeartbeatSubject(m.subject);
    if (cluster === undefined || cluster !== c.heartbeat.message.cluster || !accepted.has(cluster))
      wrong('not an accepted cluster on its own subject');
  } else {
    out.push({ kind: 'unclassified', where: 'classifyMessage', detail: stringify(c) });
  }
}

const DECODERS: [string, Decoder<unknown>, TSchema][] = [
  ['decodeStatus', decodeStatus, StatusMessage],
  ['decodeHeartbeat', decodeHeartbeat, HeartbeatMessage],
  ['decodeDesired', decodeDesired, DesiredMessage],
];

function checkDecoders(m: NatsInput, out: Violation[]): void {
  for (const [name, decode, schema] of DECODERS) {
    const r = attempt(name, () => decode(m.data), out);
    if (!r?.ok) continue;
    if (!schemaCheck(schema, r.value))
      out.push({ kind: 'schema', where: name, detail: 'accepted a value outside the schema' });
    const back = attempt(`${name} (round trip)`, () => decode(encodeMessage(r.value as StatusMessage)), out);
    if (back && (!back.ok || !jsonEqual(back.value, r.value))) out.push({ kind: 'roundtrip', where: name, detail: '' });
  }
}

function checkSubjects(m: NatsInput, out: Violation[]): void {
  const parsers = [
    ['parseStatusSubject', parseStatusSubject, statusSubject],
    ['parseDesiredSubject', parseDesiredSubject, desiredSubject],
  ] as const;
  for (const [name, parse, build] of parsers) {
    const key = attempt(name, () => parse(m.subject), out);
    if (key && attempt(`${name} (rebuild)`, () => build(key.cluster, key), out) !== m.subject) {
      out.push({ kind: 'roundtrip', where: name, detail: `${m.subject} → ${stringify(key)}` });
    }
  }
  const cluster = attempt('parseHeartbeatSubject', () => parseHeartbeatSubject(m.subject), out);
  if (cluster !== undefined && attempt('heartbeatSubject', () => heartbeatSubject(cluster), out) !== m.subject) {
    out.push({ kind: 'roundtrip', where: 'parseHeartbeatSubject', detail: m.subject });
  }
}

function checkAgent(m: NatsInput, out: Violation[], findings?: Findings): void {
  const v = attempt('validateDesired', () => validateDesired({ subject: m.subject, data: m.data }, m.own), out);
  if (!v) return;
  findings?.count(`agent: ${v.ok ? 'accepted' : `drop ${v.reason}`}`);
  if (!v.ok) return;
  const key = parseDesiredSubject(m.subject);
  const ok =
    key?.cluster === m.own &&
    v.msg.cluster === m.own &&
    v.ref.kind === key.kind &&
    v.ref.namespace === key.namespace &&
    v.ref.name === key.name;
  if (!ok)
    out.push({
      kind: 'wrong-class',
      where: 'validateDesired',
      detail: 'accepted a message of another cluster or object',
    });
}

/** Checks one input; returns the properties it broke. */
export function checkNats(m: NatsInput, findings?: Findings): Violation[] {
  const out: Violation[] = [];
  checkClassify(m, out, findings);
  checkDecoders(m, out);
  checkSubjects(m, out);
  checkAgent(m, out, findings);
  return out;
}
