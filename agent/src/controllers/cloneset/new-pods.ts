/**
 * Pods and PVCs the CloneSet creates, built purely from a revision's template (OpenKruise
 * newVersionedPods, k8s GetPodFromTemplate, clonesetutils.UpdateStorage/GetPersistentVolumeClaims).
 */
import {
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  CONDITION_INPLACE_UPDATE_READY,
  KRUISE_API_VERSION,
  LABEL_CLONESET_INSTANCE_ID,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
  LABEL_POD_TEMPLATE_HASH,
  LifecycleState,
} from '@flotilla/api';
import { formatTime } from '../../runtime/kube-time.js';
import type { OwnerReference } from '../../runtime/kube-object.js';
import { shortHash } from './pods.js';
import type { PersistentVolumeClaim, Pod, PodSpec } from '../../kube/types.js';
import type { CloneSet, Template } from './types.js';

/** The controller owner reference every pod and PVC of the CloneSet carries. */
export function cloneSetOwnerRef(cs: CloneSet): OwnerReference {
  return {
    apiVersion: KRUISE_API_VERSION,
    kind: 'CloneSet',
    name: cs.metadata?.name ?? '',
    uid: cs.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** `<template>-<cloneset>-<instance id>`. */
export function claimName(templateName: string, cloneSetName: string, id: string): string {
  return `${templateName}-${cloneSetName}-${id}`;
}

/** Writes both revision labels: the full name in controller-revision-hash, the hash in pod-template-hash. */
export function revisionLabels(revision: string): Record<string, string> {
  return { [LABEL_CONTROLLER_REVISION_HASH]: revision, [LABEL_POD_TEMPLATE_HASH]: shortHash(revision) };
}

/** The PVCs a pod with instance id `id` mounts, one per volumeClaimTemplate, owned by the CloneSet. */
export function newClaims(cs: CloneSet, id: string): PersistentVolumeClaim[] {
  const csName = cs.metadata?.name ?? '';
  return (cs.spec.volumeClaimTemplates ?? []).map((t) => {
    const name = t.metadata?.name ?? '';
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: claimName(name, csName, id),
        namespace: cs.metadata?.namespace,
        labels: {
          ...(t.metadata?.labels ?? {}),
          ...(cs.spec.selector.matchLabels ?? {}),
          [LABEL_CLONESET_INSTANCE_ID]: id,
        },
        ...(t.metadata?.annotations ? { annotations: { ...t.metadata.annotations } } : {}),
        ownerReferences: [cloneSetOwnerRef(cs)],
      },
      spec: structuredClone(t.spec ?? {}),
    };
  });
}

/** Claim volumes first (template order), then the template's own volumes not shadowed by a claim. */
function volumesWithClaims(cs: CloneSet, spec: PodSpec, id: string): PodSpec['volumes'] {
  const csName = cs.metadata?.name ?? '';
  const templates = (cs.spec.volumeClaimTemplates ?? []).map((t) => t.metadata?.name ?? '');
  if (templates.length === 0) return spec.volumes;
  const claimVolumes = templates.map((name) => ({
    name,
    persistentVolumeClaim: { claimName: claimName(name, csName, id) },
  }));
  return [...claimVolumes, ...(spec.volumes ?? []).filter((v) => !templates.includes(v.name))];
}

/** `<cloneset>-<instance id>`: the name of the CloneSet's pod with instance id `id`. */
export function podName(cs: CloneSet, id: string): string {
  return `${cs.metadata?.name ?? ''}-${id}`;
}

export interface NewPodInput {
  cs: CloneSet;
  /** The template of the revision the pod is created at. */
  template: Template;
  /** Full revision name. */
  revision: string;
  id: string;
  now: number;
}

/**
 * A new pod: template labels, annotations and finalizers, the revision labels, the instance id,
 * lifecycle state PreparingNormal with its timestamp, the controller owner reference, the claim
 * volumes, and the InPlaceUpdateReady readiness gate appended.
 */
export function newPod(input: NewPodInput): Pod {
  const { cs, template, id } = input;
  const csName = cs.metadata?.name ?? '';
  const spec = structuredClone(template.spec ?? { containers: [] }) as PodSpec;
  const gates = spec.readinessGates ?? [];
  if (!gates.some((g) => g.conditionType === CONDITION_INPLACE_UPDATE_READY)) {
    spec.readinessGates = [...gates, { conditionType: CONDITION_INPLACE_UPDATE_READY }];
  }
  const volumes = volumesWithClaims(cs, spec, id);
  if (volumes !== undefined) spec.volumes = volumes;
  const finalizers = (template.metadata as { finalizers?: string[] } | undefined)?.finalizers;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: podName(cs, id),
      generateName: `${csName}-`,
      namespace: cs.metadata?.namespace,
      labels: {
        ...(template.metadata?.labels ?? {}),
        ...revisionLabels(input.revision),
        [LABEL_CLONESET_INSTANCE_ID]: id,
        [LABEL_LIFECYCLE_STATE]: LifecycleState.PreparingNormal,
      },
      annotations: {
        ...(template.metadata?.annotations ?? {}),
        [ANNOTATION_LIFECYCLE_TIMESTAMP]: formatTime(input.now),
      },
      ...(finalizers?.length ? { finalizers: [...finalizers] } : {}),
      ownerReferences: [cloneSetOwnerRef(cs)],
    },
    spec,
  };
}
