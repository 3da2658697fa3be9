import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import type { TSchema } from 'typebox';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { FieldError } from '../validation/field-error.js';
import { cloneJson, isRecord } from '../validation/json.js';
import { defaultCloneSet } from './cloneset/defaults.js';
import { isReadable } from './common/validate-object.js';
import { type CloneSet, CloneSetSchema } from './cloneset/schema.js';
import { validateCloneSetUpdate } from './cloneset/update.js';
import { validateCloneSet } from './cloneset/validation.js';
import { defaultImagePullJob } from './imagepulljob/defaults.js';
import { type ImagePullJob, ImagePullJobSchema } from './imagepulljob/schema.js';
import { validateImagePullJob } from './imagepulljob/validation.js';
import { defaultNodeImage } from './nodeimage/defaults.js';
import { type NodeImage, NodeImageSchema } from './nodeimage/schema.js';
import { validateNodeImage } from './nodeimage/validation.js';
import { defaultSidecarSet } from './sidecarset/defaults.js';
import { type SidecarSet, SidecarSetSchema } from './sidecarset/schema.js';
import { validateSidecarSetUpdate } from './sidecarset/update.js';
import { validateSidecarSet } from './sidecarset/validation.js';
import {
  defaultKruiseObject,
  type KruiseObject,
  validateKruiseObject,
  validateKruiseObjectUpdate,
} from './validate.js';

const API_VERSION = 'apps.kruise.io/v1alpha1';
const SCHEMAS: Record<string, TSchema> = {
  CloneSet: CloneSetSchema,
  SidecarSet: SidecarSetSchema,
  ImagePullJob: ImagePullJobSchema,
  NodeImage: NodeImageSchema,
};
const NOW = new Date('2024-05-01T10:00:00Z');

const validators: Record<string, (document: unknown) => FieldError[]> = {
  validateKruiseObject,
  validateCloneSet,
  validateSidecarSet,
  validateImagePullJob,
  validateNodeImage,
  'validateCloneSetUpdate (as new)': (d) => validateCloneSetUpdate(d, corpus[0]),
  'validateCloneSetUpdate (as old)': (d) => validateCloneSetUpdate(corpus[0], d),
  'validateSidecarSetUpdate (as new)': (d) => validateSidecarSetUpdate(d, d),
  'validateKruiseObjectUpdate (same old and new)': (d) => validateKruiseObjectUpdate(d, d),
};

const corpusDir = join(import.meta.dirname, 'testdata');
const corpus: unknown[] = ['valid', 'invalid'].flatMap((dir) =>
  readdirSync(join(corpusDir, dir))
    .sort()
    .map((f) => parse(readFileSync(join(corpusDir, dir, f), 'utf8')) as unknown),
);

/** Validation must answer, never throw, and never hit its internal-error safety net. */
function answers(validate: (document: unknown) => FieldError[], document: unknown): void {
  const errors = validate(document);
  expect(Array.isArray(errors)).toBe(true);
  expect(errors.filter((e) => e.code === 'Internal')).toEqual([]);
}

/** Every path (as key lists) inside a JSON document, found iteratively. */
function pathsOf(document: unknown): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [];
  const work: Array<[unknown, Array<string | number>]> = [[document, []]];
  for (let item = work.pop(); item; item = work.pop()) {
    const [node, path] = item;
    out.push(path);
    if (Array.isArray(node)) node.forEach((v, i) => work.push([v, [...path, i]]));
    else if (isRecord(node)) for (const [k, v] of Object.entries(node)) work.push([v, [...path, k]]);
  }
  return out;
}

/** A copy of `document` with the value at `path` replaced (the root when the path is empty). */
function replaceAt(document: unknown, path: ReadonlyArray<string | number>, value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = cloneJson(document);
  let node: unknown = copy;
  for (const segment of path.slice(0, -1)) node = (node as Record<string | number, unknown>)[segment];
  (node as Record<string | number, unknown>)[path[path.length - 1]!] = value;
  return copy;
}

/** Mutations of the corpus: one value anywhere replaced by arbitrary JSON. */
const mutatedCorpus = fc
  .constantFrom(...corpus)
  .chain((doc) => fc.tuple(fc.constant(doc), fc.constantFrom(...pathsOf(doc)), fc.jsonValue({ maxDepth: 4 })))
  .map(([doc, path, value]) => replaceAt(doc, path, value));

function nested(depth: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { a: value } : [value];
  return value;
}

describe('validation never throws', () => {
  it.each(Object.entries(validators))('%s answers for any value (fc.anything)', (_name, validate) => {
    fc.assert(
      fc.property(
        fc.anything({ withNullPrototype: true, withMap: true, withSet: true, withDate: true, withBigInt: true }),
        (value) => answers(validate, value),
      ),
      { numRuns: 300 },
    );
  });

  it.each(Object.entries(validators))('%s answers for corpus documents with one value replaced', (_name, validate) => {
    fc.assert(
      fc.property(mutatedCorpus, (document) => answers(validate, document)),
      { numRuns: 400 },
    );
  });

  it('answers for deeply nested values in typed and schemaless places', () => {
    const base = corpus[0] as CloneSet;
    const deep = nested(20_000, 'x');
    const documents = [
      deep,
      { ...base, spec: deep },
      { ...base, spec: { ...base.spec, template: deep } },
      {
        ...base,
        spec: {
          ...base.spec,
          template: { ...base.spec.template, spec: { containers: [{ name: 'a', image: 'b', extra: deep }] } },
        },
      },
      { ...base, metadata: { name: 'x', labels: deep } },
    ];
    for (const document of documents) {
      for (const validate of Object.values(validators)) answers(validate, document);
    }
  });

  it('answers for huge numbers, long strings and odd keys', () => {
    const base = corpus[0] as CloneSet;
    const odd = [
      { ...base, spec: { ...base.spec, replicas: 1e308 } },
      { ...base, spec: { ...base.spec, replicas: Number.MAX_SAFE_INTEGER + 2 } },
      { ...base, spec: { ...base.spec, updateStrategy: { partition: `${'9'.repeat(400)}%` } } },
      { ...base, spec: { ...base.spec, template: { metadata: { labels: { ['a'.repeat(100_000)]: 'b' } } } } },
      JSON.parse(
        '{"apiVersion":"apps.kruise.io/v1alpha1","kind":"CloneSet","__proto__":{"spec":1},"spec":{"__proto__":null}}',
      ),
    ];
    for (const document of odd) {
      for (const validate of Object.values(validators)) answers(validate, document);
      // Each is wrong somewhere, and validation says so rather than letting it through.
      expect(validateKruiseObject(document)).not.toEqual([]);
    }
  });
});

// --- Arbitrary valid objects -------------------------------------------------------------------

const dnsLabel = fc.stringMatching(/^[a-z]([a-z0-9-]{0,10}[a-z0-9])?$/);
const image = fc
  .tuple(
    fc.constantFrom('nginx', 'docker.io/library/redis', 'registry.example.com:5000/team/app'),
    fc.option(fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,8}$/)),
  )
  .map(([name, tag]) => (tag === null ? name : `${name}:${tag}`));
const intOrPercent = fc.oneof(
  fc.nat({ max: 20 }),
  fc.integer({ min: 0, max: 100 }).map((n) => `${n}%`),
);
const quantity = fc.constantFrom('100m', '0.5', '1', '0.0001', '1Gi', '128Mi', '1.5Gi', '2k', 1, 0.25, '1e-4');

const container = fc.record(
  {
    name: dnsLabel,
    image,
    imagePullPolicy: fc.constantFrom('Always', 'IfNotPresent', 'Never'),
    ports: fc.array(
      fc.record(
        { containerPort: fc.integer({ min: 1, max: 65535 }), protocol: fc.constantFrom('TCP', 'UDP') },
        { requiredKeys: ['containerPort'] },
      ),
      { maxLength: 2 },
    ),
    env: fc.array(
      fc.record({
        name: fc.constantFrom('A', 'B', 'POD'),
        valueFrom: fc.constant({ fieldRef: { fieldPath: 'metadata.name' } }),
      }),
      { maxLength: 2 },
    ),
    resources: fc.record({
      requests: fc.dictionary(fc.constantFrom('cpu', 'memory'), quantity),
      limits: fc.dictionary(fc.constantFrom('cpu', 'memory'), quantity),
    }),
    readinessProbe: fc.record({
      httpGet: fc.record(
        { port: fc.integer({ min: 1, max: 65535 }), path: fc.constantFrom('/', '/healthz') },
        { requiredKeys: ['port'] },
      ),
      periodSeconds: fc.integer({ min: 0, max: 60 }),
    }),
    livenessProbe: fc.record({
      tcpSocket: fc.constant({ port: 80 }),
      failureThreshold: fc.integer({ min: 0, max: 5 }),
    }),
  },
  { requiredKeys: ['name', 'image'] },
);

/** Containers with distinct names, as a pod requires. */
const containers = fc.uniqueArray(container, { minLength: 1, maxLength: 3, selector: (c) => c.name });

const volume = fc.oneof(
  dnsLabel.map((name) => ({ name })),
  dnsLabel.map((name) => ({ name, configMap: { name: 'cfg' } })),
  dnsLabel.map((name) => ({ name, secret: { secretName: 's', defaultMode: 256 } })),
  dnsLabel.map((name) => ({ name, projected: { sources: [{ serviceAccountToken: { path: 'token' } }] } })),
);

const cloneSetArbitrary: fc.Arbitrary<CloneSet> = fc
  .record({
    name: dnsLabel,
    replicas: fc.option(fc.nat({ max: 50 }), { nil: undefined }),
    type: fc.constantFrom(undefined, 'ReCreate', 'InPlaceIfPossible', 'InPlaceOnly'),
    partition: fc.option(intOrPercent, { nil: undefined }),
    maxUnavailable: fc.option(
      intOrPercent.filter((v) => v !== 0 && v !== '0%'),
      { nil: undefined },
    ),
    paused: fc.option(fc.boolean(), { nil: undefined }),
    containers,
    volumes: fc.uniqueArray(volume, { maxLength: 2, selector: (v) => v.name }),
    minReadySeconds: fc.option(fc.nat({ max: 300 }), { nil: undefined }),
  })
  .map((r) => ({
    apiVersion: API_VERSION,
    kind: 'CloneSet',
    metadata: { name: r.name },
    spec: {
      ...(r.replicas === undefined ? {} : { replicas: r.replicas }),
      ...(r.minReadySeconds === undefined ? {} : { minReadySeconds: r.minReadySeconds }),
      selector: { matchLabels: { app: r.name } },
      template: { metadata: { labels: { app: r.name } }, spec: { containers: r.containers, volumes: r.volumes } },
      updateStrategy: {
        ...(r.type === undefined ? {} : { type: r.type }),
        ...(r.partition === undefined ? {} : { partition: r.partition }),
        ...(r.maxUnavailable === undefined ? {} : { maxUnavailable: r.maxUnavailable }),
        ...(r.paused === undefined ? {} : { paused: r.paused }),
      },
    },
  }));

const sidecarSetArbitrary: fc.Arbitrary<SidecarSet> = fc
  .record({
    name: dnsLabel,
    containers,
    policy: fc.constantFrom(undefined, 'BeforeAppContainer', 'AfterAppContainer'),
    share: fc.constantFrom(undefined, 'enabled', 'disabled'),
    maxUnavailable: fc.option(intOrPercent, { nil: undefined }),
    revision: fc.option(fc.record({ customVersion: fc.constantFrom('v1', 'v2') }), { nil: undefined }),
    patch: fc.option(fc.constantFrom('Retain', 'Overwrite', undefined), { nil: null }),
  })
  .map((r) => ({
    apiVersion: API_VERSION,
    kind: 'SidecarSet',
    metadata: { name: r.name },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: r.containers.map((c) => ({
        ...c,
        ...(r.policy ? { podInjectPolicy: r.policy } : {}),
        ...(r.share ? { shareVolumePolicy: { type: r.share } } : {}),
      })),
      updateStrategy: r.maxUnavailable === undefined ? {} : { maxUnavailable: r.maxUnavailable },
      ...(r.revision ? { injectionStrategy: { revision: r.revision } } : {}),
      ...(r.patch === null
        ? {}
        : {
            patchPodMetadata: [{ annotations: { 'example.com/a': 'b' }, ...(r.patch ? { patchPolicy: r.patch } : {}) }],
          }),
    },
  }));

const imagePullJobArbitrary: fc.Arbitrary<ImagePullJob> = fc
  .record({
    name: dnsLabel,
    image,
    // OpenKruise v1.9: a count of nodes, possibly as a numeric string; never a percentage.
    parallelism: fc.option(fc.oneof(fc.nat({ max: 20 }), fc.nat({ max: 20 }).map(String)), { nil: undefined }),
    type: fc.constantFrom(undefined, 'Always', 'Never'),
    timeout: fc.option(fc.integer({ min: 1, max: 600 }), { nil: undefined }),
    names: fc.option(fc.uniqueArray(dnsLabel, { minLength: 1, maxLength: 3 }), { nil: undefined }),
  })
  .map((r) => ({
    apiVersion: API_VERSION,
    kind: 'ImagePullJob',
    metadata: { name: r.name },
    spec: {
      image: r.image,
      ...(r.parallelism === undefined ? {} : { parallelism: r.parallelism }),
      ...(r.names === undefined ? {} : { selector: { names: r.names } }),
      ...(r.timeout === undefined ? {} : { pullPolicy: { timeoutSeconds: r.timeout } }),
      completionPolicy:
        r.type === 'Never' ? { type: 'Never' } : { ...(r.type ? { type: r.type } : {}), activeDeadlineSeconds: 1200 },
    },
  }));

const nodeImageArbitrary: fc.Arbitrary<NodeImage> = fc
  .record({
    name: dnsLabel,
    images: fc.dictionary(
      fc.constantFrom('nginx', 'docker.io/library/redis', 'busybox'),
      fc.uniqueArray(fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,6}$/), { minLength: 1, maxLength: 3 }),
    ),
  })
  .map((r) => ({
    apiVersion: API_VERSION,
    kind: 'NodeImage',
    metadata: { name: r.name },
    spec: {
      images: Object.fromEntries(
        Object.entries(r.images).map(([name, tags]) => [
          name,
          { tags: tags.map((tag) => ({ tag, pullPolicy: { ttlSecondsAfterFinished: 300 } })) },
        ]),
      ),
    },
  }));

const kinds = [
  ['CloneSet', cloneSetArbitrary, defaultCloneSet, validateCloneSet],
  ['SidecarSet', sidecarSetArbitrary, defaultSidecarSet, validateSidecarSet],
  ['ImagePullJob', imagePullJobArbitrary, (j: ImagePullJob) => defaultImagePullJob(j), validateImagePullJob],
  ['NodeImage', nodeImageArbitrary, (n: NodeImage) => defaultNodeImage(n, NOW), validateNodeImage],
] as const;

describe.each(kinds)('%s defaulting', (_kind, arbitrary, applyDefaults, validate) => {
  const defaults = applyDefaults as (o: KruiseObject) => KruiseObject;
  const objects = arbitrary as fc.Arbitrary<KruiseObject>;

  it('generates valid objects (the generator itself is checked)', () => {
    fc.assert(
      fc.property(objects, (o) => {
        expect(validate(o)).toEqual([]);
      }),
      { numRuns: 100 },
    );
  });

  it('is idempotent', () => {
    fc.assert(
      fc.property(objects, (o) => {
        expect(defaults(defaults(o))).toEqual(defaults(o));
      }),
      { numRuns: 200 },
    );
  });

  it('keeps valid objects valid', () => {
    fc.assert(
      fc.property(objects, (o) => {
        expect(validate(defaults(o))).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it('returns a new object and leaves its input alone', () => {
    fc.assert(
      fc.property(objects, (o) => {
        const before = cloneJson(o);
        const after = defaults(o);
        expect(after).not.toBe(o);
        expect(o).toEqual(before);
      }),
      { numRuns: 100 },
    );
  });
});

describe('defaulting of documents that pass the schema but break semantic rules', () => {
  it('is idempotent on mutated corpus documents', () => {
    fc.assert(
      fc.property(mutatedCorpus, (document) => {
        const kind = isRecord(document) ? document.kind : undefined;
        const schema = typeof kind === 'string' && Object.hasOwn(SCHEMAS, kind) ? SCHEMAS[kind] : undefined;
        fc.pre(schema !== undefined && isReadable(schema, document));
        const once = defaultKruiseObject(document as KruiseObject);
        expect(defaultKruiseObject(once)).toEqual(once);
      }),
      { numRuns: 300 },
    );
  });
});
