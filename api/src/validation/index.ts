/** Field errors and the Kubernetes value formats every API of Flotilla validates with. */
export * from './field-error.js';
export { parseImageReference, effectiveImageTag, type ImageReference, type ParsedImageReference } from './image-ref.js';
export {
  type IntOrString,
  parseIntOrPercent,
  PERCENT_PATTERN,
  scaledValue,
  type ParsedIntOrPercent,
} from './intstr.js';
export {
  isEmptySelector,
  type LabelSelectorLike,
  selectorMatches,
  validateAnnotations,
  validateLabels,
  validateLabelSelector,
} from './labels.js';
export { cloneJson, isRecord, jsonEqual, setOwn } from './json.js';
export * from './names.js';
export { toFieldErrors } from './schema-errors.js';
