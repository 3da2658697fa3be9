/**
 * SidecarSet checks that need the cluster (OpenKruise's validating webhook does them too):
 * the patchPodMetadata keys must be allowed by the whitelist, and no container name may clash
 * with another SidecarSet that could select the same pods.
 */
import { childPath, indexPath, invalid, forbidden, type FieldError, type SidecarSet } from '@flotilla/api';
import {
  disallowedPatchKeys,
  type PatchMetadataWhitelist,
} from '../../controllers/sidecarset/control/patch-metadata.js';
import type { LabelSelector } from '../../runtime/label-selector.js';

/** Whether two selectors could select a common label set: false only when matchLabels disagree. */
function selectorsMayOverlap(a: LabelSelector | undefined, b: LabelSelector | undefined): boolean {
  const al = a?.matchLabels ?? {};
  const bl = b?.matchLabels ?? {};
  return Object.entries(al).every(([k, v]) => bl[k] === undefined || bl[k] === v);
}

function scopesMayOverlap(a: SidecarSet, b: SidecarSet): boolean {
  if (a.spec.namespace && b.spec.namespace && a.spec.namespace !== b.spec.namespace) return false;
  return selectorsMayOverlap(a.spec.selector, b.spec.selector);
}

/** Containers and init containers of `ss` whose names another overlapping SidecarSet also injects. */
export function containerConflicts(ss: SidecarSet, others: readonly SidecarSet[]): FieldError[] {
  const errors: FieldError[] = [];
  const name = ss.metadata?.name;
  const lists = [
    ['spec.initContainers', ss.spec.initContainers ?? []],
    ['spec.containers', ss.spec.containers ?? []],
  ] as const;
  for (const other of others) {
    if (other.metadata?.name === name || !scopesMayOverlap(ss, other)) continue;
    const theirs = new Set([...(other.spec.containers ?? []), ...(other.spec.initContainers ?? [])].map((c) => c.name));
    for (const [path, list] of lists) {
      list.forEach((c, i) => {
        if (theirs.has(c.name)) {
          errors.push(
            invalid(
              childPath(indexPath(path, i), 'name'),
              c.name,
              `container ${c.name} is in conflict with sidecarset ${other.metadata?.name}`,
            ),
          );
        }
      });
    }
  }
  return errors;
}

/** patchPodMetadata keys the whitelist does not allow. */
export function whitelistViolations(
  ss: SidecarSet,
  whitelist: PatchMetadataWhitelist | undefined,
  allowByDefault: boolean,
): FieldError[] {
  const keys = disallowedPatchKeys(ss, whitelist, allowByDefault);
  if (keys.length === 0) return [];
  const why = whitelist ? 'is not allowed by the patchPodMetadata whitelist' : 'needs a patchPodMetadata whitelist';
  return keys.map((k) => forbidden('spec.patchPodMetadata', `annotation ${k} ${why}`));
}
