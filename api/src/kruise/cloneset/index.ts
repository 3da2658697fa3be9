export * from './schema.js';
export {
  DEFAULT_CLONESET_MAX_UNAVAILABLE,
  DEFAULT_CLONESET_REPLICAS,
  DEFAULT_REVISION_HISTORY_LIMIT,
  defaultCloneSet,
} from './defaults.js';
export { validateCloneSet, validateCloneSetForController, validateDefaultedCloneSet } from './validation.js';
export { CLONESET_MUTABLE_SPEC_FIELDS, validateCloneSetUpdate } from './update.js';
