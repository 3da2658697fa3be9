/**
 * Defaulting webhooks of the Kruise kinds (OpenKruise v1.9's paths, registry.ts): the patch that
 * applies OpenKruise's defaults for the kind. SidecarSets also get their two hash annotations,
 * computed on the defaulted spec as OpenKruise's webhook does, so that pods and the controller
 * compare the same values. A v1beta1 SidecarSet is converted to v1alpha1, defaulted and converted
 * back (the conversion is lossless, so the patch holds the defaults only); ImagePullJob and
 * NodeImage have the same fields the defaults touch at both versions and are defaulted as they come.
 */
import {
  ANNOTATION_SIDECARSET_HASH,
  ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
  defaultImagePullJob,
  KRUISE_API_VERSION,
  KRUISE_V1BETA1_API_VERSION,
  sidecarSetToV1alpha1,
  sidecarSetToV1beta1,
  defaultKruiseObject,
  sidecarSetHash,
  sidecarSetHashWithoutImage,
  type KruiseKindName,
  type KruiseObject,
  type SidecarSet,
} from '@flotilla/api';
import { allow, allowPatched, deny } from '../admission/review.js';
import type { AdmissionHandler } from '../admission/types.js';

/** The SidecarSet with its hash annotations set from its (defaulted) containers. */
export function withSidecarSetHashes(sidecarSet: SidecarSet): SidecarSet {
  return {
    ...sidecarSet,
    metadata: {
      ...sidecarSet.metadata,
      annotations: {
        ...sidecarSet.metadata?.annotations,
        [ANNOTATION_SIDECARSET_HASH]: sidecarSetHash(sidecarSet),
        [ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE]: sidecarSetHashWithoutImage(sidecarSet),
      },
    },
  };
}

/**
 * The object with the kind's defaults (and, for SidecarSets, hashes) applied. OpenKruise adds the
 * ImagePullJob deletion-protection finalizer when a job is created only: on an update it would put
 * back the finalizer the controller has just removed, and a finished job could never be deleted.
 */
export function defaultedObject(object: KruiseObject, operation: 'CREATE' | 'UPDATE' = 'CREATE'): KruiseObject {
  const defaulted =
    object.kind === 'ImagePullJob'
      ? defaultImagePullJob(object, { addProtectionFinalizer: operation === 'CREATE' })
      : defaultKruiseObject(object);
  return defaulted.kind === 'SidecarSet' ? withSidecarSetHashes(defaulted) : defaulted;
}

/** defaultedObject at the object's own version. */
function defaultedAtItsVersion(object: KruiseObject, operation: 'CREATE' | 'UPDATE'): unknown {
  if (object.kind !== 'SidecarSet' || (object.apiVersion as string) !== KRUISE_V1BETA1_API_VERSION) {
    return defaultedObject(object, operation);
  }
  const alpha = sidecarSetToV1alpha1(object, KRUISE_API_VERSION) as unknown as SidecarSet;
  return sidecarSetToV1beta1(defaultedObject(alpha, operation), KRUISE_V1BETA1_API_VERSION);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The defaulting handler for one kind; CREATE and UPDATE. */
export function kruiseDefaultingHandler(kind: KruiseKindName): AdmissionHandler {
  return (request) => {
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
    const object = request.object;
    if (!isObject(object) || object.kind !== kind) {
      return deny(
        `expected a ${kind}, got ${isObject(object) ? String(object.kind) : typeof object}`,
        400,
        'BadRequest',
      );
    }
    if (!isObject(object.spec)) return allow(); // the validating webhook names the missing spec
    let defaulted: unknown;
    try {
      defaulted = defaultedAtItsVersion(object as unknown as KruiseObject, request.operation);
    } catch {
      // Defaults assume schema-valid input; anything else is left to validation to explain.
      return allow();
    }
    return allowPatched(object, defaulted);
  };
}
