import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { CONVERTERS } from '../kruise/conversion/index.js';
import { type CustomResourceDefinition, generateAllCrds } from './generate.js';
import { CRD_DIR, crdFileName, renderCrdYaml } from './render.js';
import { type CrdSchema, structuralViolations, toCrdRootSchema, toCrdSchema } from './structural.js';

const crds = generateAllCrds();
const byKind = (kind: string): CustomResourceDefinition => crds.find((c) => c.spec.names.kind === kind)!;
const schemaOf = (kind: string): CrdSchema => byKind(kind).spec.versions[0]!.schema.openAPIV3Schema;

/** Follows `.a.b` through properties (and `[]` through items) of a CRD schema. */
function node(schema: CrdSchema, path: string): CrdSchema {
  let current = schema;
  for (const step of path.split('.').filter(Boolean)) {
    current = step === '[]' ? (current.items as CrdSchema) : (current.properties as Record<string, CrdSchema>)[step]!;
    expect(current, `${path} at ${step}`).toBeDefined();
  }
  return current;
}

function readCommitted(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '<missing>';
  }
}

describe('deploy/crds', () => {
  it('holds exactly what the generator produces now', () => {
    const stale: string[] = [];
    for (const crd of crds) {
      const file = join(CRD_DIR, crdFileName(crd));
      if (readCommitted(file) !== renderCrdYaml(crd)) stale.push(crdFileName(crd));
    }
    expect(
      stale,
      `CRD files differ from the schemas in api/src/kruise; run \`npm run gen:crds\` and commit the result`,
    ).toEqual([]);
    const expected = crds.map(crdFileName).sort();
    const present = readdirSync(CRD_DIR)
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    expect(present, 'deploy/crds has files the generator does not write; run `npm run gen:crds`').toEqual(expected);
  });

  it.each(crds.map((c) => [crdFileName(c), c] as const))('%s parses back to the generated object', (_f, crd) => {
    expect(parse(renderCrdYaml(crd))).toEqual(JSON.parse(JSON.stringify(crd)));
  });
});

describe('generated CRDs', () => {
  it.each(crds.map((c) => [c.spec.names.kind, c] as const))('%s has structural schemas', (_kind, crd) => {
    for (const version of crd.spec.versions) {
      expect(structuralViolations(version.schema.openAPIV3Schema), version.name).toEqual([]);
    }
  });

  it('serve the versions OpenKruise v1.9 serves and store the one it stores, each with a status subresource', () => {
    const versions = crds.map((c) => [c.spec.names.kind, c.spec.versions.map((v) => [v.name, v.served, v.storage])]);
    expect(versions).toEqual([
      ['CloneSet', [['v1alpha1', true, true]]],
      ...['SidecarSet', 'ImagePullJob', 'NodeImage', 'BroadcastJob', 'StatefulSet', 'DaemonSet'].map((kind) => [
        kind,
        [
          ['v1alpha1', true, false],
          ['v1beta1', true, true],
        ],
      ]),
      ['WorkloadSpread', [['v1alpha1', true, true]]],
      ['PodUnavailableBudget', [['v1alpha1', true, true]]],
      ['ContainerRecreateRequest', [['v1alpha1', true, true]]],
    ]);
    for (const crd of crds) {
      expect(crd.spec.group).toBe(
        crd.spec.names.kind === 'PodUnavailableBudget' ? 'policy.kruise.io' : 'apps.kruise.io',
      );
      for (const version of crd.spec.versions) expect(version.subresources.status).toEqual({});
    }
  });

  it('convert SidecarSets through the webhook at /convert and the others with None, as v1.9 ships them', () => {
    expect(byKind('SidecarSet').spec.conversion).toEqual({
      strategy: 'Webhook',
      webhook: {
        clientConfig: {
          service: { namespace: 'flotilla-system', name: 'flotilla-webhook-service', path: '/convert', port: 443 },
        },
        conversionReviewVersions: ['v1', 'v1beta1'],
      },
    });
    for (const kind of ['CloneSet', 'ImagePullJob', 'NodeImage']) expect(byKind(kind).spec.conversion).toBeUndefined();
    // Every kind converted by webhook has a converter, and only those.
    const webhookKinds = crds.filter((c) => c.spec.conversion).map((c) => c.spec.names.kind);
    expect(Object.keys(CONVERTERS)).toEqual(webhookKinds);
  });

  it('give v1beta1 SidecarSets customVersion instead of namespace, and v1beta1 NodeImage secrets a mode', () => {
    const [alpha, beta] = byKind('SidecarSet').spec.versions.map((v) => v.schema.openAPIV3Schema);
    expect(Object.keys(node(alpha!, '.spec').properties as object)).toContain('namespace');
    expect(Object.keys(node(beta!, '.spec').properties as object)).not.toContain('namespace');
    expect(node(beta!, '.spec.customVersion')).toMatchObject({ type: 'string' });
    const [alphaImage, betaImage] = byKind('NodeImage').spec.versions.map(
      (v) => node(v.schema.openAPIV3Schema, '.spec.images').additionalProperties as CrdSchema,
    );
    expect(Object.keys(node(alphaImage!, '.pullSecrets.[]').properties as object)).toEqual(['name', 'namespace']);
    expect(Object.keys(node(betaImage!, '.pullSecrets.[]').properties as object)).toEqual([
      'mode',
      'name',
      'namespace',
    ]);
    const imagePullJob = byKind('ImagePullJob').spec.versions;
    expect(imagePullJob[0]!.schema).toEqual(imagePullJob[1]!.schema);
  });

  it('have OpenKruise names, scopes and short names', () => {
    const facts = crds.map((c) => [
      c.metadata.name,
      c.spec.scope,
      c.spec.names.listKind,
      c.spec.names.shortNames ?? [],
    ]);
    expect(facts).toEqual([
      ['clonesets.apps.kruise.io', 'Namespaced', 'CloneSetList', ['clone']],
      ['sidecarsets.apps.kruise.io', 'Cluster', 'SidecarSetList', []],
      ['imagepulljobs.apps.kruise.io', 'Namespaced', 'ImagePullJobList', []],
      ['nodeimages.apps.kruise.io', 'Cluster', 'NodeImageList', []],
      ['broadcastjobs.apps.kruise.io', 'Namespaced', 'BroadcastJobList', ['bcj']],
      ['statefulsets.apps.kruise.io', 'Namespaced', 'StatefulSetList', ['sts', 'asts']],
      ['daemonsets.apps.kruise.io', 'Namespaced', 'DaemonSetList', ['daemon', 'ads']],
      ['workloadspreads.apps.kruise.io', 'Namespaced', 'WorkloadSpreadList', ['ws']],
      ['podunavailablebudgets.policy.kruise.io', 'Namespaced', 'PodUnavailableBudgetList', ['pub']],
      ['containerrecreaterequests.apps.kruise.io', 'Namespaced', 'ContainerRecreateRequestList', ['crr']],
    ]);
  });

  it('give CloneSet the scale subresource kubectl scale and HPAs use', () => {
    expect(byKind('CloneSet').spec.versions[0]!.subresources.scale).toEqual({
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.replicas',
      labelSelectorPath: '.status.labelSelector',
    });
    for (const kind of ['SidecarSet', 'ImagePullJob', 'NodeImage', 'BroadcastJob']) {
      expect(byKind(kind).spec.versions[0]!.subresources.scale).toBeUndefined();
    }
  });

  it('have OpenKruise printer columns', () => {
    const columns = (kind: string): string[] =>
      byKind(kind).spec.versions[0]!.additionalPrinterColumns.map(
        (c) => `${c.name}:${c.type}:${c.jsonPath}:${c.priority ?? 0}`,
      );
    expect(columns('CloneSet')).toEqual([
      'DESIRED:integer:.spec.replicas:0',
      'UPDATED:integer:.status.updatedReplicas:0',
      'UPDATED_READY:integer:.status.updatedReadyReplicas:0',
      'UPDATED_AVAILABLE:integer:.status.updatedAvailableReplicas:0',
      'READY:integer:.status.readyReplicas:0',
      'TOTAL:integer:.status.replicas:0',
      'AGE:date:.metadata.creationTimestamp:0',
      'CONTAINERS:string:.spec.template.spec.containers[*].name:1',
      'IMAGES:string:.spec.template.spec.containers[*].image:1',
      'SELECTOR:string:.status.labelSelector:1',
    ]);
    expect(columns('SidecarSet')).toEqual([
      'MATCHED:integer:.status.matchedPods:0',
      'UPDATED:integer:.status.updatedPods:0',
      'READY:integer:.status.readyPods:0',
      'AGE:date:.metadata.creationTimestamp:0',
    ]);
    expect(columns('ImagePullJob').map((c) => c.split(':')[0])).toEqual([
      'TOTAL',
      'ACTIVE',
      'SUCCEED',
      'FAILED',
      'AGE',
      'MESSAGE',
    ]);
    // v1beta1 drops MESSAGE, as OpenKruise v1.9 does.
    expect(byKind('ImagePullJob').spec.versions[1]!.additionalPrinterColumns.map((c) => c.name)).toEqual([
      'TOTAL',
      'ACTIVE',
      'SUCCEED',
      'FAILED',
      'AGE',
    ]);
    expect(columns('NodeImage').map((c) => c.split(':')[0])).toEqual([
      'DESIRED',
      'PULLING',
      'SUCCEED',
      'FAILED',
      'AGE',
    ]);
  });

  it('keep pod templates, claim templates and volumes schemaless, as OpenKruise does', () => {
    const schemaless = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
    expect(node(schemaOf('CloneSet'), '.spec.template')).toEqual(schemaless);
    expect(node(schemaOf('CloneSet'), '.spec.volumeClaimTemplates.[]')).toEqual(schemaless);
    expect(node(schemaOf('SidecarSet'), '.spec.volumes.[]')).toEqual(schemaless);
    expect(node(schemaOf('CloneSet'), '.metadata')).toEqual({ type: 'object' });
  });

  it('declare only OpenKruise fields of sidecar containers and preserve the rest', () => {
    const container = node(schemaOf('SidecarSet'), '.spec.containers.[]');
    expect(container['x-kubernetes-preserve-unknown-fields']).toBe(true);
    expect(Object.keys(container.properties as object)).toEqual([
      'podInjectPolicy',
      'resourcesPolicy',
      'shareVolumeDevicePolicy',
      'shareVolumePolicy',
      'transferEnv',
      'upgradeStrategy',
    ]);
  });

  it('write int-or-string fields in the form the apiserver requires', () => {
    for (const path of [
      '.spec.updateStrategy.partition',
      '.spec.updateStrategy.maxSurge',
      '.spec.scaleStrategy.maxUnavailable',
    ]) {
      const field = node(schemaOf('CloneSet'), path);
      expect(field['x-kubernetes-int-or-string']).toBe(true);
      expect(field.anyOf).toEqual([{ type: 'integer' }, { type: 'string' }]);
      expect(field.type).toBeUndefined();
    }
  });

  it('require what OpenKruise requires', () => {
    expect(node(schemaOf('CloneSet'), '.spec').required).toEqual(['selector', 'template']);
    expect(node(schemaOf('ImagePullJob'), '.spec').required).toEqual(['image']);
    expect(node(schemaOf('NodeImage'), '.spec.images').additionalProperties).toMatchObject({ required: ['tags'] });
    expect(node(schemaOf('CloneSet'), '.status').required).toEqual([
      'availableReplicas',
      'readyReplicas',
      'replicas',
      'updatedReadyReplicas',
      'updatedReplicas',
    ]);
  });
});

describe('structural checks', () => {
  const root = (spec: CrdSchema): CrdSchema => ({ type: 'object', properties: { spec } });

  it('find fields without a type, arrays without items, stray anyOf and rich metadata', () => {
    expect(structuralViolations(root({ type: 'object', properties: { a: {} } }))).toEqual([
      '.spec.a: type must be set',
    ]);
    expect(structuralViolations(root({ type: 'array' }))).toEqual(['.spec: arrays must declare items']);
    expect(structuralViolations(root({ anyOf: [{ type: 'string' }, { type: 'boolean' }] }))).toContain(
      '.spec: anyOf is only allowed as the int-or-string pattern',
    );
    expect(
      structuralViolations({
        type: 'object',
        properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } },
      }),
    ).toEqual(['.metadata: must be exactly {type: object}; the apiserver owns metadata']);
    expect(structuralViolations(root({ type: 'string', $id: 'x' }))).toEqual([".spec: keyword '$id' is not allowed"]);
  });

  it('accept schemaless and int-or-string nodes without a type', () => {
    expect(structuralViolations(root({ 'x-kubernetes-preserve-unknown-fields': true }))).toEqual([]);
    expect(
      structuralViolations(
        root({ 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] }),
      ),
    ).toEqual([]);
  });

  it('refuse to convert schemas a CRD cannot express', () => {
    expect(() => toCrdSchema(Type.Record(Type.String(), Type.String()))).toThrow(/patternProperties/);
    expect(() => toCrdSchema(Type.Union([Type.String(), Type.Boolean()]))).toThrow(/anyOf outside int-or-string/);
    expect(() => toCrdSchema(Type.Literal('x'))).toThrow(/const/);
  });

  it('drop additionalProperties: false, which structural schemas do not allow next to properties', () => {
    const converted = toCrdRootSchema(
      Type.Object({ spec: Type.Object({ a: Type.String() }, { additionalProperties: false }) }),
    );
    expect(converted).toEqual({
      type: 'object',
      required: ['spec'],
      properties: { spec: { type: 'object', required: ['a'], properties: { a: { type: 'string' } } } },
    });
  });
});
