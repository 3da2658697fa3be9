/**
 * The pod a BroadcastJob runs on one node (createPod in OpenKruise's controller): the template's
 * metadata (labels, annotations, finalizers) with the job's two labels, a controller reference at
 * v1beta1 (OpenKruise v1.9's controller version), and pinned to the node by a required node
 * affinity on metadata.name, which replaces the template's required terms (the node was checked
 * against them) and leaves the scheduler to bind it; or, as OpenKruise does with
 * `--assign-bcj-pods-by-scheduler=false`, bound to the node at once by spec.nodeName with the
 * template's affinity left as it is. Pure.
 */
import {
  KRUISE_V1BETA1_API_VERSION,
  LABEL_BROADCASTJOB_CONTROLLER_UID,
  LABEL_BROADCASTJOB_NAME,
  type BroadcastJob,
} from '@flotilla/api';
import type { MutablePod } from '../../kube/types.js';
import type { NodeSelectorTerm } from '../../kube/node-fit.js';

/** The labels every pod of the job carries; the controller lists the job's pods by them. */
export function jobPodLabels(job: BroadcastJob): Record<string, string> {
  return {
    [LABEL_BROADCASTJOB_NAME]: job.metadata?.name ?? '',
    [LABEL_BROADCASTJOB_CONTROLLER_UID]: job.metadata?.uid ?? '',
  };
}

/** A new pod of `job` for node `nodeName`, left to the scheduler (default) or bound by nodeName. */
export function podForNode(job: BroadcastJob, nodeName: string, byScheduler = true): MutablePod {
  const template = structuredClone(job.spec.template);
  const spec = (template.spec ?? {}) as Record<string, unknown>;
  if (byScheduler) {
    const affinity = (spec.affinity ?? {}) as Record<string, unknown>;
    const nodeAffinity = (affinity.nodeAffinity ?? {}) as Record<string, unknown>;
    const pinned: NodeSelectorTerm = { matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] };
    const required = { nodeSelectorTerms: [pinned] };
    spec.affinity = {
      ...affinity,
      nodeAffinity: { ...nodeAffinity, requiredDuringSchedulingIgnoredDuringExecution: required },
    };
  } else {
    spec.nodeName = nodeName;
  }
  const meta = template.metadata ?? {};
  const { finalizers } = meta as { finalizers?: string[] };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${job.metadata?.name}-`,
      namespace: job.metadata?.namespace,
      labels: { ...meta.labels, ...jobPodLabels(job) },
      ...(meta.annotations ? { annotations: meta.annotations } : {}),
      ...(finalizers ? { finalizers } : {}),
      ownerReferences: [
        {
          apiVersion: KRUISE_V1BETA1_API_VERSION,
          kind: 'BroadcastJob',
          name: job.metadata?.name ?? '',
          uid: job.metadata?.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: spec,
  };
}

export { assignedNode } from '../../kube/node-pods.js';
