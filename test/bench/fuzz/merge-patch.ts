/**
 * Fuzz target: the merge-patch / override path. One input is a target document, a patch and a
 * map of per-cluster overrides; each is checked through every function that turns a template
 * and its overrides into what a cluster gets:
 *
 * - `applyMergePatch`: never throws (except the documented HUB_ERR_INVALID), leaves its inputs
 *   alone, gives what RFC 7396's pseudo-code gives, is idempotent, returns plain JSON whose
 *   prototype a `__proto__` key cannot change, and a patch computed between two documents turns
 *   the first into the second (for documents without nulls, which a merge patch cannot express);
 * - `specForCluster` / `renderManifest`: a cluster with an override gets the merged spec, any
 *   other cluster name (`constructor` included) gets the template unchanged;
 * - `assertValidTemplate` (the REST API's check of spec and overrides): answers or throws the
 *   HUB_ERR_INVALID HubError with field paths, nothing else.
 *
 * After each input Object.prototype must be as before (no prototype pollution).
 */
import fc from 'fast-check';
import { applyMergePatch } from '../../../hub/src/domain/merge-patch.js';
import { kruiseSpecValidator } from '../../../hub/src/domain/spec-validator.js';
import { HubError } from '../../../hub/src/errors.js';
import { renderManifest, specForCluster } from '../../../hub/src/domain/manifest.js';
import { assertValidTemplate } from '../../../hub/src/services/workload-validation.js';
import { corpusObject, type CorpusObject } from './lib/corpus.js';
import { thrown, type Findings, type Violation } from './lib/findings.js';
import { INTERESTING_STRINGS, PROTOTYPE_KEYS, hostileValue, ownProtoKey } from './lib/hostile.js';
import { depthOf, isPlainJson, jsonEqual, stringify } from './lib/json.js';
import { applyEdits, edit } from './lib/schema-arbitrary.js';

export interface MergePatchInput {
  target: unknown;
  patch: unknown;
  /** A template from the Kruise corpus, possibly broken in places. */
  template: CorpusObject;
  /** Per-cluster merge patches of the template's spec. */
  overrides: Record<string, Record<string, unknown>>;
  /** A cluster the overrides name, and one they may not. */
  cluster: string;
  other: string;
}

/** Below this depth the recursive oracles run; deeper inputs are checked for throws and pollution. */
const ORACLE_DEPTH = 200;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function own(entries: readonly (readonly [string, unknown])[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries)
    Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}

/** RFC 7396 section 2, as written (own keys only: a missing member is undefined). */
export function referenceMergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return patch;
  const result: Record<string, unknown> = isObj(target) ? own(Object.entries(target)) : {};
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) delete result[name];
    else {
      const current = Object.hasOwn(result, name) ? result[name] : undefined;
      Object.defineProperty(result, name, {
        value: referenceMergePatch(current, value),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
  }
  return result;
}

/** Object members whose value is null removed (a merge patch cannot set a member to null). */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withoutNulls);
  if (!isObj(v)) return v;
  return own(Object.entries(v).flatMap(([k, x]) => (x === null ? [] : [[k, withoutNulls(x)] as const])));
}

/** The merge patch that turns `a` into `b` (both without null members). */
export function diffPatch(a: unknown, b: unknown): unknown {
  if (!isObj(a) || !isObj(b)) return b;
  const entries: [string, unknown][] = Object.keys(a)
    .filter((k) => !Object.hasOwn(b, k))
    .map((k) => [k, null]);
  for (const [k, v] of Object.entries(b)) {
    if (!Object.hasOwn(a, k)) entries.push([k, v]);
    else if (!jsonEqual(a[k], v)) entries.push([k, isObj(a[k]) && isObj(v) ? diffPatch(a[k], v) : v]);
  }
  return own(entries);
}

const json: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 4 }), weight: 3 },
  { arbitrary: fc.dictionary(fc.constantFrom(...INTERESTING_STRINGS), fc.jsonValue({ maxDepth: 3 })), weight: 2 },
  { arbitrary: corpusObject.map((o) => o.spec), weight: 2 },
  { arbitrary: hostileValue, weight: 2 },
  { arbitrary: fc.jsonValue({ maxDepth: 2 }).map(ownProtoKey), weight: 1 },
);

/** A patch that shares most of its keys with the target: the target changed in a few places. */
const targetAndPatch: fc.Arbitrary<[unknown, unknown]> = fc.oneof(
  fc.tuple(json, json),
  fc
    .tuple(json, fc.array(edit, { minLength: 1, maxLength: 4 }))
    .map(([t, e]): [unknown, unknown] => [t, applyEdits(t, e)]),
);

const clusterName = fc.oneof(
  fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,10}[a-z0-9])?$/),
  fc.constantFrom(...PROTOTYPE_KEYS, ...INTERESTING_STRINGS),
);

const overridePatch: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({ replicas: hostileValue }, { requiredKeys: [] }),
  fc.dictionary(
    fc.constantFrom('replicas', 'selector', 'template', 'updateStrategy', 'image', ...PROTOTYPE_KEYS),
    hostileValue,
    {
      maxKeys: 3,
    },
  ),
  corpusObject
    .chain((o) => fc.array(edit, { minLength: 1, maxLength: 3 }).map((e) => applyEdits(o.spec, e)))
    .filter(isObj),
);

export const mergePatchInput: fc.Arbitrary<MergePatchInput> = fc
  .record({
    tp: targetAndPatch,
    template: fc.oneof(
      corpusObject,
      fc.tuple(corpusObject, fc.array(edit, { minLength: 1, maxLength: 2 })).map(([o, e]) => ({
        ...o,
        spec: applyEdits(o.spec, e) as Record<string, unknown>,
      })),
    ),
    overrideList: fc.array(fc.tuple(clusterName, overridePatch), { maxLength: 3 }),
    cluster: clusterName,
    other: clusterName,
  })
  .map(({ tp, template, overrideList, cluster, other }) => ({
    target: tp[0],
    patch: tp[1],
    template,
    overrides: own([...overrideList, [cluster, isObj(tp[1]) ? tp[1] : {}]]) as Record<string, Record<string, unknown>>,
    cluster,
    other,
  }));

const prototypeNames = (): string =>
  [Object.prototype, Array.prototype, Function.prototype].map((p) => Object.getOwnPropertyNames(p).join()).join('|');
const PROTOTYPES = prototypeNames();

/** Runs `fn`; a throw is a violation unless it is the documented validation error. */
function guarded<T>(where: string, fn: () => T, out: Violation[]): { ok: true; value: T } | { ok: false } {
  try {
    return { ok: true, value: fn() };
  } catch (err) {
    if (!(err instanceof HubError && err.code === 'HUB_ERR_INVALID')) out.push(thrown(where, err));
    return { ok: false };
  }
}

function checkPatch(input: MergePatchInput, out: Violation[], findings?: Findings): void {
  const { target, patch } = input;
  const before = stringify([target, patch]);
  const r = guarded('applyMergePatch', () => applyMergePatch(target, patch), out);
  if (stringify([target, patch]) !== before) out.push({ kind: 'mutates-input', where: 'applyMergePatch', detail: '' });
  if (!r.ok) return;
  const result = r.value;
  if (!isPlainJson(result)) out.push({ kind: 'not-json', where: 'applyMergePatch', detail: String(result) });
  if (isObj(result) && Object.getPrototypeOf(result) !== Object.prototype) {
    out.push({ kind: 'prototype-changed', where: 'applyMergePatch', detail: 'the result has another prototype' });
  }
  if (depthOf(target) > ORACLE_DEPTH || depthOf(patch) > ORACLE_DEPTH) {
    findings?.count('merge-patch: deep inputs (oracles skipped)');
    return;
  }
  if (!jsonEqual(result, referenceMergePatch(target, patch))) {
    out.push({ kind: 'rfc7396', where: 'applyMergePatch', detail: 'differs from the RFC 7396 pseudo-code' });
  }
  const again = guarded('applyMergePatch (twice)', () => applyMergePatch(result, patch), out);
  if (again.ok && !jsonEqual(again.value, result))
    out.push({ kind: 'idempotence', where: 'applyMergePatch', detail: '' });
  const a = withoutNulls(target);
  const b = withoutNulls(patch);
  const round = guarded('applyMergePatch (diff)', () => applyMergePatch(a, diffPatch(a, b)), out);
  if (round.ok && !jsonEqual(round.value, b))
    out.push({ kind: 'diff-roundtrip', where: 'applyMergePatch', detail: '' });
}

function checkOverrides(input: MergePatchInput, out: Violation[], findings?: Findings): void {
  const { template, overrides, cluster, other } = input;
  const content = { spec: template.spec, overrides };
  for (const name of [cluster, other]) {
    findings?.count(Object.hasOwn(overrides, name) ? 'override: cluster with one' : 'override: cluster without one');
    const r = guarded('specForCluster', () => specForCluster(content, name), out);
    const expected = Object.hasOwn(overrides, name)
      ? guarded('applyMergePatch', () => applyMergePatch(template.spec, overrides[name]), out)
      : { ok: true as const, value: template.spec };
    if (!r.ok || !expected.ok) continue;
    if (depthOf(expected.value) <= ORACLE_DEPTH && !jsonEqual(r.value, expected.value)) {
      out.push({ kind: 'override', where: 'specForCluster', detail: `cluster ${JSON.stringify(name)}` });
    }
    guarded(
      'renderManifest',
      () =>
        renderManifest(
          { id: 'w', kind: template.kind, name: 'web', namespace: 'default' },
          { revision: 1, metadata: template.metadata, ...content },
          name,
        ),
      out,
    );
  }
  const namespace = template.kind === 'SidecarSet' ? '' : 'default';
  const body = { spec: template.spec, placement: { clusterSelector: {} }, overrides, metadata: template.metadata };
  try {
    assertValidTemplate(kruiseSpecValidator, { kind: template.kind, name: 'web', namespace }, body);
    findings?.count('template: valid');
  } catch (err) {
    findings?.count('template: refused');
    if (!(err instanceof HubError) || err.code !== 'HUB_ERR_INVALID') out.push(thrown('assertValidTemplate', err));
    else if (!err.details?.length || err.details.some((d) => typeof d.path !== 'string' || d.path === '')) {
      out.push({ kind: 'error-shape', where: 'assertValidTemplate', detail: JSON.stringify(err.details) });
    }
  }
}

/** Checks one input; returns the properties it broke. */
export function checkMergePatch(input: MergePatchInput, findings?: Findings): Violation[] {
  const out: Violation[] = [];
  checkPatch(input, out, findings);
  checkOverrides(input, out, findings);
  if (prototypeNames() !== PROTOTYPES || ({} as Record<string, unknown>)['polluted'] !== undefined) {
    out.push({ kind: 'prototype-pollution', where: 'Object.prototype', detail: prototypeNames() });
  }
  return out;
}
