/**
 * Which pods a workload claims, pure (the controller-ref manager's ClaimPods that OpenKruise's
 * DaemonSet and StatefulSet controllers use):
 *
 * - adopt: a pod of the owner's namespace that no controller owns, is not being deleted, passes
 *   the owner's own filter (a StatefulSet's `<set>-<ordinal>` names) and whose labels match the
 *   selector gets the owner as its controller;
 * - release: a pod the owner controls whose labels no longer match loses that reference.
 *
 * An empty selector claims nothing, and an owner being deleted adopts nothing. The patches carry
 * the pod's uid, so they fail instead of touching a different pod that took the name meanwhile.
 */
import type { OwnerReference } from '../runtime/kube-object.js';
import { labelSelectorMatcher, type LabelMatcher, type LabelSelector } from '../runtime/label-selector.js';
import type { Pod } from './types.js';

/** The parts of a workload claiming needs. */
export interface Claimer {
  metadata?: { namespace?: string; uid?: string; deletionTimestamp?: string };
  spec: { selector?: LabelSelector };
}

function matcher(owner: Claimer): LabelMatcher | undefined {
  const selector = owner.spec.selector;
  if (!selector || (!Object.keys(selector.matchLabels ?? {}).length && !selector.matchExpressions?.length)) {
    return undefined;
  }
  return labelSelectorMatcher(selector);
}

const hasController = (pod: Pod): boolean => (pod.metadata.ownerReferences ?? []).some((r) => r.controller === true);

/** Pods of `candidates` the owner adopts now. */
export function orphansToAdopt(
  owner: Claimer,
  candidates: readonly Pod[],
  belongs: (pod: Pod) => boolean = () => true,
): Pod[] {
  const matches = matcher(owner);
  if (!matches || owner.metadata?.deletionTimestamp) return [];
  return candidates.filter(
    (pod) =>
      pod.metadata.namespace === owner.metadata?.namespace &&
      pod.metadata.deletionTimestamp === undefined &&
      !hasController(pod) &&
      belongs(pod) &&
      matches(pod.metadata.labels),
  );
}

/** Pods of `controlled` (the owner's) whose labels the selector no longer matches. */
export function podsToRelease(owner: Claimer, controlled: readonly Pod[]): Pod[] {
  const matches = matcher(owner);
  if (!matches) return [];
  return controlled.filter((pod) => pod.metadata.deletionTimestamp === undefined && !matches(pod.metadata.labels));
}

/** The strategic-merge metadata patch that adds `ref` as the pod's controller owner. */
export function adoptionPatch(ref: OwnerReference, pod: Pod): Record<string, unknown> {
  return { ownerReferences: [{ ...ref, controller: true, blockOwnerDeletion: true }], uid: pod.metadata.uid };
}

/** The strategic-merge metadata patch that removes the owner reference with `ownerUid`. */
export function releasePatch(ownerUid: string, pod: Pod): Record<string, unknown> {
  return { ownerReferences: [{ $patch: 'delete', uid: ownerUid }], uid: pod.metadata.uid };
}
