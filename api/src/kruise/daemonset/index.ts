export * from './schema.js';
export {
  DEFAULT_DAEMONSET_BURST_REPLICAS,
  DEFAULT_DAEMONSET_REVISION_HISTORY_LIMIT,
  defaultDaemonSet,
} from './defaults.js';
export { validateDaemonSet, validateDefaultedDaemonSet } from './validation.js';
export { DAEMONSET_MUTABLE_SPEC_FIELDS, validateDaemonSetUpdate } from './update.js';
