/**
 * Pure generation of CustomResourceDefinition objects (apiextensions.k8s.io/v1) from the
 * definitions and schemas in api/. No I/O: `write.ts` renders and stores the result.
 */
import { CRD_DEFINITIONS, type CrdDefinition, type PrinterColumn, type ScaleSubresource } from './definitions.js';
import { type CrdSchema, toCrdRootSchema } from './structural.js';

/** Where the agent serves ConversionReviews (OpenKruise v1.9's path). */
export const CONVERSION_WEBHOOK_PATH = '/convert';

/**
 * The Service a generated CRD's conversion webhook points at until an installer or the agent
 * writes the real one with the CA bundle (the Helm chart renders its release's Service; the
 * agent rewrites `clientConfig` whole, as OpenKruise's manager does). The apiserver requires a
 * clientConfig for strategy Webhook even before anything serves it.
 */
export const CONVERSION_SERVICE_PLACEHOLDER = { namespace: 'flotilla-system', name: 'flotilla-webhook-service' };

/** The ConversionReview versions the agent answers, as OpenKruise v1.9 declares them. */
export const CONVERSION_REVIEW_VERSIONS = ['v1', 'v1beta1'];

export interface CrdConversion {
  strategy: 'Webhook';
  webhook: {
    clientConfig: {
      service?: { namespace: string; name: string; path: string; port: number };
      url?: string;
      caBundle?: string;
    };
    conversionReviewVersions: string[];
  };
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames?: string[] };
    scope: 'Namespaced' | 'Cluster';
    /** Absent means None, as in OpenKruise's CRDs without a conversion webhook. */
    conversion?: CrdConversion;
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
      ...(definition.conversion === 'Webhook' ? { conversion: webhookConversion() } : {}),
      versions: definition.versions.map(({ name, served, storage, schema, printerColumns }) => ({
        name,
        served,
        storage,
        additionalPrinterColumns: printerColumns.map((c) => ({ ...c })),
        schema: { openAPIV3Schema: { description: definition.description, ...toCrdRootSchema(schema) } },
        subresources: { status: {}, ...(definition.scale ? { scale: { ...definition.scale } } : {}) },
      })),
    },
  };
}

function webhookConversion(): CrdConversion {
  return {
    strategy: 'Webhook',
    webhook: {
      clientConfig: { service: { ...CONVERSION_SERVICE_PLACEHOLDER, path: CONVERSION_WEBHOOK_PATH, port: 443 } },
      conversionReviewVersions: [...CONVERSION_REVIEW_VERSIONS],
    },
  };
}

/** The CRDs of every kind Flotilla serves. */
export function generateAllCrds(): CustomResourceDefinition[] {
  return CRD_DEFINITIONS.map(generateCrd);
}
