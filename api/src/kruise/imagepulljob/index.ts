export * from './schema.js';
export {
  DEFAULT_IMAGE_PULL_JOB_PARALLELISM,
  DEFAULT_PULL_BACKOFF_LIMIT,
  DEFAULT_PULL_TIMEOUT_SECONDS,
  defaultImagePullJob,
  type ImagePullJobDefaultOptions,
} from './defaults.js';
export { validateDefaultedImagePullJob, validateImagePullJob } from './validation.js';
