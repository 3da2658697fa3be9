/**
 * A workload template (the hub's REST body: metadata, spec, per-cluster spec overrides) written at
 * v1beta1, as its v1alpha1 form, the version the hub stores and sends. SidecarSets go through the
 * converter; ImagePullJob's versions are the same (only apiVersion goes). An override is a merge patch of the spec and
 * cannot be converted on its own, so one touching a field without a counterpart is refused.
 */
import {
  KRUISE_API_VERSION,
  KRUISE_V1BETA1_API_VERSION,
  KRUISE_V1BETA1,
  KruiseKind,
  PUB_API_VERSION,
  type KruiseKindName,
} from '../constants.js';
import { childPath, type FieldError, forbidden, notSupported } from '../../validation/field-error.js';
import { isRecord } from '../../validation/json.js';
import { asV1alpha1Document } from './index.js';
import { STATEFULSET_V1BETA1_ONLY_SPEC } from '../statefulset/schema.js';

export interface TemplateLike {
  apiVersion?: string;
  metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
  overrides?: Record<string, Record<string, unknown>>;
}

/** Kinds whose v1beta1 templates the hub accepts, and the spec fields an override may not set. */
const V1BETA1_TEMPLATES: Readonly<Partial<Record<KruiseKindName, readonly string[]>>> = {
  [KruiseKind.SidecarSet]: ['customVersion', 'namespace'],
  [KruiseKind.ImagePullJob]: [],
  // A v1beta1-only field travels in the v1alpha1 template's conversion annotation, not in its spec.
  [KruiseKind.StatefulSet]: STATEFULSET_V1BETA1_ONLY_SPEC,
};

export type TemplateOutcome<T> = { ok: true; template: T } | { ok: false; errors: FieldError[] };

/** Overrides setting a field v1alpha1 keeps elsewhere (or not at all). */
function frozenOverrides(overrides: TemplateLike['overrides'], frozen: readonly string[]): FieldError[] {
  const errors: FieldError[] = [];
  for (const [cluster, patch] of Object.entries(overrides ?? {})) {
    for (const field of frozen.filter((f) => isRecord(patch) && f in patch)) {
      const detail = `set ${field} in spec, not per cluster, at ${KRUISE_V1BETA1}`;
      errors.push(forbidden(childPath(`overrides.${cluster}`, field), detail));
    }
  }
  return errors;
}

/** `template` without apiVersion, at v1alpha1; errors name the request's fields. */
export function templateAsV1alpha1<T extends TemplateLike>(kind: KruiseKindName, template: T): TemplateOutcome<T> {
  const { apiVersion, ...rest } = template;
  // PodUnavailableBudget is policy.kruise.io's, at v1alpha1 only.
  const own = kind === KruiseKind.PodUnavailableBudget ? PUB_API_VERSION : KRUISE_API_VERSION;
  if (apiVersion === undefined || apiVersion === own) return { ok: true, template: rest as T };
  const frozen = V1BETA1_TEMPLATES[kind];
  if (apiVersion !== KRUISE_V1BETA1_API_VERSION || !frozen) {
    const supported = frozen ? [own, KRUISE_V1BETA1_API_VERSION] : [own];
    return { ok: false, errors: [notSupported('apiVersion', apiVersion, supported)] };
  }
  const errors = frozenOverrides(template.overrides, frozen);
  const converted = asV1alpha1Document({ apiVersion, kind, metadata: template.metadata ?? {}, spec: template.spec });
  if (!converted.ok) errors.push(...converted.errors);
  if (errors.length > 0 || !converted.ok) return { ok: false, errors };
  const { metadata, spec } = converted.document as { metadata: T['metadata']; spec: T['spec'] };
  const keepMetadata = template.metadata !== undefined || Object.keys(metadata ?? {}).length > 0;
  return { ok: true, template: { ...rest, ...(keepMetadata ? { metadata } : {}), spec } as T };
}
