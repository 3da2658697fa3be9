export * from './schema.js';
export { defaultContainerRecreateRequest } from './defaults.js';
export { containerRecreateRequestFromPod, isPodActive, type CrrFromPod, type CrrSourcePod } from './from-pod.js';
export {
  CRR_MIN_DEADLINE_SECONDS,
  validateContainerRecreateRequest,
  validateContainerRecreateRequestUpdate,
  validateDefaultedContainerRecreateRequest,
} from './validation.js';
