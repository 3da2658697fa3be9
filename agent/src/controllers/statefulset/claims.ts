/**
 * The set's claims and persistentVolumeClaimRetentionPolicy, pure. The owner references follow
 * apps/v1 StatefulSetAutoDeletePVC (on in OpenKruise v1.9), so the garbage collector does the
 * deleting: `whenDeleted: Delete` makes the set an owner of every claim, `whenScaled: Delete`
 * makes a condemned pod the owner of its claims; either going back to Retain takes the reference
 * away again. Claims of ordinals no longer wanted whose pod is already gone are deleted directly
 * too, so they go even where no garbage collector runs.
 */
import type { StatefulSet } from '@flotilla/api';
import type { OwnerReference } from '../../runtime/kube-object.js';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.js';
import { setOwnerRef } from './identity.js';

/** The ordinal a claim `<template>-<set>-<ordinal>` of this set belongs to, or -1. */
export function claimOrdinal(set: StatefulSet, name: string): number {
  for (const template of set.spec.volumeClaimTemplates ?? []) {
    const prefix = `${template.metadata?.name ?? ''}-${set.metadata?.name ?? ''}-`;
    const rest = name.startsWith(prefix) ? name.slice(prefix.length) : '';
    if (/^(0|[1-9][0-9]*)$/.test(rest)) return Number(rest);
  }
  return -1;
}

/** Claims of ordinals not wanted whose pod is gone, when whenScaled is Delete. */
export function claimsToDelete(
  set: StatefulSet,
  claims: readonly PersistentVolumeClaim[],
  wanted: ReadonlySet<number>,
  pods: ReadonlyMap<number, Pod>,
): string[] {
  if (set.spec.persistentVolumeClaimRetentionPolicy?.whenScaled !== 'Delete') return [];
  return claims
    .filter((c) => !c.metadata.deletionTimestamp)
    .map((c) => [c.metadata.name, claimOrdinal(set, c.metadata.name)] as const)
    .filter(([, ordinal]) => ordinal >= 0 && !wanted.has(ordinal) && !pods.has(ordinal))
    .map(([name]) => name)
    .sort();
}

export interface ClaimOwnerUpdate {
  claim: PersistentVolumeClaim;
  ownerReferences: OwnerReference[];
}

const sameRefs = (a: readonly OwnerReference[], b: readonly OwnerReference[]): boolean =>
  a.length === b.length && a.every((r) => b.some((c) => c.uid === r.uid && c.kind === r.kind));

/** The references a claim of `ordinal` should carry: others' kept, ours as the policy says. */
function wantedRefs(
  set: StatefulSet,
  current: readonly OwnerReference[],
  ours: ReadonlySet<string>,
  condemnedPod: Pod | undefined,
): OwnerReference[] {
  const policy = set.spec.persistentVolumeClaimRetentionPolicy;
  const refs = current.filter((r) => !ours.has(r.uid));
  if (policy?.whenDeleted === 'Delete') refs.push({ ...setOwnerRef(set), controller: false });
  if (policy?.whenScaled === 'Delete' && condemnedPod?.metadata.uid) {
    refs.push({ apiVersion: 'v1', kind: 'Pod', name: condemnedPod.metadata.name, uid: condemnedPod.metadata.uid });
  }
  return refs;
}

/** Claims whose owner references do not match the retention policy, with the references they should have. */
export function claimOwnerUpdates(
  set: StatefulSet,
  claims: readonly PersistentVolumeClaim[],
  wanted: ReadonlySet<number>,
  pods: ReadonlyMap<number, Pod>,
): ClaimOwnerUpdate[] {
  const ours = new Set([set.metadata?.uid ?? '', ...[...pods.values()].map((p) => p.metadata.uid ?? '')]);
  const out: ClaimOwnerUpdate[] = [];
  for (const claim of claims) {
    const ordinal = claimOrdinal(set, claim.metadata.name);
    if (ordinal < 0 || claim.metadata.deletionTimestamp) continue;
    const current = claim.metadata.ownerReferences ?? [];
    const refs = wantedRefs(set, current, ours, wanted.has(ordinal) ? undefined : pods.get(ordinal));
    if (!sameRefs(refs, current)) out.push({ claim, ownerReferences: refs });
  }
  return out;
}
