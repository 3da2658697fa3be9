import { controllerRevisionHash, controllerRevisionName } from './controllerRevision.js';
import { goJsonMarshal } from './goJson.js';
import { normalizePodTemplateForRevision } from './podTemplate.js';

/** The parts of a CloneSet its revision depends on; the full CloneSet type fits. */
export interface CloneSetRevisionSource {
  metadata?: { name?: string } | null;
  spec?: { template?: unknown } | null;
}

export interface CloneSetRevision {
  /** ControllerRevision `data`: `{"spec":{"template":{...,"$patch":"replace"}}}` in Go's bytes. */
  data: string;
  /** The hash: the `controller.kubernetes.io/hash` label and the short pod-template-hash. */
  hash: string;
  /** `<cloneset>-<hash>`: the ControllerRevision name and the pods' `controller-revision-hash`. */
  name: string;
}

/**
 * OpenKruise's revision patch for a CloneSet: the template after the typed round trip, marked
 * `$patch: replace`, under spec.template, re-marshalled with sorted keys.
 */
export function cloneSetRevisionData(cloneSet: CloneSetRevisionSource): string {
  const template = normalizePodTemplateForRevision(cloneSet.spec?.template);
  return goJsonMarshal({ spec: { template: { ...template, $patch: 'replace' } } });
}

/** The ControllerRevision name for a CloneSet: the name cut to 223 bytes, a dash, the hash. */
export function cloneSetRevisionName(cloneSetName: string, hash: string): string {
  return controllerRevisionName(cloneSetName, hash);
}

/**
 * Data, hash and name of the revision OpenKruise would create for this CloneSet, given its
 * `status.collisionCount` (none and 0 give different hashes).
 */
export function cloneSetRevision(cloneSet: CloneSetRevisionSource, collisionCount?: number | null): CloneSetRevision {
  const data = cloneSetRevisionData(cloneSet);
  const hash = controllerRevisionHash(data, collisionCount);
  return { data, hash, name: cloneSetRevisionName(cloneSet.metadata?.name ?? '', hash) };
}
