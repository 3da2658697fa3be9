export * from './schema.js';
export { defaultNodeImage, kubernetesTime } from './defaults.js';
export { MAX_IMAGES_PER_NODE, validateDefaultedNodeImage, validateNodeImage } from './validation.js';
