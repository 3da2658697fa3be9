/**
 * CustomResourceDefinitions generated from the Kruise schemas (pure; writing files is write.ts),
 * and the resource table derived from their definitions.
 */
export { CRD_DEFINITIONS, type CrdDefinition, type CrdVersion, type PrinterColumn } from './definitions.js';
export { type CustomResourceDefinition, generateAllCrds, generateCrd } from './generate.js';
export { crdFileName, renderCrdYaml } from './render.js';
export { type CrdSchema, structuralViolations, toCrdRootSchema, toCrdSchema } from './structural.js';
export { KruiseResources, resourceOf, type ResourceRef } from './resources.js';
