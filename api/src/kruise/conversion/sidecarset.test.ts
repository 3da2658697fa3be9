import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkSchema } from '../common/validate-object.js';
import { LABEL_SIDECARSET_CUSTOM_VERSION } from '../constants.js';
import { SidecarSetSchema, SidecarSetV1beta1Schema } from '../sidecarset/schema.js';
import {
  ANNOTATION_SIDECARSET_V1ALPHA1_PARTS,
  ANNOTATION_SIDECARSET_V1BETA1_PARTS,
  CONVERTERS,
  convertKruiseObject,
  sidecarSetToV1alpha1,
  sidecarSetToV1beta1,
} from './index.js';

const ALPHA = 'apps.kruise.io/v1alpha1';
const BETA = 'apps.kruise.io/v1beta1';
type Json = Record<string, unknown>;

const CV = LABEL_SIDECARSET_CUSTOM_VERSION;
const token = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/);
/** Values a user may give, the empty string included (it has no counterpart in either direction). */
const value = fc.oneof(token, fc.constant(''));
const selector = fc.oneof(
  fc.record({ matchLabels: fc.dictionary(token, value, { minKeys: 1, maxKeys: 3 }) }),
  fc.record({
    matchExpressions: fc.array(
      fc.record({ key: token, operator: fc.constantFrom('In', 'NotIn'), values: fc.array(token, { minLength: 1 }) }),
      { minLength: 1, maxLength: 2 },
    ),
  }),
  // The selector a namespace maps to, so restoring must tell them apart.
  token.map((ns) => ({ matchLabels: { 'kubernetes.io/metadata.name': ns } })),
);
/** Label and annotation maps: never empty (the apiserver drops empty ones); maybe the custom-version label. */
const stringMap = (withCustomVersion: boolean): fc.Arbitrary<Record<string, string>> =>
  fc
    .tuple(fc.dictionary(token, value, { maxKeys: 3 }), withCustomVersion ? fc.option(value) : fc.constant(null))
    .map(([m, cv]) => (cv === null ? m : { ...m, [CV]: cv }))
    .filter((m) => Object.keys(m).length > 0);
const container = fc.record({ name: token, image: token, podInjectPolicy: fc.constantFrom('BeforeAppContainer') });
const status = fc.record({ matchedPods: fc.nat(), updatedPods: fc.nat(), readyPods: fc.nat(), latestRevision: token });

const metadata = fc.record(
  {
    name: token,
    uid: fc.uuid(),
    resourceVersion: fc.nat().map(String),
    generation: fc.nat(),
    labels: stringMap(true),
    annotations: stringMap(false),
  },
  { requiredKeys: ['name', 'uid', 'resourceVersion'] },
);
const shared = {
  selector,
  namespaceSelector: selector,
  containers: fc.array(container, { maxLength: 2 }),
  initContainers: fc.array(container, { maxLength: 1 }),
  updateStrategy: fc.record({ type: fc.constantFrom('RollingUpdate', 'NotUpdate'), partition: fc.nat(5) }),
  revisionHistoryLimit: fc.nat(20),
};
const object = (apiVersion: string, spec: fc.Arbitrary<Json>): fc.Arbitrary<Json> =>
  fc.record(
    { apiVersion: fc.constant(apiVersion), kind: fc.constant('SidecarSet'), metadata, spec, status },
    { requiredKeys: ['apiVersion', 'kind', 'metadata', 'spec'] },
  );
const alphaObject = object(ALPHA, fc.record({ ...shared, namespace: value }, { requiredKeys: [] }));
const betaObject = object(BETA, fc.record({ ...shared, customVersion: value }, { requiredKeys: [] }));

/** Metadata other than labels and annotations, which a conversion must not change. */
const fixedMetadata = (o: Json): Json => {
  const { labels: _l, annotations: _a, ...rest } = o.metadata as Json;
  return rest;
};
const runs = { numRuns: 500 };
/** Property runs take seconds on a busy machine; this bounds them, it measures nothing. */
const PROPERTY_TIMEOUT_MS = 120_000;

describe('SidecarSet conversion round trips', () => {
  it(
    'v1alpha1 → v1beta1 → v1alpha1 returns the input exactly',
    () => {
      fc.assert(
        fc.property(alphaObject, (alpha) => {
          const beta = sidecarSetToV1beta1(alpha, BETA);
          expect(beta.apiVersion).toBe(BETA);
          expect(fixedMetadata(beta)).toEqual(fixedMetadata(alpha));
          expect(sidecarSetToV1alpha1(beta, ALPHA)).toEqual(alpha);
        }),
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'v1beta1 → v1alpha1 → v1beta1 returns the input exactly',
    () => {
      fc.assert(
        fc.property(betaObject, (beta) => {
          const alpha = sidecarSetToV1alpha1(beta, ALPHA);
          expect(alpha.apiVersion).toBe(ALPHA);
          expect(fixedMetadata(alpha)).toEqual(fixedMetadata(beta));
          expect(sidecarSetToV1beta1(alpha, BETA)).toEqual(beta);
        }),
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'converting twice in a row through the other version changes nothing more',
    () => {
      fc.assert(
        fc.property(alphaObject, (alpha) => {
          const beta = sidecarSetToV1beta1(alpha, BETA);
          const again = sidecarSetToV1beta1(sidecarSetToV1alpha1(beta, ALPHA), BETA);
          expect(again).toEqual(beta);
        }),
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'produces objects the target version accepts when the source version did',
    () => {
      fc.assert(
        fc.property(alphaObject, betaObject, (alpha, beta) => {
          fc.pre(
            checkSchema(SidecarSetSchema, alpha).length === 0 &&
              checkSchema(SidecarSetV1beta1Schema, beta).length === 0,
          );
          expect(checkSchema(SidecarSetV1beta1Schema, sidecarSetToV1beta1(alpha, BETA))).toEqual([]);
          expect(checkSchema(SidecarSetSchema, sidecarSetToV1alpha1(beta, ALPHA))).toEqual([]);
        }),
        { numRuns: 300 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});

const alpha = (spec: Json, labels?: Record<string, string>): Json => ({
  apiVersion: ALPHA,
  kind: 'SidecarSet',
  metadata: { name: 'ss', ...(labels ? { labels } : {}) },
  spec,
});

describe('SidecarSet conversion as OpenKruise v1.9 maps it', () => {
  it('turns a namespace into a namespaceSelector on its name label, keeping the lost parts in an annotation', () => {
    const beta = sidecarSetToV1beta1(
      alpha({ namespace: 'team-a', namespaceSelector: { matchLabels: { x: 'y' } } }),
      BETA,
    );
    expect(beta.spec).toEqual({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-a' } } });
    expect(
      JSON.parse(
        (beta.metadata as { annotations: Record<string, string> }).annotations[ANNOTATION_SIDECARSET_V1ALPHA1_PARTS]!,
      ),
    ).toEqual({
      namespace: { value: 'team-a' },
      namespaceSelector: { value: { matchLabels: { x: 'y' } } },
      label: {},
    });
  });

  it('moves the custom-version label into spec.customVersion and back, with no annotation when nothing is lost', () => {
    const beta = sidecarSetToV1beta1(
      alpha({ namespaceSelector: { matchLabels: { a: 'b' } } }, { [CV]: 'v2', app: 'x' }),
      BETA,
    );
    expect(beta).toEqual({
      apiVersion: BETA,
      kind: 'SidecarSet',
      metadata: { name: 'ss', labels: { app: 'x' } },
      spec: { namespaceSelector: { matchLabels: { a: 'b' } }, customVersion: 'v2' },
    });
    const back = sidecarSetToV1alpha1({ ...beta, spec: { customVersion: 'v3' } }, ALPHA);
    expect(back).toEqual({
      apiVersion: ALPHA,
      kind: 'SidecarSet',
      metadata: { name: 'ss', labels: { app: 'x', [CV]: 'v3' } },
      spec: {},
    });
  });

  it('drops a saved part made stale by an edit in the other version, keeping the edit', () => {
    const beta = sidecarSetToV1beta1(alpha({ namespace: 'team-a' }), BETA);
    const edited = { ...beta, spec: { namespaceSelector: { matchLabels: { tier: 'web' } } } };
    const back = sidecarSetToV1alpha1(edited, ALPHA);
    expect(back).toEqual({
      apiVersion: ALPHA,
      kind: 'SidecarSet',
      metadata: { name: 'ss' },
      spec: { namespaceSelector: { matchLabels: { tier: 'web' } } },
    });
  });

  it('ignores an annotation that is not JSON of saved parts', () => {
    const beta = {
      ...sidecarSetToV1beta1(alpha({}), BETA),
      metadata: { name: 'ss', annotations: { [ANNOTATION_SIDECARSET_V1ALPHA1_PARTS]: '{not json' } },
    };
    expect(sidecarSetToV1alpha1(beta, ALPHA)).toEqual(alpha({}));
    const wrongShape = {
      ...beta,
      metadata: { name: 'ss', annotations: { [ANNOTATION_SIDECARSET_V1ALPHA1_PARTS]: '{"namespace":"x"}' } },
    };
    expect(sidecarSetToV1alpha1(wrongShape, ALPHA)).toEqual(alpha({}));
  });

  it('keeps a v1beta1 object’s own custom-version label and empty customVersion through v1alpha1', () => {
    const beta = {
      apiVersion: BETA,
      kind: 'SidecarSet',
      metadata: { name: 'ss', labels: { [CV]: 'old' } },
      spec: { customVersion: '' },
    };
    const alphaView = sidecarSetToV1alpha1(beta, ALPHA);
    expect((alphaView.metadata as { annotations: Record<string, string> }).annotations).toHaveProperty(
      ANNOTATION_SIDECARSET_V1BETA1_PARTS,
    );
    expect(sidecarSetToV1beta1(alphaView, BETA)).toEqual(beta);
  });
});

describe('convertKruiseObject', () => {
  it('returns an object already at the desired version unchanged', () => {
    const obj = alpha({ namespace: 'a' });
    expect(convertKruiseObject(obj, ALPHA)).toEqual({ ok: true, object: obj });
  });

  it('names every malformed field instead of throwing', () => {
    const errors = (obj: unknown, desired = BETA): string[] => {
      const out = convertKruiseObject(obj, desired, 'request.objects[0]');
      return out.ok ? [] : out.errors.map((e) => `${e.path}: ${e.message}`);
    };
    expect(errors('x')).toEqual(['request.objects[0]: Invalid value: "x": must be of type object']);
    const kinds = Object.keys(CONVERTERS)
      .map((k) => `"${k}"`)
      .join(', ');
    expect(errors({ ...alpha({}), kind: 'Deployment' })).toEqual([
      `request.objects[0].kind: Unsupported value: "Deployment": supported values: ${kinds}`,
    ]);
    expect(errors({ ...alpha({}), kind: 'toString' })[0]).toMatch(/^request\.objects\[0\]\.kind: Unsupported value/);
    expect(errors({ ...alpha({}), apiVersion: 'apps/v1' })).toEqual([
      'request.objects[0].apiVersion: Unsupported value: "apps/v1": supported values: "apps.kruise.io/v1alpha1", "apps.kruise.io/v1beta1"',
    ]);
    expect(errors(alpha({ namespace: 3 }))).toEqual([
      'request.objects[0].spec.namespace: Invalid value: 3: must be of type string',
    ]);
    expect(errors({ ...alpha({}), spec: [] })).toEqual([
      'request.objects[0].spec: Invalid value: array: must be of type object',
    ]);
    expect(errors(alpha({}, { [CV]: 1 as unknown as string }))).toEqual([
      `request.objects[0].metadata.labels[${CV}]: Invalid value: 1: must be of type string`,
    ]);
    expect(errors(alpha({}), 'apps.kruise.io/v2')[0]).toMatch(
      /^desiredAPIVersion: Unsupported value: "apps.kruise.io\/v2"/,
    );
  });

  it(
    'never throws on arbitrary JSON',
    () => {
      fc.assert(
        fc.property(fc.jsonValue(), fc.constantFrom(ALPHA, BETA, 'x'), (obj, desired) => {
          expect(() => convertKruiseObject(obj, desired)).not.toThrow();
        }),
        runs,
      );
      fc.assert(
        fc.property(
          fc.record({
            apiVersion: fc.constantFrom(ALPHA, BETA),
            kind: fc.constant('SidecarSet'),
            metadata: fc.jsonValue(),
            spec: fc.jsonValue(),
          }),
          (obj) => {
            expect(() => convertKruiseObject(obj, obj.apiVersion === ALPHA ? BETA : ALPHA)).not.toThrow();
          },
        ),
        runs,
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
});
