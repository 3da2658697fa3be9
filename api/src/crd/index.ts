/** CustomResourceDefinitions generated from the Kruise schemas (pure; writing files is write.ts). */
export { CRD_DEFINITIONS, type CrdDefinition, type PrinterColumn } from './definitions.js';
export { type CustomResourceDefinition, generateAllCrds, generateCrd } from './generate.js';
export { crdFileName, renderCrdYaml } from './render.js';
export { type CrdSchema, structuralViolations, toCrdRootSchema, toCrdSchema } from './structural.js';
