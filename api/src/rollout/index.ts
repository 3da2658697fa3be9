export * from './strategy.js';
export { validateRolloutStrategy } from './validation.js';
export * from './analysis.js';
