/**
 * CustomResourceDefinitions generated from the Kruise schemas (pure; writing files is write.ts),
 * and the resource table derived from their definitions.
 */
export {
  type ConversionStrategy,
  CRD_DEFINITIONS,
  type CrdDefinition,
  type CrdVersion,
  type PrinterColumn,
} from './definitions.js';
export {
  CONVERSION_REVIEW_VERSIONS,
  CONVERSION_SERVICE_PLACEHOLDER,
  CONVERSION_WEBHOOK_PATH,
  type CrdConversion,
  type CustomResourceDefinition,
  generateAllCrds,
  generateCrd,
} from './generate.js';
export { crdFileName, renderCrdYaml } from './render.js';
export { type CrdSchema, structuralViolations, toCrdRootSchema, toCrdSchema } from './structural.js';
export { KruiseResources, resourceOf, type ResourceRef, storageVersionOf, v1alpha1ApiVersionOf } from './resources.js';
