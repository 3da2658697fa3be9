export {};
export * from './revision/index.js';
export * from './health/index.js';
