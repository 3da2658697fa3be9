export * from './schema.js';
export { DEFAULT_BROADCASTJOB_PARALLELISM, defaultBroadcastJob } from './defaults.js';
export { validateBroadcastJob, validateDefaultedBroadcastJob } from './validation.js';
