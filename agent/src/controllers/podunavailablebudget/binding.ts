/**
 * Which PodUnavailableBudget a new pod belongs to, as OpenKruise v1.9's pod webhook decides at
 * CREATE (pkg/webhook/pod/mutating/pod_unavailable_budget.go, GetPubForPod; facts only): the
 * first budget of the namespace whose targetRef names the pod's workload (same group, kind and
 * name), or whose non-empty selector matches the pod's labels. The pod's workload is its
 * controller, except that a ReplicaSet of a Deployment stands for the Deployment: only that case
 * needs a read of the apiserver (`resolvePodWorkload`). The webhook writes the answer to the
 * pod's `kruise.io/related-pub` annotation, through which every later admission finds the budget.
 */
import type { PodUnavailableBudget } from '@flotilla/api';
import { controllerRef, groupOf, type KubeObject } from '../../runtime/kube-object.js';
import { labelSelectorMatcher, type Labels } from '../../runtime/label-selector.js';
import type { WorkloadRef } from './client.js';

/** Resolves a ReplicaSet to the workload it stands for (its Deployment, or itself); undefined when it is gone. */
export type ReplicaSetOwnerLookup = (namespace: string, replicaSet: WorkloadRef) => Promise<WorkloadRef | undefined>;

/** Same workload as a targetRef names it: group (not version), kind and name. */
export function sameWorkload(a: WorkloadRef, b: Partial<WorkloadRef>): boolean {
  return groupOf(a.apiVersion) === groupOf(b.apiVersion ?? '') && a.kind === b.kind && a.name === b.name;
}

/** A ReplicaSet of the apps group: the only controller kind whose pods may belong to another workload. */
export function isReplicaSet(ref: WorkloadRef): boolean {
  return ref.kind === 'ReplicaSet' && groupOf(ref.apiVersion) === 'apps';
}

/** Whether the namespace's budgets can bind pods through a targetRef (then the pod's workload matters). */
export function anyTargetRef(pubs: readonly PodUnavailableBudget[]): boolean {
  return pubs.some((pub) => !!pub.spec.targetRef);
}

/**
 * The workload of a new pod: its controller, or for a ReplicaSet the workload `lookup` resolves
 * it to. Undefined without a controller, or when the lookup finds nothing.
 */
export async function resolvePodWorkload(
  pod: KubeObject,
  namespace: string,
  lookup: ReplicaSetOwnerLookup,
): Promise<WorkloadRef | undefined> {
  const owner = controllerRef(pod);
  if (!owner) return undefined;
  const ref = { apiVersion: owner.apiVersion, kind: owner.kind, name: owner.name };
  return isReplicaSet(ref) ? lookup(namespace, ref) : ref;
}

/**
 * The budget a new pod goes to: budgets are taken by name (OpenKruise takes its cache's list
 * order; by name, a pod two budgets cover goes where the controller binds it too), a targetRef
 * budget matching only a known workload, a selector budget only with a non-empty selector. A
 * budget whose selector cannot be read is passed over.
 */
export function pubForNewPod(
  labels: Labels,
  workload: WorkloadRef | undefined,
  pubs: readonly PodUnavailableBudget[],
): string | undefined {
  const nameOf = (pub: PodUnavailableBudget): string => pub.metadata?.name ?? '';
  const byName = [...pubs].sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0));
  for (const pub of byName) {
    const { targetRef, selector } = pub.spec;
    if (targetRef && workload) {
      if (sameWorkload(workload, targetRef)) return pub.metadata?.name;
      continue;
    }
    if (!selector || (!selector.matchLabels && !selector.matchExpressions?.length)) continue;
    let matches: (labels: Labels) => boolean;
    try {
      matches = labelSelectorMatcher(selector);
    } catch {
      continue;
    }
    if (matches(labels)) return pub.metadata?.name;
  }
  return undefined;
}

/** What binding a new pod reads: the namespace's budgets and, when needed, its ReplicaSet's workload. */
export interface NewPodBinding {
  pod: KubeObject;
  namespace: string;
  pubs: readonly PodUnavailableBudget[];
  lookup: ReplicaSetOwnerLookup;
  /** Told when the ReplicaSet cannot be read: the pod is then bound by selectors only, never refused. */
  onLookupError?(err: unknown): void;
}

/** The budget a new pod goes to; the workload is resolved only when a targetRef budget could want it. */
export async function bindNewPod(input: NewPodBinding): Promise<string | undefined> {
  const { pod, namespace, pubs } = input;
  if (pubs.length === 0) return undefined;
  let workload: WorkloadRef | undefined;
  if (anyTargetRef(pubs)) {
    try {
      workload = await resolvePodWorkload(pod, namespace, input.lookup);
    } catch (err) {
      input.onLookupError?.(err);
    }
  }
  return pubForNewPod(pod.metadata?.labels, workload, pubs);
}
