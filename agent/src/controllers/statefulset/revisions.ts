/**
 * ControllerRevisions of an Advanced StatefulSet, as OpenKruise v1.9 writes them
 * (stateful_set_utils.go newRevision): the data is `{"spec":{"template":{…,"$patch":"replace"}}}`
 * of the set, the name `<set>-<hash>` with the hash byte-compatible with OpenKruise (the same
 * revision data and hashing as CloneSet's, api/revision), the labels the template's plus
 * `controller.kubernetes.io/hash`, the annotations the set's. An existing set's revisions are
 * therefore found again under the same names, and its pods keep their revision.
 */
import { cloneSetRevision, LABEL_CONTROLLER_HASH, type StatefulSet } from '@flotilla/api';
import type { ControllerRevision } from '../../kube/types.js';
import { setOwnerRef } from './identity.js';

/** The revision the set's current template makes, not yet stored. */
export function newRevision(
  set: StatefulSet,
  revisionNumber: number,
  collisionCount: number,
): ControllerRevision & { bytes: string } {
  const computed = cloneSetRevision(set, collisionCount);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: computed.name,
      namespace: set.metadata?.namespace,
      labels: { ...(set.spec.template.metadata?.labels ?? {}), [LABEL_CONTROLLER_HASH]: computed.hash },
      ...(set.metadata?.annotations ? { annotations: { ...set.metadata.annotations } } : {}),
      ownerReferences: [setOwnerRef(set)],
    },
    data: JSON.parse(computed.data) as unknown,
    revision: revisionNumber,
    bytes: computed.data,
  };
}
