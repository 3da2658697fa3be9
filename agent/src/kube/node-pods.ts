/**
 * Pods placed on one node each by their controller (BroadcastJob, Advanced DaemonSet): which node
 * a pod is for, and the informer handler that meets the controller's creation expectations (by
 * node) and deletion expectations (by pod name) as the pods appear and go.
 */
import { KRUISE_GROUP } from '@flotilla/api';
import type { ScaleExpectations } from '../runtime/expectations.js';
import type { Informer } from '../runtime/informer.js';
import { controllerRef, namespacedKey } from '../runtime/kube-object.js';
import type { NodeSelectorTerm } from './node-fit.js';
import type { Pod } from './types.js';

/**
 * The node a node-placed pod (BroadcastJob, Advanced DaemonSet) is bound to: its nodeName, else the single name of a required
 * `metadata.name In [node]` field term (getAssignedNode); '' when neither.
 */
export function assignedNode(pod: Pod): string {
  if (pod.spec.nodeName) return pod.spec.nodeName;
  const spec = pod.spec as {
    affinity?: {
      nodeAffinity?: { requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms?: NodeSelectorTerm[] } };
    };
  };
  const terms = spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const term of terms) {
    for (const req of term.matchFields ?? []) {
      if (req.key === 'metadata.name' && req.operator === 'In' && req.values?.length === 1) return req.values[0]!;
    }
  }
  return '';
}

/** A pod of a `kind` controller appearing meets the creation expected for its node; one going, its deletion. */
export function observeNodePods(expectations: ScaleExpectations, pods: Informer<Pod>, kind: string): void {
  const ownerKey = (pod: Pod): string | undefined => {
    const ref = controllerRef(pod);
    return ref?.kind === kind && ref.apiVersion.startsWith(`${KRUISE_GROUP}/`)
      ? namespacedKey(pod.metadata.namespace, ref.name)
      : undefined;
  };
  const gone = (pod: Pod): void => {
    const key = ownerKey(pod);
    if (key) expectations.deletionObserved(key, pod.metadata.name);
  };
  pods.addEventHandler({
    onAdd: (pod) => {
      const key = ownerKey(pod);
      if (key) expectations.creationObserved(key, assignedNode(pod));
    },
    onUpdate: (_old, pod) => {
      if (pod.metadata.deletionTimestamp) gone(pod);
    },
    onDelete: gone,
  });
}
