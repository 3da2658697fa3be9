import { groupOf, namespacedKey, objectKey, type KubeObject } from './kube-object.js';

/** Maps a changed object to the queue keys of the objects that must be reconciled because of it. */
export type KeyMapper<T extends KubeObject = KubeObject> = (obj: T) => readonly string[];

/** Reconcile the object itself (a CloneSet event → that CloneSet's key). */
export const enqueueObject: KeyMapper = (obj) => [objectKey(obj)];

export interface OwnerMatch {
  /** API group of the owner kind, e.g. `apps.kruise.io`; `` for the core group. */
  group: string;
  kind: string;
  /** Only follow the reference with `controller: true` (default), as controllers own their children. */
  onlyController?: boolean;
}

/**
 * Reconcile the owner of the object (a Pod event → its CloneSet's key). Owners of another group
 * or kind are ignored; any version of the group matches, since references keep the version they
 * were written with.
 */
export function enqueueOwner(owner: OwnerMatch): KeyMapper {
  const onlyController = owner.onlyController ?? true;
  return (obj) =>
    (obj.metadata?.ownerReferences ?? [])
      .filter((ref) => ref.kind === owner.kind && groupOf(ref.apiVersion) === owner.group)
      .filter((ref) => !onlyController || ref.controller === true)
      .map((ref) => namespacedKey(obj.metadata?.namespace, ref.name));
}
