/**
 * Advanced StatefulSet conversion between apps.kruise.io/v1alpha1 and v1beta1, pure.
 *
 * OpenKruise v1.9's mapping (apis/apps/v1alpha1/statefulset_conversion.go) copies every field
 * v1alpha1 has one to one, and to v1alpha1 drops what only v1beta1 has: spec reserveOrdinals,
 * lifecycle, scaleStrategy, persistentVolumeClaimRetentionPolicy, ordinals,
 * volumeClaimUpdateStrategy, and status updatedReadyReplicas, updatedAvailableReplicas,
 * volumeClaims.
 *
 * Losing spec fields means a v1alpha1 client's read-modify-write silently drops them (reserved
 * ordinals come back as pods, a Delete retention policy turns into Retain). Flotilla keeps the
 * dropped spec fields in one annotation on the v1alpha1 object, as JSON, and puts them back on
 * the way to v1beta1, so a round trip returns the spec exactly. v1alpha1 has no way to edit those
 * fields, so the saved parts are never stale. Dropped status counters are left to the controller,
 * which recomputes them.
 */
import { cloneJson, isRecord } from '../../validation/json.js';
import { STATEFULSET_V1BETA1_ONLY_SPEC, STATEFULSET_V1BETA1_ONLY_STATUS } from '../statefulset/schema.js';

/** On a v1alpha1 StatefulSet: the v1beta1-only spec fields, JSON of an object keyed by field. */
export const ANNOTATION_STATEFULSET_V1BETA1_PARTS = 'conversion.flotilla.io/statefulset-v1beta1';

type Json = Record<string, unknown>;

function annotationsOf(obj: Json): Json | undefined {
  const metadata = isRecord(obj.metadata) ? obj.metadata : undefined;
  return metadata && isRecord(metadata.annotations) ? metadata.annotations : undefined;
}

/** Removes annotation `key`, and the annotations map when it ends up empty. */
function dropAnnotation(obj: Json, key: string): void {
  const annotations = annotationsOf(obj);
  if (!annotations || !(key in annotations)) return;
  delete annotations[key];
  if (Object.keys(annotations).length === 0) delete (obj.metadata as Json).annotations;
}

/** The saved v1beta1 parts, or nothing when the annotation is absent or not an object's JSON. */
function savedParts(obj: Json): Json {
  const text = annotationsOf(obj)?.[ANNOTATION_STATEFULSET_V1BETA1_PARTS];
  if (typeof text !== 'string') return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

/** v1alpha1 → v1beta1: the fields as they are, plus the v1beta1-only spec fields saved on the way down. */
export function statefulSetToV1beta1(alpha: Json, apiVersion: string): Json {
  const beta = cloneJson(alpha);
  beta.apiVersion = apiVersion;
  const parts = savedParts(beta);
  dropAnnotation(beta, ANNOTATION_STATEFULSET_V1BETA1_PARTS);
  const spec = isRecord(beta.spec) ? beta.spec : undefined;
  if (spec) {
    for (const field of STATEFULSET_V1BETA1_ONLY_SPEC) {
      if (field in parts) spec[field] = parts[field];
    }
  }
  return beta;
}

/** v1beta1 → v1alpha1: OpenKruise's mapping, with the dropped spec fields saved in the annotation. */
export function statefulSetToV1alpha1(beta: Json, apiVersion: string): Json {
  const alpha = cloneJson(beta);
  alpha.apiVersion = apiVersion;
  const parts: Json = {};
  const spec = isRecord(alpha.spec) ? alpha.spec : undefined;
  for (const field of STATEFULSET_V1BETA1_ONLY_SPEC) {
    if (!spec || !(field in spec)) continue;
    parts[field] = spec[field];
    delete spec[field];
  }
  const status = isRecord(alpha.status) ? alpha.status : undefined;
  for (const field of STATEFULSET_V1BETA1_ONLY_STATUS) if (status) delete status[field];
  dropAnnotation(alpha, ANNOTATION_STATEFULSET_V1BETA1_PARTS);
  if (Object.keys(parts).length > 0) {
    const metadata = isRecord(alpha.metadata) ? alpha.metadata : (alpha.metadata = {});
    const annotations = isRecord(metadata.annotations) ? metadata.annotations : (metadata.annotations = {});
    annotations[ANNOTATION_STATEFULSET_V1BETA1_PARTS] = JSON.stringify(parts);
  }
  return alpha;
}
