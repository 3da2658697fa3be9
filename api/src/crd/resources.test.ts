import { describe, expect, it } from 'vitest';
import { KRUISE_KINDS } from '../kruise/constants.js';
import { CLONESET_CRD, CRD_DEFINITIONS, type CrdDefinition } from './definitions.js';
import { generateCrd } from './generate.js';
import { KruiseResources, resourceOf } from './resources.js';

describe('resourceOf', () => {
  it('addresses the storage version when a CRD serves several', () => {
    const definition: CrdDefinition = {
      ...CLONESET_CRD,
      versions: [
        { name: 'v1alpha1', served: true, storage: false },
        { name: 'v1beta1', served: true, storage: true },
      ],
    };
    expect(resourceOf(definition)).toMatchObject({ group: 'apps.kruise.io', version: 'v1beta1', namespaced: true });
  });

  it('refuses a definition without a storage version, naming the CRD', () => {
    const definition: CrdDefinition = { ...CLONESET_CRD, versions: [{ name: 'v1', served: true, storage: false }] };
    expect(() => resourceOf(definition)).toThrow(`CRD ${CLONESET_CRD.plural}.apps.kruise.io has no storage version`);
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
    expect(crd.spec.versions.filter((v) => v.storage).map((v) => v.name)).toEqual([ref.version]);
  });
});
