/**
 * Which pods a PodUnavailableBudget covers and how many replicas are expected of them
 * (OpenKruise v1.9's counting, facts only):
 *
 * - targetRef: the workload's pods (those its selector matches), expected = its replicas; a
 *   missing workload covers nothing and expects undefined (the planner reports it).
 * - selector: the matching pods; expected = the replicas of the workloads controlling the active
 *   ones (a ReplicaSet of a Deployment counts as its Deployment), plus one per pod without a
 *   controller.
 *
 * Also the overlaps: covered pods bound to another budget (related-pub) or matched by another
 * budget's selector. Budget with the first name is the one a pod is bound to.
 */
import { ANNOTATION_RELATED_PUB, type PodUnavailableBudget } from '@flotilla/api';
import { isPodActive } from '../../kube/pods.js';
import type { Pod } from '../../kube/types.js';
import { labelSelectorMatcher } from '../../runtime/label-selector.js';
import { controllerRef } from '../../runtime/kube-object.js';
import type { PubClient, Workload, WorkloadRef } from './client.js';

export interface Coverage {
  pods: Pod[];
  expectedReplicas: number | undefined;
}

/** The pods of `namespace` matching nothing when the selector is missing or empty. */
function selected(pods: readonly Pod[], selector: PodUnavailableBudget['spec']['selector']): Pod[] {
  const empty = !selector || (!selector.matchLabels && !selector.matchExpressions?.length);
  if (empty) return [];
  const matches = labelSelectorMatcher(selector);
  return pods.filter((p) => matches(p.metadata.labels));
}

export async function coverageOf(
  pub: PodUnavailableBudget,
  namespacePods: readonly Pod[],
  client: PubClient,
): Promise<Coverage> {
  const namespace = pub.metadata?.namespace ?? '';
  const target = pub.spec.targetRef;
  if (target) {
    const ref: WorkloadRef = { apiVersion: target.apiVersion ?? '', kind: target.kind ?? '', name: target.name ?? '' };
    const workload = await client.workload(namespace, ref);
    if (!workload) return { pods: [], expectedReplicas: undefined };
    return { pods: selected(namespacePods, workload.selector), expectedReplicas: workload.replicas };
  }
  const pods = selected(namespacePods, pub.spec.selector);
  return { pods, expectedReplicas: await expectedOf(namespace, pods.filter(isPodActive), client) };
}

/** The replicas the workloads behind `pods` want, each workload counted once. */
async function expectedOf(namespace: string, pods: readonly Pod[], client: PubClient): Promise<number> {
  const seen = new Map<string, Promise<Workload | undefined>>();
  const lookup = (ref: WorkloadRef): Promise<Workload | undefined> => {
    const key = `${ref.apiVersion}/${ref.kind}/${ref.name}`;
    let found = seen.get(key);
    if (!found) seen.set(key, (found = client.workload(namespace, ref)));
    return found;
  };
  let orphans = 0;
  const tops = new Map<string, Workload>();
  for (const pod of pods) {
    const ref = controllerRef(pod);
    if (!ref) {
      orphans++;
      continue;
    }
    let workload = await lookup(ref);
    let key = `${ref.kind}/${ref.name}`;
    // A Deployment's ReplicaSets share its budget: count the Deployment's replicas once.
    if (workload?.owner && ref.kind === 'ReplicaSet' && workload.owner.kind === 'Deployment') {
      key = `Deployment/${workload.owner.name}`;
      workload = await lookup(workload.owner);
    }
    if (workload) tops.set(key, workload);
  }
  return orphans + [...tops.values()].reduce((n, w) => n + w.replicas, 0);
}

/**
 * Covered pods another budget claims: bound to it by annotation, or matched by its selector.
 * Only budgets that exist count.
 */
export function overlapsOf(
  pub: PodUnavailableBudget,
  covered: readonly Pod[],
  others: readonly PodUnavailableBudget[],
): { pod: string; otherPub: string }[] {
  const name = pub.metadata?.name ?? '';
  const rivals = others.filter((o) => o.metadata?.name !== name);
  const byName = new Set(rivals.map((o) => o.metadata?.name));
  const matchers = rivals
    .filter((o) => !o.spec.targetRef && o.spec.selector)
    .map((o) => ({ name: o.metadata?.name ?? '', matches: labelSelectorMatcher(o.spec.selector!) }));
  const out: { pod: string; otherPub: string }[] = [];
  for (const pod of covered.filter(isPodActive)) {
    const bound = pod.metadata.annotations?.[ANNOTATION_RELATED_PUB];
    const other =
      bound && bound !== name && byName.has(bound) ? bound : matchers.find((m) => m.matches(pod.metadata.labels))?.name;
    if (other) out.push({ pod: pod.metadata.name, otherPub: other });
  }
  return out;
}
