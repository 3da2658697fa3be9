/** Validation and defaulting of any Kruise object, dispatched on its `kind`. */
import { type FieldError, forbidden, notSupported, typeInvalid } from '../validation/field-error.js';
import { isRecord } from '../validation/json.js';
import { defaultCloneSet } from './cloneset/defaults.js';
import type { CloneSet } from './cloneset/schema.js';
import { validateCloneSetUpdate } from './cloneset/update.js';
import { validateCloneSet } from './cloneset/validation.js';
import { defaultBroadcastJob } from './broadcastjob/defaults.js';
import type { BroadcastJob } from './broadcastjob/schema.js';
import { validateBroadcastJob } from './broadcastjob/validation.js';
import { defaultStatefulSet } from './statefulset/defaults.js';
import type { StatefulSet } from './statefulset/schema.js';
import { validateStatefulSetUpdate } from './statefulset/update.js';
import { validateStatefulSet } from './statefulset/validation.js';
import { defaultWorkloadSpread } from './workloadspread/defaults.js';
import type { WorkloadSpread } from './workloadspread/schema.js';
import { validateWorkloadSpread } from './workloadspread/validation.js';
import { KRUISE_KINDS, type KruiseKindName } from './constants.js';
import { defaultDaemonSet } from './daemonset/defaults.js';
import type { DaemonSet } from './daemonset/schema.js';
import { validateDaemonSetUpdate } from './daemonset/update.js';
import { validateDaemonSet } from './daemonset/validation.js';
import { defaultContainerRecreateRequest } from './containerrecreaterequest/defaults.js';
import type { ContainerRecreateRequest } from './containerrecreaterequest/schema.js';
import {
  validateContainerRecreateRequest,
  validateContainerRecreateRequestUpdate,
} from './containerrecreaterequest/validation.js';
import { asV1alpha1Document } from './conversion/index.js';
import { defaultImagePullJob } from './imagepulljob/defaults.js';
import type { ImagePullJob } from './imagepulljob/schema.js';
import { validateImagePullJob } from './imagepulljob/validation.js';
import { defaultNodeImage } from './nodeimage/defaults.js';
import type { NodeImage } from './nodeimage/schema.js';
import { validateNodeImage } from './nodeimage/validation.js';
import type { PodUnavailableBudget } from './podunavailablebudget/schema.js';
import {
  defaultPodUnavailableBudget,
  validatePodUnavailableBudget,
  validatePodUnavailableBudgetUpdate,
} from './podunavailablebudget/validation.js';
import { defaultSidecarSet } from './sidecarset/defaults.js';
import type { SidecarSet } from './sidecarset/schema.js';
import { validateSidecarSetUpdate } from './sidecarset/update.js';
import { validateSidecarSet } from './sidecarset/validation.js';

/** Any object of the kinds Flotilla serves. */
export type KruiseObject =
  | CloneSet
  | SidecarSet
  | ImagePullJob
  | NodeImage
  | BroadcastJob
  | PodUnavailableBudget
  | WorkloadSpread
  | DaemonSet
  | StatefulSet
  | ContainerRecreateRequest;

const VALIDATORS: Readonly<Record<KruiseKindName, (document: unknown) => FieldError[]>> = {
  CloneSet: validateCloneSet,
  SidecarSet: validateSidecarSet,
  ImagePullJob: validateImagePullJob,
  NodeImage: validateNodeImage,
  BroadcastJob: validateBroadcastJob,
  ContainerRecreateRequest: validateContainerRecreateRequest,
  StatefulSet: validateStatefulSet,
  DaemonSet: validateDaemonSet,
  WorkloadSpread: validateWorkloadSpread,
  PodUnavailableBudget: validatePodUnavailableBudget,
};

function isKruiseKind(kind: unknown): kind is KruiseKindName {
  return typeof kind === 'string' && (KRUISE_KINDS as readonly string[]).includes(kind);
}

/**
 * Every problem with a document claiming to be a CloneSet, SidecarSet, ImagePullJob, NodeImage or
 * BroadcastJob,
 * at v1alpha1 or (the kinds OpenKruise v1.9 serves so) v1beta1, which is judged as its v1alpha1
 * conversion; empty when OpenKruise would accept it. Never throws, whatever the input.
 */
export function validateKruiseObject(input: unknown): FieldError[] {
  const converted = asV1alpha1Document(input);
  if (!converted.ok) return converted.errors;
  const document = converted.document;
  if (!isRecord(document)) return [typeInvalid('', document, 'object')];
  const { kind } = document;
  if (!isKruiseKind(kind)) return [notSupported('kind', kind, KRUISE_KINDS)];
  return VALIDATORS[kind](document);
}

const UPDATE_VALIDATORS: Readonly<Record<KruiseKindName, (next: unknown, previous: unknown) => FieldError[]>> = {
  CloneSet: validateCloneSetUpdate,
  SidecarSet: validateSidecarSetUpdate,
  // OpenKruise has no update-only rules for these kinds: the new object is validated as on create.
  ImagePullJob: (next) => validateImagePullJob(next),
  NodeImage: (next) => validateNodeImage(next),
  BroadcastJob: (next) => validateBroadcastJob(next),
  ContainerRecreateRequest: validateContainerRecreateRequestUpdate,
  StatefulSet: validateStatefulSetUpdate,
  DaemonSet: validateDaemonSetUpdate,
  WorkloadSpread: (next) => validateWorkloadSpread(next),
  PodUnavailableBudget: validatePodUnavailableBudgetUpdate,
};

/**
 * Problems with replacing `previous` by `next` (an UPDATE in admission terms): everything
 * validateKruiseObject reports for `next`, plus the kind's rules about what may change; a change
 * of kind is reported on `kind`. Either may be v1beta1 (judged as converted). Never throws.
 */
export function validateKruiseObjectUpdate(nextInput: unknown, previousInput: unknown): FieldError[] {
  const converted = asV1alpha1Document(nextInput);
  if (!converted.ok) return converted.errors;
  const next = converted.document;
  const previousConverted = asV1alpha1Document(previousInput);
  const previous = previousConverted.ok ? previousConverted.document : previousInput;
  if (!isRecord(next)) return [typeInvalid('', next, 'object')];
  const { kind } = next;
  if (!isKruiseKind(kind)) return [notSupported('kind', kind, KRUISE_KINDS)];
  if (isRecord(previous) && previous.kind !== kind) {
    return [...VALIDATORS[kind](next), forbidden('kind', 'the kind of an object cannot change')];
  }
  return UPDATE_VALIDATORS[kind](next, previous);
}

/** A copy of the object with OpenKruise's defaults for its kind applied. */
export function defaultKruiseObject<T extends KruiseObject>(object: T): T {
  switch (object.kind) {
    case 'CloneSet':
      return defaultCloneSet(object) as T;
    case 'SidecarSet':
      return defaultSidecarSet(object) as T;
    case 'ImagePullJob':
      return defaultImagePullJob(object) as T;
    case 'NodeImage':
      return defaultNodeImage(object) as T;
    case 'BroadcastJob':
      return defaultBroadcastJob(object) as T;
    case 'StatefulSet':
      return defaultStatefulSet(object) as T;
    case 'DaemonSet':
      return defaultDaemonSet(object) as T;
    case 'WorkloadSpread':
      return defaultWorkloadSpread(object) as T;
    case 'ContainerRecreateRequest':
      return defaultContainerRecreateRequest(object) as T;
    case 'PodUnavailableBudget':
      return defaultPodUnavailableBudget(object) as T;
  }
}
