/**
 * `spec.patchPodMetadata`: annotations a SidecarSet writes onto its pods (Retain keeps a value the
 * pod has, Overwrite replaces it, MergePatchJson merges JSON objects), and the whitelist that
 * decides which keys a SidecarSet may patch (OpenKruise's kruise-configuration ConfigMap, key
 * SidecarSet_PatchPodMetadata_WhiteList).
 */
import type { SidecarSet, SidecarSetPatchPodMetadata } from '@flotilla/api';
import { labelSelectorMatcher, type LabelSelector } from '../../../runtime/label-selector.js';

/** Applies the patches to `annotations` in place; true when anything changed. Throws on bad JSON. */
export function patchPodAnnotations(
  annotations: Record<string, string>,
  patches: readonly SidecarSetPatchPodMetadata[] | undefined,
): boolean {
  let changed = false;
  const set = (k: string, v: string): void => {
    if (annotations[k] !== v) changed = true;
    annotations[k] = v;
  };
  for (const patch of patches ?? []) {
    for (const [key, value] of Object.entries(patch.annotations ?? {})) {
      const current = annotations[key];
      switch (patch.patchPolicy ?? 'Retain') {
        case 'Overwrite':
          set(key, value);
          break;
        case 'MergePatchJson':
          set(key, current ? JSON.stringify(mergePatch(JSON.parse(current), JSON.parse(value))) : value);
          break;
        default:
          if (current === undefined) set(key, value);
      }
    }
  }
  return changed;
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** The whitelist as stored in the ConfigMap (JSON). */
export interface PatchMetadataWhitelist {
  rules: { selector?: LabelSelector; allowedAnnotationKeyExprs: string[] }[];
}

/** ConfigMap key of the whitelist, as in OpenKruise. */
export const WHITELIST_KEY = 'SidecarSet_PatchPodMetadata_WhiteList';

/** Parses the whitelist JSON; throws with the reason when it is not valid. */
export function parseWhitelist(text: string): PatchMetadataWhitelist {
  const parsed = JSON.parse(text) as PatchMetadataWhitelist;
  if (!Array.isArray(parsed.rules)) throw new Error('whitelist has no rules array');
  for (const rule of parsed.rules) for (const expr of rule.allowedAnnotationKeyExprs ?? []) new RegExp(expr);
  return parsed;
}

/**
 * The annotation keys of patchPodMetadata the whitelist does not allow for this SidecarSet (a
 * rule applies when its selector matches the SidecarSet's labels). Without a whitelist nothing is
 * allowed unless `allowByDefault` (OpenKruise's SidecarSetPatchPodMetadataDefaultsAllowed gate).
 */
export function disallowedPatchKeys(
  ss: SidecarSet,
  whitelist: PatchMetadataWhitelist | undefined,
  allowByDefault: boolean,
): string[] {
  const keys = (ss.spec.patchPodMetadata ?? []).flatMap((p) => Object.keys(p.annotations ?? {}));
  if (keys.length === 0) return [];
  const exprs = (whitelist?.rules ?? [])
    .filter((r) => !r.selector || labelSelectorMatcher(r.selector)(ss.metadata?.labels ?? {}))
    .flatMap((r) => r.allowedAnnotationKeyExprs ?? [])
    .map((e) => new RegExp(e));
  if (exprs.length === 0) return allowByDefault ? [] : keys;
  return keys.filter((k) => !exprs.some((re) => re.test(k)));
}
