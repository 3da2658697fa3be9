export * from './clusters.js';
export * from './tokens.js';
export * from './workloads.js';
export * from './desired.js';
export * from './status.js';
export * from './outbox.js';
export * from './audit.js';
export * from './rollouts.js';
