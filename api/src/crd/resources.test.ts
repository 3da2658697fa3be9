import { describe, expect, it } from 'vitest';
import { KRUISE_KINDS } from '../kruise/constants.js';
import { CLONESET_CRD, CRD_DEFINITIONS, type CrdDefinition } from './definitions.js';
import { generateCrd } from './generate.js';
import { KruiseResources, resourceOf, storageVersionOf } from './resources.js';

const version = (name: string, storage: boolean): CrdDefinition['versions'][number] => ({
  name,
  served: true,
  storage,
  schema: CLONESET_CRD.versions[0]!.schema,
  printerColumns: [],
});

describe('resourceOf', () => {
  const twoVersions: CrdDefinition = {
    ...CLONESET_CRD,
    versions: [version('v1alpha1', false), version('v1beta1', true)],
  };

  it('addresses v1alpha1, the version Flotilla works in, even when another is stored', () => {
    expect(resourceOf(twoVersions)).toMatchObject({ group: 'apps.kruise.io', version: 'v1alpha1', namespaced: true });
    expect(resourceOf(twoVersions, 'v1beta1').version).toBe('v1beta1');
  });

  it('refuses a version the CRD does not serve, naming the CRD', () => {
    expect(() => resourceOf(twoVersions, 'v2')).toThrow(`CRD ${CLONESET_CRD.plural}.apps.kruise.io does not serve v2`);
  });
});

describe('storageVersionOf', () => {
  it('is the one stored version', () => {
    expect(
      storageVersionOf({ ...CLONESET_CRD, versions: [version('v1alpha1', false), version('v1beta1', true)] }),
    ).toBe('v1beta1');
  });

  it('refuses none or several, naming the CRD', () => {
    const message = `CRD ${CLONESET_CRD.plural}.apps.kruise.io must have exactly one storage version`;
    expect(() => storageVersionOf({ ...CLONESET_CRD, versions: [version('v1', false)] })).toThrow(message);
    expect(() => storageVersionOf({ ...CLONESET_CRD, versions: [version('a', true), version('b', true)] })).toThrow(
      message,
    );
  });
});

describe('KruiseResources', () => {
  it('has one entry per kind Flotilla serves', () => {
    expect(Object.keys(KruiseResources).sort()).toEqual([...KRUISE_KINDS].sort());
  });

  it.each(CRD_DEFINITIONS.map((d) => [d.kind, d] as const))('%s matches its generated CRD', (kind, definition) => {
    const crd = generateCrd(definition);
    const ref = KruiseResources[kind];
    expect(`${ref.plural}.${ref.group}`).toBe(crd.metadata.name);
    expect(ref.kind).toBe(crd.spec.names.kind);
    expect(ref.namespaced).toBe(crd.spec.scope === 'Namespaced');
    expect(crd.spec.versions.some((v) => v.served && v.name === ref.version)).toBe(true);
    expect(crd.spec.versions.filter((v) => v.storage).map((v) => v.name)).toEqual([storageVersionOf(definition)]);
  });
});
