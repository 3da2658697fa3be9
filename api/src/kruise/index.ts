/** The OpenKruise API (apps.kruise.io/v1alpha1) as Flotilla serves it: schemas, types, defaults, validation. */
export * from './constants.js';
export * from './common/markers.js';
export * from './common/meta.js';
export * from './common/pod.js';
export * from './common/strategy.js';
export { checkSchema, isReadable } from './common/validate-object.js';
export * from './cloneset/index.js';
export * from './sidecarset/index.js';
export * from './imagepulljob/index.js';
export * from './nodeimage/index.js';
export * from './broadcastjob/index.js';
export * from './statefulset/index.js';
export * from './daemonset/index.js';
export * from './workloadspread/index.js';
export * from './containerrecreaterequest/index.js';
export * from './podunavailablebudget/index.js';
export * from './conversion/index.js';
export {
  defaultKruiseObject,
  type KruiseObject,
  validateKruiseObject,
  validateKruiseObjectUpdate,
} from './validate.js';
