export * from './schema.js';
export {
  defaultPodUnavailableBudget,
  validatePodUnavailableBudget,
  validatePodUnavailableBudgetUpdate,
  validateDefaultedPodUnavailableBudget,
} from './validation.js';
