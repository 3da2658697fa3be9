/**
 * Pure generation of CustomResourceDefinition objects (apiextensions.k8s.io/v1) from the
 * definitions and schemas in api/. No I/O: `write.ts` renders and stores the result.
 */
import { CRD_DEFINITIONS, type CrdDefinition, type PrinterColumn, type ScaleSubresource } from './definitions.js';
import { type CrdSchema, toCrdRootSchema } from './structural.js';

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames?: string[] };
    scope: 'Namespaced' | 'Cluster';
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      additionalPrinterColumns: PrinterColumn[];
      schema: { openAPIV3Schema: CrdSchema };
      subresources: { status: Record<string, never>; scale?: ScaleSubresource };
    }>;
  };
}

/** The CRD for one kind, with one entry per version of its definition. */
export function generateCrd(definition: CrdDefinition): CustomResourceDefinition {
  const { group, kind, plural, singular, shortNames, scope } = definition;
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      names: {
        kind,
        listKind: `${kind}List`,
        plural,
        singular,
        ...(shortNames.length > 0 ? { shortNames: [...shortNames] } : {}),
      },
      scope,
      versions: definition.versions.map(({ name, served, storage }) => ({
        name,
        served,
        storage,
        additionalPrinterColumns: definition.printerColumns.map((c) => ({ ...c })),
        schema: { openAPIV3Schema: { description: definition.description, ...toCrdRootSchema(definition.schema) } },
        subresources: { status: {}, ...(definition.scale ? { scale: { ...definition.scale } } : {}) },
      })),
    },
  };
}

/** The CRDs of every kind Flotilla serves. */
export function generateAllCrds(): CustomResourceDefinition[] {
  return CRD_DEFINITIONS.map(generateCrd);
}
