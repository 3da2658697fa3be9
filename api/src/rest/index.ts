export * from './common.js';
export * from './tokens.js';
export * from './clusters.js';
export * from './workloads.js';
export * from './status.js';
export * from './audit.js';
export * from './rollouts.js';
export * from './policies.js';
