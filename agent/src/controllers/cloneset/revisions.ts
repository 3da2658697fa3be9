/**
 * ControllerRevisions of a CloneSet, pure (OpenKruise revision/cloneset_revision.go,
 * cloneset_controller.go getActiveRevisions/truncateHistory, k8s controller/history):
 *
 * - a revision stores `{"spec":{"template":{...,"$patch":"replace"}}}` of the defaulted CloneSet,
 *   named `<cloneset>-<hash>` with the hash byte-compatible with OpenKruise (api/revision);
 * - labels: the template labels plus `controller.kubernetes.io/hash`; annotations: the
 *   CloneSet's plus `kruise.io/cloneset-volumeclaimtemplate-hash`;
 * - an equal revision (same data bytes) is reused; when it is not the latest its `revision` is
 *   bumped to the next number, which is how a rollback becomes the update revision;
 * - history: revisions that are neither current nor update and used by no pod are deleted,
 *   oldest first, down to revisionHistoryLimit.
 */
import {
  ANNOTATION_VOLUME_CLAIM_TEMPLATE_HASH,
  LABEL_CONTROLLER_HASH,
  cloneSetRevision,
  goJsonMarshal,
  type CloneSetRevision,
} from '@flotilla/api';
import { parseTime } from '../../runtime/kube-time.js';
import { cloneSetOwnerRef } from './new-pods.js';
import { hasRevision } from './pods.js';
import type { ControllerRevision, Pod } from '../../kube/types.js';
import type { CloneSet } from './types.js';

/** The revision data as Go would hold its bytes: what revisions are compared by. */
export function revisionBytes(revision: ControllerRevision): string {
  if (typeof revision.data === 'string') return revision.data;
  return revision.data === undefined || revision.data === null ? '' : goJsonMarshal(revision.data);
}

/** Sorted by revision number, then creation time, then name (history.SortControllerRevisions). */
export function sortRevisions(revisions: readonly ControllerRevision[]): ControllerRevision[] {
  return [...revisions].sort((a, b) => {
    if (a.revision !== b.revision) return a.revision - b.revision;
    const ta = parseTime(a.metadata.creationTimestamp) ?? 0;
    const tb = parseTime(b.metadata.creationTimestamp) ?? 0;
    if (ta !== tb) return ta - tb;
    return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
  });
}

/** The next revision number: one more than the largest (revisions sorted). */
export function nextRevisionNumber(sorted: readonly ControllerRevision[]): number {
  return sorted.length === 0 ? 1 : sorted[sorted.length - 1]!.revision + 1;
}

/** FNV-1a 32 of a string's UTF-8 bytes. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) hash = Math.imul(hash ^ byte, 0x01000193);
  return hash >>> 0;
}

/**
 * The volumeClaimTemplates hash annotation: '' without templates. A hash of the templates'
 * names and specs; it changes exactly when they change, but is not byte-identical to OpenKruise's
 * (which hashes Go's spew dump of the JSON), and only the RecreatePodWhenChangeVCT gate reads it.
 */
export function volumeClaimTemplatesHash(cs: CloneSet): string {
  const templates = cs.spec.volumeClaimTemplates ?? [];
  if (templates.length === 0) return '';
  const parts = templates
    .map((t) => ({ metadata: { name: t.metadata?.name ?? '' }, spec: t.spec ?? {} }))
    .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  return String(fnv1a(goJsonMarshal(parts)));
}

/** The revision the CloneSet's current spec makes, not yet stored. `cs` must be defaulted. */
export function newRevision(
  cs: CloneSet,
  revisionNumber: number,
  collisionCount: number,
): ControllerRevision & { bytes: string } {
  const computed: CloneSetRevision = cloneSetRevision(cs, collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: computed.name,
      namespace: cs.metadata?.namespace,
      labels: { ...(cs.spec.template.metadata?.labels ?? {}), [LABEL_CONTROLLER_HASH]: computed.hash },
      annotations: {
        ...(cs.metadata?.annotations ?? {}),
        [ANNOTATION_VOLUME_CLAIM_TEMPLATE_HASH]: volumeClaimTemplatesHash(cs),
      },
      ownerReferences: [cloneSetOwnerRef(cs)],
    },
    data: JSON.parse(computed.data) as unknown,
    revision: revisionNumber,
    bytes: computed.data,
  };
}

/** What to do to have the update revision stored. */
export type RevisionDecision =
  | { kind: 'reuse'; revision: ControllerRevision }
  /** An older equal revision becomes the latest (rollback). */
  | { kind: 'bump'; revision: ControllerRevision; to: number }
  | { kind: 'create' };

/** Finds the stored revision equal to `candidate` (getActiveRevisions). `sorted` ascending. */
export function decideUpdateRevision(sorted: readonly ControllerRevision[], candidateBytes: string): RevisionDecision {
  const equal = sorted.filter((r) => revisionBytes(r) === candidateBytes);
  const last = equal[equal.length - 1];
  if (!last) return { kind: 'create' };
  if (last === sorted[sorted.length - 1]) return { kind: 'reuse', revision: last };
  return { kind: 'bump', revision: last, to: nextRevisionNumber(sorted) };
}

/** The current revision: the one named in status.currentRevision, else the update revision. */
export function findCurrentRevision(
  sorted: readonly ControllerRevision[],
  statusCurrent: string | undefined,
  update: ControllerRevision,
): ControllerRevision {
  return sorted.find((r) => r.metadata.name === statusCurrent) ?? update;
}

/** Revisions to delete so no more than `limit` unused ones remain, oldest first. */
export function revisionsToTruncate(input: {
  sorted: readonly ControllerRevision[];
  pods: readonly Pod[];
  current: string;
  update: string;
  limit: number;
}): ControllerRevision[] {
  const unused = input.sorted.filter(
    (r) =>
      r.metadata.name !== input.current &&
      r.metadata.name !== input.update &&
      !input.pods.some((p) => hasRevision(p, r.metadata.name)),
  );
  return unused.length <= input.limit ? [] : unused.slice(0, unused.length - input.limit);
}

/** The pod template stored in a revision's data. */
export function revisionTemplate(revision: ControllerRevision): CloneSet['spec']['template'] | undefined {
  const data = typeof revision.data === 'string' ? (JSON.parse(revision.data) as unknown) : revision.data;
  return (data as { spec?: { template?: CloneSet['spec']['template'] } } | undefined)?.spec?.template;
}
