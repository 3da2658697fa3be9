/**
 * Which pods an Advanced StatefulSet's rolling update takes, in which order, and which revision
 * a new pod gets, as OpenKruise v1.9 decides them (stateful_update_utils.go sortPodsToUpdate,
 * stateful_set_utils.go isCurrentRevisionNeeded). Positions are indexes into the wanted ordinals.
 *
 * - Ordered (no unorderedUpdate): from the highest position down to the partition.
 * - unorderedUpdate (Parallel sets only, the webhook refuses it otherwise): pods already at the
 *   update revision or terminating first, then the others in priorityStrategy order (weight: a
 *   higher sum of matching weights first; order: the first orderedKey a pod has decides, the
 *   integer suffix of its value higher first, pods without any key first), ties by the higher
 *   ordinal; at most `replicas - partition` positions in all, so the partition is a number of
 *   pods kept at the current revision rather than an ordinal boundary.
 */
import type { StatefulSet } from '@flotilla/api';
import { sortByPriority } from '../../kube/pod-order.js';
import type { Pod } from '../../kube/types.js';
import { hasRevision } from '../cloneset/pods.js';

const terminating = (pod: Pod): boolean => pod.metadata.deletionTimestamp !== undefined;

function partitionOf(set: StatefulSet): number {
  return set.spec.updateStrategy?.rollingUpdate?.partition ?? 0;
}

/**
 * The positions of existing pods the rolling update looks at, in order. `pods[i]` is the pod at
 * wanted position i, undefined when it does not exist yet.
 */
export function updateOrder(set: StatefulSet, pods: readonly (Pod | undefined)[], updateRevision: string): number[] {
  const partition = partitionOf(set);
  const maxUpdate = pods.length - partition;
  if (maxUpdate <= 0) return [];
  const descending = [...pods.keys()].reverse().filter((i) => pods[i] !== undefined);
  const unordered = set.spec.updateStrategy?.rollingUpdate?.unorderedUpdate;
  if (!unordered) return descending.filter((i) => i >= partition).slice(0, maxUpdate);
  const done = (i: number): boolean => terminating(pods[i]!) || hasRevision(pods[i]!, updateRevision);
  const waiting = descending.filter((i) => !done(i));
  const sorted = sortByPriority(unordered.priorityStrategy, pods as Pod[], waiting);
  return [...descending.filter(done), ...sorted].slice(0, maxUpdate);
}

/**
 * The revision of each pod to create, by position: with the ordered update, positions below the
 * partition get the current revision; with unorderedUpdate, a new pod gets the current revision
 * while fewer than `partition` other pods (those created before it in this pass included) are
 * not at the update revision. Anything but RollingUpdate creates at the update revision.
 */
export function newPodRevisions(
  set: StatefulSet,
  pods: readonly (Pod | undefined)[],
  current: string,
  update: string,
): Map<number, string> {
  const out = new Map<number, string>();
  const rolling = set.spec.updateStrategy?.type === 'RollingUpdate';
  const partition = partitionOf(set);
  const unordered = set.spec.updateStrategy?.rollingUpdate?.unorderedUpdate !== undefined;
  const outdated = new Set(pods.flatMap((p, i) => (p && !hasRevision(p, update) ? [i] : [])));
  for (const [i, pod] of pods.entries()) {
    if (pod) continue;
    let revision = update;
    if (rolling && !unordered && i < partition) revision = current;
    if (rolling && unordered && outdated.size < partition) revision = current;
    out.set(i, revision);
    if (revision !== update) outdated.add(i);
  }
  return out;
}
