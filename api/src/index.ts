export {};
export * from './revision/index.js';
export * from './health/index.js';
export * from './rest/index.js';
export * from './protocol/index.js';
