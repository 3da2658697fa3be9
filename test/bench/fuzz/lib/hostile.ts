/**
 * Values that break parsers, validators and object code: a dictionary of strings that mean
 * something to JavaScript, URLs, NATS subjects, SQL or terminals, numbers at the edges of every
 * integer type, and JSON that is deep, wide or long. Schema-driven arbitraries mix these in.
 */
import fc from 'fast-check';

/** Keys that name parts of Object.prototype (a plain-object lookup finds them without an own key). */
export const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  '__defineGetter__',
] as const;

/** Strings that mean something somewhere. Valid DNS labels among them reach deep code paths. */
export const INTERESTING_STRINGS: readonly string[] = [
  ...PROTOTYPE_KEYS,
  '',
  ' ',
  '0',
  '-1',
  '01',
  '1e309',
  'NaN',
  'Infinity',
  'null',
  'true',
  'undefined',
  '[]',
  '{}',
  '%',
  '%00',
  '%zz',
  '%2e%2e',
  '%2F',
  '../',
  '..',
  '.',
  '/',
  '?',
  '#',
  '&',
  '*',
  '>',
  'a.b',
  'a b',
  'a_b',
  '\u0000',
  '\n',
  '\r\n',
  '\t',
  '\\',
  '"',
  "'",
  '<script>alert(1)</script>',
  "'; drop table clusters; --",
  '${7*7}',
  '\u202e',
  '\ufeff',
  '😀',
  '\ud800',
  'é',
  'Ａ',
  'default',
  'kube-system',
  'web',
  'c1',
  'a',
  'z'.repeat(63),
  'z'.repeat(64),
  'z'.repeat(253),
  'z'.repeat(254),
  'z'.repeat(318),
  'flotilla.desired.>',
  'flotilla.status.c1.CloneSet.default.web',
  '$JS.API.CONSUMER.DURABLE.CREATE.DESIRED.agent-c1',
  '_INBOX.x',
  'agent-c1',
  'CloneSet',
  'SidecarSet',
  'ImagePullJob',
  'NodeImage',
  '2026-11-27T00:00:00Z',
  '9999-12-31T23:59:59Z',
  '0000-00-00',
];

/** Integers and floats at type edges: int32, 2^53, JSON's limits. */
export const EDGE_NUMBERS: readonly number[] = [
  0,
  -0,
  1,
  -1,
  0.5,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  2 ** 32,
  2 ** 53 - 1,
  2 ** 53 + 2,
  -(2 ** 53) - 2,
  9007199254740000,
  1e20,
  1e308,
  -1e308,
  5e-324,
];

/** Builds nesting without recursion, so the generator itself never runs out of stack. */
export function nested(depth: number, array: boolean, leaf: unknown = 1): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = array ? [v] : { a: v };
  return v;
}

/** An object whose own key is `__proto__` (as JSON.parse makes it), not a prototype change. */
export function ownProtoKey(value: unknown): Record<string, unknown> {
  return JSON.parse(`{"__proto__": ${JSON.stringify(value)}, "polluted": true}`) as Record<string, unknown>;
}

/** A string from the dictionary, random text (unicode included) or a long run of one letter. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...INTERESTING_STRINGS), weight: 4 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ maxLength: 20 }), weight: 2 },
  { arbitrary: fc.constantFrom(1025, 4097, 70_000).map((n) => 'x'.repeat(n)), weight: 1 },
);

/** Deep, wide or long JSON; sizes chosen around the hub's limits (1 MiB bodies). */
export const bulkyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.tuple(fc.constantFrom(33, 101, 1000, 10_000), fc.boolean()).map(([d, array]) => nested(d, array)),
  fc.constantFrom(100, 3000).map((n) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]))),
  fc.constantFrom(1000, 50_000).map((n) => Array.from({ length: n }, (_, i) => i)),
);

/** Any hostile JSON value: wrong types for whatever field it lands in. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom<unknown>(null, true, false, [], {}, ...EDGE_NUMBERS), weight: 4 },
  { arbitrary: hostileString, weight: 4 },
  { arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }), weight: 1 },
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 2 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }).map(ownProtoKey), weight: 1 },
  { arbitrary: bulkyJson, weight: 1 },
);
