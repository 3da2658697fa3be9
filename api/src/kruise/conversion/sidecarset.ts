/**
 * SidecarSet conversion between apps.kruise.io/v1alpha1 and v1beta1, pure.
 *
 * The mapping is OpenKruise v1.9's (apis/apps/v1alpha1/sidecarset_conversion.go):
 * - to v1beta1: a non-empty `spec.namespace` becomes `namespaceSelector` matching the namespace's
 *   `kubernetes.io/metadata.name` label (a v1alpha1 namespaceSelector next to it is dropped);
 *   the label `apps.kruise.io/sidecarset-custom-version` becomes `spec.customVersion` and leaves
 *   the labels;
 * - to v1alpha1: namespaceSelector is copied and `namespace` stays empty; a non-empty
 *   customVersion becomes the label.
 * Everything else, metadata included, is copied as it is.
 *
 * That mapping loses what the other version cannot hold (a namespace, a selector next to it, an
 * empty custom version, a v1beta1 object's own copy of the label). OpenKruise keeps nothing of it;
 * Flotilla keeps it in one annotation per direction, as JSON of the lost parts, and restores it on
 * the way back — but only when the object still maps to what it was converted to, so an annotation
 * made stale by an edit in the other version is dropped instead of undoing the edit. A round trip
 * therefore returns its input exactly, and the apiserver's rule that a conversion changes no
 * metadata but labels and annotations holds.
 */
import { LABEL_SIDECARSET_CUSTOM_VERSION } from '../constants.js';
import { cloneJson, isRecord, jsonEqual } from '../../validation/json.js';

/** On a v1beta1 object: the v1alpha1 parts v1beta1 cannot hold (JSON of AlphaParts). */
export const ANNOTATION_SIDECARSET_V1ALPHA1_PARTS = 'conversion.flotilla.io/sidecarset-v1alpha1';
/** On a v1alpha1 object: the v1beta1 parts v1alpha1 cannot hold (JSON of BetaParts). */
export const ANNOTATION_SIDECARSET_V1BETA1_PARTS = 'conversion.flotilla.io/sidecarset-v1beta1';

/** The label the namespace of a v1alpha1 SidecarSet is matched by in v1beta1. */
export const LABEL_NAMESPACE_NAME = 'kubernetes.io/metadata.name';

type Json = Record<string, unknown>;

/** A field that may be absent: `{}` when absent, `{ value }` when present (even empty). */
type Present = { value?: unknown };

/** What converting v1alpha1 → v1beta1 may lose. */
interface AlphaParts {
  namespace: Present;
  namespaceSelector: Present;
  label: Present;
}

/** What converting v1beta1 → v1alpha1 may lose. */
interface BetaParts {
  customVersion: Present;
  label: Present;
}

const present = (obj: Json | undefined, key: string): Present =>
  obj !== undefined && Object.prototype.hasOwnProperty.call(obj, key) ? { value: obj[key] } : {};

/** Sets `obj.spec[key]` as `p` says (deletes it when absent). */
function putSpec(obj: Json, key: string, p: Present): void {
  const spec = specOf(obj);
  if ('value' in p) spec[key] = p.value;
  else delete spec[key];
  if (isRecord(obj.spec) || Object.keys(spec).length > 0) obj.spec = spec;
}

const metadataOf = (obj: Json): Json => (isRecord(obj.metadata) ? obj.metadata : {});
const specOf = (obj: Json): Json => (isRecord(obj.spec) ? obj.spec : {});
const labelsOf = (obj: Json): Json | undefined => {
  const labels = metadataOf(obj).labels;
  return isRecord(labels) ? labels : undefined;
};

/**
 * Sets `metadata.<map>[key]` as `p` says. A map left empty is removed, as the apiserver's
 * encoding of ObjectMeta never keeps one; nothing is created to remove nothing.
 */
function putMeta(obj: Json, map: 'labels' | 'annotations', key: string, p: Present): void {
  const metadata = metadataOf(obj);
  const entries = isRecord(metadata[map]) ? metadata[map] : {};
  if (!('value' in p) && !Object.prototype.hasOwnProperty.call(entries, key)) return;
  if ('value' in p) entries[key] = p.value;
  else delete entries[key];
  if (Object.keys(entries).length > 0) metadata[map] = entries;
  else delete metadata[map];
  obj.metadata = metadata;
}

/** OpenKruise v1.9's ConvertTo on a copy. */
function v19ToBeta(alpha: Json, apiVersion: string): Json {
  const beta = cloneJson(alpha);
  beta.apiVersion = apiVersion;
  const namespace = specOf(beta).namespace;
  putSpec(beta, 'namespace', {});
  if (typeof namespace === 'string' && namespace !== '') {
    putSpec(beta, 'namespaceSelector', { value: { matchLabels: { [LABEL_NAMESPACE_NAME]: namespace } } });
  }
  const label = present(labelsOf(beta), LABEL_SIDECARSET_CUSTOM_VERSION);
  if ('value' in label) {
    putSpec(beta, 'customVersion', label);
    putMeta(beta, 'labels', LABEL_SIDECARSET_CUSTOM_VERSION, {});
  }
  return beta;
}

/** OpenKruise v1.9's ConvertFrom on a copy. */
function v19ToAlpha(beta: Json, apiVersion: string): Json {
  const alpha = cloneJson(beta);
  alpha.apiVersion = apiVersion;
  const customVersion = specOf(alpha).customVersion;
  putSpec(alpha, 'customVersion', {});
  if (typeof customVersion === 'string' && customVersion !== '') {
    putMeta(alpha, 'labels', LABEL_SIDECARSET_CUSTOM_VERSION, { value: customVersion });
  }
  return alpha;
}

const alphaParts = (alpha: Json): AlphaParts => ({
  namespace: present(specOf(alpha), 'namespace'),
  namespaceSelector: present(specOf(alpha), 'namespaceSelector'),
  label: present(labelsOf(alpha), LABEL_SIDECARSET_CUSTOM_VERSION),
});

const betaParts = (beta: Json): BetaParts => ({
  customVersion: present(specOf(beta), 'customVersion'),
  label: present(labelsOf(beta), LABEL_SIDECARSET_CUSTOM_VERSION),
});

function withAlphaParts(alpha: Json, parts: AlphaParts): Json {
  const out = cloneJson(alpha);
  putSpec(out, 'namespace', parts.namespace);
  putSpec(out, 'namespaceSelector', parts.namespaceSelector);
  putMeta(out, 'labels', LABEL_SIDECARSET_CUSTOM_VERSION, parts.label);
  return out;
}

function withBetaParts(beta: Json, parts: BetaParts): Json {
  const out = cloneJson(beta);
  putSpec(out, 'customVersion', parts.customVersion);
  putMeta(out, 'labels', LABEL_SIDECARSET_CUSTOM_VERSION, parts.label);
  return out;
}

/** Removes annotation `key` from a copy; returns the copy and the parsed parts, if any. */
function takeParts<P>(obj: Json, key: string): { rest: Json; parts: P | undefined } {
  const rest = cloneJson(obj);
  const annotations = metadataOf(rest).annotations;
  const text = isRecord(annotations) ? annotations[key] : undefined;
  if (text === undefined) return { rest, parts: undefined };
  putMeta(rest, 'annotations', key, {});
  if (typeof text !== 'string') return { rest, parts: undefined };
  try {
    const parsed: unknown = JSON.parse(text);
    return { rest, parts: isRecord(parsed) ? (parsed as P) : undefined };
  } catch {
    return { rest, parts: undefined };
  }
}

const isParts = (p: unknown, keys: readonly string[]): boolean =>
  isRecord(p) && keys.every((k) => p[k] === undefined || isRecord(p[k]));

/**
 * One direction of the conversion: the v1.9 mapping, the parts the other direction saved put back
 * when the result still maps to the input, and the parts this direction loses saved.
 */
interface Direction<Saved, Lost> {
  v19: (obj: Json, apiVersion: string) => Json;
  reverse: (obj: Json, apiVersion: string) => Json;
  savedKey: string;
  savedKeys: readonly string[];
  restore: (obj: Json, parts: Saved) => Json;
  lostKey: string;
  lost: (obj: Json) => Lost;
}

function convert<Saved, Lost>(obj: Json, apiVersion: string, d: Direction<Saved, Lost>): Json {
  const fromVersion = String(obj.apiVersion);
  const { rest, parts } = takeParts<Saved>(obj, d.savedKey);
  let out = d.v19(rest, apiVersion);
  if (parts !== undefined && isParts(parts, d.savedKeys)) {
    const candidate = d.restore(out, parts);
    if (jsonEqual(d.reverse(candidate, fromVersion), rest)) out = candidate;
  }
  if (!jsonEqual(d.reverse(out, fromVersion), rest)) {
    putMeta(out, 'annotations', d.lostKey, { value: JSON.stringify(d.lost(rest)) });
  }
  return out;
}

/** v1alpha1 → v1beta1 (`apiVersion` is the target's, e.g. apps.kruise.io/v1beta1). */
export function sidecarSetToV1beta1(alpha: Json, apiVersion: string): Json {
  return convert<BetaParts, AlphaParts>(alpha, apiVersion, {
    v19: v19ToBeta,
    reverse: v19ToAlpha,
    savedKey: ANNOTATION_SIDECARSET_V1BETA1_PARTS,
    savedKeys: ['customVersion', 'label'],
    restore: withBetaParts,
    lostKey: ANNOTATION_SIDECARSET_V1ALPHA1_PARTS,
    lost: alphaParts,
  });
}

/** v1beta1 → v1alpha1. */
export function sidecarSetToV1alpha1(beta: Json, apiVersion: string): Json {
  return convert<AlphaParts, BetaParts>(beta, apiVersion, {
    v19: v19ToAlpha,
    reverse: v19ToBeta,
    savedKey: ANNOTATION_SIDECARSET_V1ALPHA1_PARTS,
    savedKeys: ['namespace', 'namespaceSelector', 'label'],
    restore: withAlphaParts,
    lostKey: ANNOTATION_SIDECARSET_V1BETA1_PARTS,
    lost: betaParts,
  });
}
