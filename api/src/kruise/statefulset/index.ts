export * from './schema.js';
export * from './constants.js';
export {
  DEFAULT_STATEFULSET_REPLICAS,
  DEFAULT_STATEFULSET_REVISION_HISTORY_LIMIT,
  defaultStatefulSet,
} from './defaults.js';
export { parseReserveOrdinal, reservedOrdinals } from './ordinals.js';
export { parseStatefulSet, validateDefaultedStatefulSet, validateStatefulSet } from './validation.js';
export { validateStatefulSetUpdate } from './update.js';
