/**
 * Conversion of Kruise objects between the API versions a CRD serves, for the agent's conversion
 * webhook: which kinds convert, the checks on the fields a converter reads (malformed input gets
 * field errors, never an exception), and the dispatch to the kind's pure converter.
 */
import {
  DAEMONSET_ROLLING_UPDATE_SURGING,
  DAEMONSET_ROLLING_UPDATE_TYPES,
  KRUISE_API_VERSION,
  KRUISE_V1BETA1_API_VERSION,
  KruiseKind,
  type KruiseKindName,
} from '../constants.js';
import { childPath, type FieldError, notSupported, typeInvalid } from '../../validation/field-error.js';
import { cloneJson, isRecord } from '../../validation/json.js';
import type { TSchema } from 'typebox';
import { checkSchema } from '../common/validate-object.js';
import { BroadcastJobSchema } from '../broadcastjob/schema.js';
import { ImagePullJobSchema } from '../imagepulljob/schema.js';
import { NodeImageV1beta1Schema } from '../nodeimage/schema.js';
import { SidecarSetV1beta1Schema } from '../sidecarset/schema.js';
import { sidecarSetToV1alpha1, sidecarSetToV1beta1 } from './sidecarset.js';
import { statefulSetToV1alpha1, statefulSetToV1beta1 } from './statefulset.js';
import { StatefulSetSchema } from '../statefulset/schema.js';
import { DaemonSetV1beta1Schema } from '../daemonset/schema.js';
import { daemonSetToV1alpha1, daemonSetToV1beta1 } from './daemonset.js';

export {
  ANNOTATION_SIDECARSET_V1ALPHA1_PARTS,
  ANNOTATION_SIDECARSET_V1BETA1_PARTS,
  LABEL_NAMESPACE_NAME,
  sidecarSetToV1alpha1,
  sidecarSetToV1beta1,
} from './sidecarset.js';
export { ANNOTATION_STATEFULSET_V1BETA1_PARTS, statefulSetToV1alpha1, statefulSetToV1beta1 } from './statefulset.js';
export { daemonSetToV1alpha1, daemonSetToV1beta1 } from './daemonset.js';

type Json = Record<string, unknown>;

interface Converter {
  toV1beta1(obj: Json, apiVersion: string): Json;
  toV1alpha1(obj: Json, apiVersion: string): Json;
  /** Fields the converter reads, with the JSON type each must have when present. */
  fields: readonly (readonly [path: readonly string[], type: 'string' | 'object'])[];
}

/** The kinds whose CRD converts through the webhook (OpenKruise v1.9: SidecarSet among ours). */
export const CONVERTERS: Readonly<Partial<Record<KruiseKindName, Converter>>> = {
  [KruiseKind.SidecarSet]: {
    toV1beta1: sidecarSetToV1beta1,
    toV1alpha1: sidecarSetToV1alpha1,
    fields: [
      [['metadata'], 'object'],
      [['metadata', 'labels'], 'object'],
      [['metadata', 'annotations'], 'object'],
      [['spec'], 'object'],
      [['spec', 'namespace'], 'string'],
      [['spec', 'namespaceSelector'], 'object'],
      [['spec', 'customVersion'], 'string'],
    ],
  },
  [KruiseKind.StatefulSet]: {
    toV1beta1: statefulSetToV1beta1,
    toV1alpha1: statefulSetToV1alpha1,
    fields: [
      [['metadata'], 'object'],
      [['metadata', 'annotations'], 'object'],
      [['spec'], 'object'],
      [['status'], 'object'],
    ],
  },
  [KruiseKind.DaemonSet]: {
    toV1beta1: daemonSetToV1beta1,
    toV1alpha1: daemonSetToV1alpha1,
    fields: [
      [['metadata'], 'object'],
      [['metadata', 'annotations'], 'object'],
      [['spec'], 'object'],
      [['spec', 'updateStrategy'], 'object'],
      [['spec', 'updateStrategy', 'rollingUpdate'], 'object'],
      [['spec', 'scaleStrategy'], 'object'],
      [['status'], 'object'],
    ],
  },
};

export const CONVERTIBLE_API_VERSIONS: readonly string[] = [KRUISE_API_VERSION, KRUISE_V1BETA1_API_VERSION];

export type ConversionOutcome = { ok: true; object: Json } | { ok: false; errors: FieldError[] };

/** The field errors of the fields `converter` reads; `path` prefixes every error's path. */
function fieldErrors(obj: Json, converter: Converter, path: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const [steps, type] of converter.fields) {
    let value: unknown = obj;
    for (const step of steps) value = isRecord(value) ? value[step] : undefined;
    if (value === undefined) continue;
    const ok = type === 'string' ? typeof value === 'string' : isRecord(value);
    if (!ok) errors.push(typeInvalid(steps.reduce(childPath, path), value, type));
  }
  for (const map of ['labels', 'annotations']) {
    const entries = isRecord(obj.metadata) ? obj.metadata[map] : undefined;
    if (!isRecord(entries)) continue;
    for (const [key, v] of Object.entries(entries)) {
      if (typeof v !== 'string') errors.push(typeInvalid(`${childPath(path, `metadata.${map}`)}[${key}]`, v, 'string'));
    }
  }
  return errors;
}

/**
 * `obj` at `desiredAPIVersion`. `path` names the object in error paths (e.g. `request.objects[2]`);
 * an object already at the desired version comes back as it is.
 */
export function convertKruiseObject(obj: unknown, desiredAPIVersion: string, path = ''): ConversionOutcome {
  if (!isRecord(obj)) return { ok: false, errors: [typeInvalid(path, obj, 'object')] };
  const errors: FieldError[] = [];
  if (!CONVERTIBLE_API_VERSIONS.includes(desiredAPIVersion)) {
    errors.push(notSupported('desiredAPIVersion', desiredAPIVersion, CONVERTIBLE_API_VERSIONS));
  }
  if (!CONVERTIBLE_API_VERSIONS.includes(String(obj.apiVersion))) {
    errors.push(notSupported(childPath(path, 'apiVersion'), obj.apiVersion, CONVERTIBLE_API_VERSIONS));
  }
  const converter = CONVERTERS[obj.kind as KruiseKindName];
  if (!converter || !Object.prototype.hasOwnProperty.call(CONVERTERS, String(obj.kind))) {
    errors.push(notSupported(childPath(path, 'kind'), obj.kind, Object.keys(CONVERTERS)));
  } else {
    errors.push(...fieldErrors(obj, converter, path));
  }
  if (errors.length > 0 || !converter) return { ok: false, errors };
  if (obj.apiVersion === desiredAPIVersion) return { ok: true, object: obj };
  const object =
    desiredAPIVersion === KRUISE_V1BETA1_API_VERSION
      ? converter.toV1beta1(obj, desiredAPIVersion)
      : converter.toV1alpha1(obj, desiredAPIVersion);
  return { ok: true, object };
}

/** The v1beta1 schemas a v1beta1 document is checked against before it is converted. */
const V1BETA1_SCHEMAS: Readonly<Partial<Record<KruiseKindName, TSchema>>> = {
  [KruiseKind.SidecarSet]: SidecarSetV1beta1Schema,
  [KruiseKind.ImagePullJob]: ImagePullJobSchema,
  [KruiseKind.NodeImage]: NodeImageV1beta1Schema,
  [KruiseKind.BroadcastJob]: BroadcastJobSchema,
  [KruiseKind.StatefulSet]: StatefulSetSchema,
  [KruiseKind.DaemonSet]: DaemonSetV1beta1Schema,
};

type Validated = { ok: true; document: unknown } | { ok: false; errors: FieldError[] };

/** A v1beta1 NodeImage as v1alpha1: pull secrets' `mode`, which v1alpha1 lacks, is checked and left out. */
function nodeImageAsV1alpha1(document: Json): Validated {
  const copy = cloneJson(document);
  copy.apiVersion = KRUISE_API_VERSION;
  const images = isRecord(copy.spec) && isRecord(copy.spec.images) ? copy.spec.images : {};
  const errors: FieldError[] = [];
  for (const [image, spec] of Object.entries(images)) {
    const secrets = isRecord(spec) && Array.isArray(spec.pullSecrets) ? spec.pullSecrets : [];
    secrets.forEach((secret: unknown, i) => {
      if (!isRecord(secret) || !('mode' in secret)) return;
      if (typeof secret.mode !== 'string') {
        errors.push(typeInvalid(`spec.images[${image}].pullSecrets[${i}].mode`, secret.mode, 'string'));
      }
      delete secret.mode;
    });
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, document: copy };
}

/** A v1beta1 DaemonSet as v1alpha1; `Surging`, which only v1alpha1 admits, is refused first. */
function daemonSetAsV1alpha1(document: Json): Validated {
  const spec = isRecord(document.spec) ? document.spec : {};
  const strategy = isRecord(spec.updateStrategy) ? spec.updateStrategy : {};
  const type = isRecord(strategy.rollingUpdate) ? strategy.rollingUpdate.rollingUpdateType : undefined;
  if (type === DAEMONSET_ROLLING_UPDATE_SURGING) {
    return {
      ok: false,
      errors: [
        notSupported('spec.updateStrategy.rollingUpdate.rollingUpdateType', type, DAEMONSET_ROLLING_UPDATE_TYPES),
      ],
    };
  }
  const outcome = convertKruiseObject(document, KRUISE_API_VERSION);
  return outcome.ok ? { ok: true, document: outcome.object } : outcome;
}

/**
 * A Kruise document of either served version as v1alpha1, the version validation and defaulting
 * are written for: SidecarSets through the converter, ImagePullJobs and BroadcastJobs (the same
 * schema at both versions) and
 * NodeImages by their apiVersion. Anything else comes back unchanged for validation to judge.
 */
export function asV1alpha1Document(document: unknown): Validated {
  if (!isRecord(document) || document.apiVersion !== KRUISE_V1BETA1_API_VERSION) return { ok: true, document };
  // Own keys only: a kind such as "valueOf" must not find Object.prototype's function.
  const schema = Object.hasOwn(V1BETA1_SCHEMAS, String(document.kind))
    ? V1BETA1_SCHEMAS[document.kind as KruiseKindName]
    : undefined;
  const schemaErrors = schema ? checkSchema(schema, document) : [];
  if (schemaErrors.length > 0) return { ok: false, errors: schemaErrors };
  switch (document.kind) {
    case KruiseKind.DaemonSet:
      return daemonSetAsV1alpha1(document);
    case KruiseKind.StatefulSet:
    case KruiseKind.SidecarSet: {
      const outcome = convertKruiseObject(document, KRUISE_API_VERSION);
      return outcome.ok ? { ok: true, document: outcome.object } : outcome;
    }
    case KruiseKind.ImagePullJob:
    case KruiseKind.BroadcastJob:
      return { ok: true, document: { ...document, apiVersion: KRUISE_API_VERSION } };
    case KruiseKind.NodeImage:
      return nodeImageAsV1alpha1(document);
    default:
      return { ok: true, document };
  }
}

export { templateAsV1alpha1, type TemplateLike, type TemplateOutcome } from './template.js';
