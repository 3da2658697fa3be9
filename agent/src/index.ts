export {};
export * from './hublink/index.js';
