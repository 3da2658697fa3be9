/**
 * ControllerRevisions of an Advanced DaemonSet, pure (OpenKruise v1.9 daemonset_history.go):
 *
 * - a revision's data is `{"spec":{"template":{...,"$patch":"replace"}}}` of the set, the same
 *   bytes as a CloneSet revision's (api/revision), and a stored revision is the set's current one
 *   when its data equals the set's — so revisions OpenKruise wrote are found and reused as they are;
 * - a revision is named `<set>-<hash>` and labelled with the template labels plus
 *   `controller-revision-hash: <hash>`; that label is what pods carry. OpenKruise hashes the Go
 *   value of the template (kubecontroller.ComputeHash), which only Go can reproduce; Flotilla's new
 *   revisions hash the revision data with the collision count (controllerRevisionHash) instead.
 *   Only new revisions get the new kind of hash; adopted ones keep theirs, and nothing compares
 *   hashes across implementations;
 * - an equal older revision is renumbered to be the latest (rollback), and history beyond
 *   revisionHistoryLimit that no pod uses is deleted, oldest first.
 */
import {
  cloneSetRevisionData,
  controllerRevisionHash,
  controllerRevisionName,
  KRUISE_V1BETA1_API_VERSION,
  LABEL_CONTROLLER_REVISION_HASH,
  type DaemonSetV1beta1,
} from '@flotilla/api';
import type { ControllerRevision, Pod } from '../../kube/types.js';
import { nextRevisionNumber } from '../cloneset/revisions.js';

/** The revision data of the set's current template, as Go marshals it. */
export function daemonSetRevisionData(ds: DaemonSetV1beta1): string {
  return cloneSetRevisionData(ds);
}

/** The hash a revision stands for: its label, else (as OpenKruise backfills it) its name. */
export function revisionHash(revision: ControllerRevision): string {
  return revision.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH] ?? revision.metadata.name;
}

/** The revision to create for the set's current template. */
export function newDaemonSetRevision(
  ds: DaemonSetV1beta1,
  data: string,
  sorted: readonly ControllerRevision[],
): ControllerRevision {
  const hash = controllerRevisionHash(data, ds.status?.collisionCount ?? null);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: controllerRevisionName(ds.metadata?.name ?? '', hash),
      namespace: ds.metadata?.namespace,
      labels: { ...(ds.spec.template.metadata?.labels ?? {}), [LABEL_CONTROLLER_REVISION_HASH]: hash },
      ownerReferences: [
        {
          apiVersion: KRUISE_V1BETA1_API_VERSION,
          kind: 'DaemonSet',
          name: ds.metadata?.name ?? '',
          uid: ds.metadata?.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: JSON.parse(data) as unknown,
    revision: nextRevisionNumber(sorted),
  };
}

/** Old revisions to delete: beyond `limit`, unused by every pod, oldest first (cleanupHistory). */
export function historyToDelete(
  sorted: readonly ControllerRevision[],
  current: ControllerRevision,
  pods: readonly Pod[],
  limit: number,
): ControllerRevision[] {
  const used = new Set(pods.map((p) => p.metadata.labels?.[LABEL_CONTROLLER_REVISION_HASH]));
  const old = sorted.filter((r) => r.metadata.name !== current.metadata.name);
  const excess = old.length - limit;
  if (excess <= 0) return [];
  return old.filter((r) => !used.has(revisionHash(r))).slice(0, excess);
}
