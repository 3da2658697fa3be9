/**
 * The seeded CI subsets of the pure fuzz targets (the full runs: `npm run bench:fuzz`), and the
 * fuzzer's own pieces: schema-shaped values must be valid for their schema, the iterative JSON
 * helpers must agree with JSON.stringify where it works.
 */
import fc from 'fast-check';
import { DesiredMessage, HeartbeatMessage, RolloutStrategySchema, StatusMessage } from '@flotilla/api';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { describe, expect, it } from 'vitest';
import { nested } from './lib/hostile.js';
import { clone, jsonEqual, stringify } from './lib/json.js';
import { applyEdits, edit, shaped, type JsonSchema } from './lib/schema-arbitrary.js';
import { checkMergePatch, mergePatchInput } from './merge-patch.js';
import { checkNats, natsInput } from './nats.js';

const SEED = 20261127;
// CPU-bound property runs: the default 5 s is too short on two busy cores; this guards a hang only.
const PROPERTY_TIMEOUT_MS = 120_000;

describe('fuzz subsets (fixed seed)', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it('merge-patch / override path: 300 inputs break no property', () => {
    fc.assert(
      fc.property(mergePatchInput, (input) => {
        expect(checkMergePatch(input)).toEqual([]);
      }),
      { numRuns: 300, seed: SEED },
    );
  });

  it('NATS receivers: 1,000 inputs break no property', () => {
    fc.assert(
      fc.property(natsInput, (input) => {
        expect(checkNats(input)).toEqual([]);
      }),
      { numRuns: 1000, seed: SEED },
    );
  });
});

describe('the fuzzer itself', { timeout: PROPERTY_TIMEOUT_MS }, () => {
  it.each([
    ['StatusMessage', StatusMessage],
    ['HeartbeatMessage', HeartbeatMessage],
    ['DesiredMessage', DesiredMessage],
    ['RolloutStrategy', RolloutStrategySchema],
  ] as [string, TSchema][])('shaped values of %s pass its schema', (_name, schema) => {
    const check = Compile(schema);
    fc.assert(
      fc.property(shaped(schema as JsonSchema), (v) => {
        expect(check.Check(v)).toBe(true);
      }),
      { numRuns: 200, seed: SEED },
    );
  });

  it('stringify and clone agree with JSON and deep equality, also past V8 recursion limits', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(stringify(v)).toBe(JSON.stringify(v));
        expect(jsonEqual(clone(v), v)).toBe(true);
      }),
      { numRuns: 300, seed: SEED },
    );
    const deep = nested(50_000, false);
    expect(JSON.parse(stringify(deep))).toBeTypeOf('object');
    expect(jsonEqual(clone(deep), deep)).toBe(true);
  });

  it('edits never change a value a generator hands out again (shared [] and {})', () => {
    const shared = {};
    applyEdits({ a: 1 }, [
      { op: 'replace', at: 1, value: shared },
      { op: 'extra', at: 1, key: 'k', value: shared },
    ]);
    expect(shared).toEqual({});
  });

  it('edits change a copy, never the value they start from', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.array(edit, { minLength: 1, maxLength: 3 }), (v, edits) => {
        const before = stringify(v);
        applyEdits(v, edits);
        expect(stringify(v)).toBe(before);
      }),
      { numRuns: 300, seed: SEED },
    );
  });
});
