export * from './schema.js';
export {
  DEFAULT_SIDECARSET_MAX_UNAVAILABLE,
  DEFAULT_SIDECARSET_REVISION_HISTORY_LIMIT,
  defaultSidecarSet,
} from './defaults.js';
export { validateDefaultedSidecarSet, validateSidecarSet } from './validation.js';
export { validateSidecarSetUpdate } from './update.js';
export { computeResource, parseQuantityMilli, ResourceExprError, type QuantityFormat } from './resources-expr.js';
