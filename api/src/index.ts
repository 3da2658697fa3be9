export * from './kruise/index.js';
export * from './crd/index.js';
export * from './validation/index.js';
export * from './rest/index.js';
export * from './protocol/index.js';
export * from './revision/index.js';
export * from './health/index.js';
export * from './rollout/index.js';
export * from './enums.js';
export * from './time/index.js';
// kruise/ and rest/ both name a LabelSelector; at the root the REST schema (value and type) wins,
// the Kruise one stays available as LabelSelectorSchema.
export { LabelSelector, LabelSelectorRequirement } from './rest/index.js';
export * from './schedule/index.js';
