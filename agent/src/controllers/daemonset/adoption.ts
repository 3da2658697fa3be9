/**
 * Orphan pods an Advanced DaemonSet adopts, pure (OpenKruise's getDaemonPods through the
 * controller-ref manager's ClaimPods): a pod of the set's namespace that no controller owns, is
 * not being deleted, and whose labels match the set's selector (an empty selector adopts nothing)
 * gets the set as its controller owner. The patch carries the pod's uid, so it fails instead of
 * adopting a different pod that took the name meanwhile.
 */
import { KRUISE_V1BETA1_API_VERSION, type DaemonSetV1beta1 } from '@flotilla/api';
import type { Pod } from '../../kube/types.js';
import { labelSelectorMatcher } from '../../runtime/label-selector.js';

/** Pods of `candidates` the set adopts now. */
export function orphansToAdopt(ds: DaemonSetV1beta1, candidates: readonly Pod[]): Pod[] {
  const selector = ds.spec.selector;
  const empty = !selector || (!Object.keys(selector.matchLabels ?? {}).length && !selector.matchExpressions?.length);
  if (empty || ds.metadata?.deletionTimestamp) return [];
  const matches = labelSelectorMatcher(selector);
  return candidates.filter(
    (pod) =>
      pod.metadata.namespace === ds.metadata?.namespace &&
      pod.metadata.deletionTimestamp === undefined &&
      !(pod.metadata.ownerReferences ?? []).some((r) => r.controller === true) &&
      matches(pod.metadata.labels),
  );
}

/** The strategic-merge metadata patch that adds the set as the pod's controller owner. */
export function adoptionPatch(ds: DaemonSetV1beta1, pod: Pod): Record<string, unknown> {
  return {
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
    uid: pod.metadata.uid,
  };
}
