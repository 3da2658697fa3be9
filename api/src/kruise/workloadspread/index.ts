export * from './schema.js';
export * from './constants.js';
export { defaultWorkloadSpread } from './defaults.js';
export {
  validateDefaultedWorkloadSpread,
  validateWorkloadSpread,
  validateWorkloadSpreadConflict,
} from './validation.js';
