/**
 * The pod an Advanced DaemonSet runs on a node, and whether it should run there, pure, as
 * OpenKruise v1.9 decides it (pkg/controller/daemonset: NewPod, nodeShouldRunDaemonPod,
 * syncNodes' template; apps/v1 DaemonSet's rules, which OpenKruise follows):
 *
 * - the pod is the template plus the tolerations every daemon pod gets (not-ready and unreachable
 *   NoExecute; disk, memory and pid pressure and unschedulable NoSchedule; network-unavailable
 *   for host-network pods), so a cordoned or pressured node keeps its daemon;
 * - a node should run the pod when the template's nodeName (if any) names it, its required node
 *   affinity and nodeSelector match, and it has no NoSchedule/NoExecute taint the pod does not
 *   tolerate; a pod already there may continue running unless a NoExecute taint is untolerated;
 * - a new pod carries `controller-revision-hash` (and `pod-template-generation` when the set has
 *   the template generation annotation), the InPlaceUpdateReady readiness gate under
 *   InPlaceIfPossible, a v1beta1 controller reference, and a required node affinity on
 *   `metadata.name` that pins it to its node while the scheduler binds it.
 */
import {
  ANNOTATION_DAEMONSET_TEMPLATE_GENERATION,
  CONDITION_INPLACE_UPDATE_READY,
  KRUISE_V1BETA1_API_VERSION,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_POD_TEMPLATE_GENERATION,
  type DaemonSetV1beta1,
} from '@flotilla/api';
import {
  matchesRequiredAffinity,
  untoleratedTaint,
  type NodeLike,
  type NodeSelectorTerm,
  type SchedulingSpec,
  type Toleration,
} from '../../kube/node-fit.js';
import type { MutablePod } from '../../kube/types.js';

const noExecute = (key: string): Toleration => ({ key, operator: 'Exists', effect: 'NoExecute' });
const noSchedule = (key: string): Toleration => ({ key, operator: 'Exists', effect: 'NoSchedule' });

/** The tolerations util.AddOrUpdateDaemonPodTolerations adds (replacing same key and effect). */
export function daemonPodTolerations(spec: { tolerations?: Toleration[]; hostNetwork?: boolean }): Toleration[] {
  const added = [
    noExecute('node.kubernetes.io/not-ready'),
    noExecute('node.kubernetes.io/unreachable'),
    noSchedule('node.kubernetes.io/disk-pressure'),
    noSchedule('node.kubernetes.io/memory-pressure'),
    noSchedule('node.kubernetes.io/pid-pressure'),
    noSchedule('node.kubernetes.io/unschedulable'),
    ...(spec.hostNetwork ? [noSchedule('node.kubernetes.io/network-unavailable')] : []),
  ];
  const kept = (spec.tolerations ?? []).filter((t) => !added.some((a) => a.key === t.key && a.effect === t.effect));
  return [...kept, ...added];
}

/** Whether the daemon pod should run on the node, and whether one there may stay. */
export interface NodePlacement {
  shouldRun: boolean;
  shouldContinueRunning: boolean;
}

/** nodeShouldRunDaemonPod. */
export function nodePlacement(ds: DaemonSetV1beta1, node: NodeLike): NodePlacement {
  const spec = (ds.spec.template.spec ?? {}) as SchedulingSpec & { hostNetwork?: boolean };
  const name = node.metadata?.name ?? '';
  if (spec.nodeName && spec.nodeName !== name) return { shouldRun: false, shouldContinueRunning: false };
  if (!matchesRequiredAffinity(spec, node)) return { shouldRun: false, shouldContinueRunning: false };
  const tolerations = daemonPodTolerations(spec);
  if (!untoleratedTaint(node, tolerations, ['NoSchedule', 'NoExecute'])) {
    return { shouldRun: true, shouldContinueRunning: true };
  }
  return { shouldRun: false, shouldContinueRunning: !untoleratedTaint(node, tolerations, ['NoExecute']) };
}

/** The set's template generation annotation, when it holds an integer (GetTemplateGeneration). */
export function templateGeneration(ds: DaemonSetV1beta1): string | undefined {
  const value = ds.metadata?.annotations?.[ANNOTATION_DAEMONSET_TEMPLATE_GENERATION];
  return value !== undefined && /^-?[0-9]+$/.test(value) ? value : undefined;
}

/** The template's pod spec with the daemon tolerations, pinned to the node, gated for in-place updates. */
function daemonPodSpec(ds: DaemonSetV1beta1, spec: Record<string, unknown> & SchedulingSpec, nodeName: string): void {
  spec.tolerations = daemonPodTolerations(spec);
  const pinned: NodeSelectorTerm = { matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] };
  const affinity = (spec.affinity ?? {}) as Record<string, unknown>;
  const nodeAffinity = (affinity.nodeAffinity ?? {}) as Record<string, unknown>;
  spec.affinity = {
    ...affinity,
    nodeAffinity: { ...nodeAffinity, requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [pinned] } },
  };
  const rolling = ds.spec.updateStrategy?.rollingUpdate;
  if (ds.spec.updateStrategy?.type === 'RollingUpdate' && rolling?.rollingUpdateType === 'InPlaceIfPossible') {
    const gates = (spec.readinessGates ?? []) as { conditionType: string }[];
    spec.readinessGates = [...gates, { conditionType: CONDITION_INPLACE_UPDATE_READY }];
  }
}

/** A new pod of `ds` at revision hash `hash` for `nodeName`. */
export function newDaemonPod(ds: DaemonSetV1beta1, nodeName: string, hash: string): MutablePod {
  const template = structuredClone(ds.spec.template);
  const spec = (template.spec ?? {}) as Record<string, unknown> & SchedulingSpec;
  daemonPodSpec(ds, spec, nodeName);
  const meta = template.metadata ?? {};
  const generation = templateGeneration(ds);
  const { finalizers } = meta as { finalizers?: string[] };
  const name = ds.metadata?.name ?? '';
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${name}-`,
      namespace: ds.metadata?.namespace,
      labels: {
        ...meta.labels,
        ...(generation !== undefined ? { [LABEL_POD_TEMPLATE_GENERATION]: generation } : {}),
        [LABEL_CONTROLLER_REVISION_HASH]: hash,
      },
      ...(meta.annotations ? { annotations: meta.annotations } : {}),
      ...(finalizers ? { finalizers } : {}),
      ownerReferences: [
        {
          apiVersion: KRUISE_V1BETA1_API_VERSION,
          kind: 'DaemonSet',
          name,
          uid: ds.metadata?.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: spec as MutablePod['spec'],
  };
}
