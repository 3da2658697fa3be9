/**
 * A StatefulSet pod's identity, as OpenKruise v1.9 (pkg/controller/statefulset/stateful_set_utils.go)
 * and apps/v1 give it: the name `<set>-<ordinal>`, the pod-name and pod-index labels, hostname
 * and subdomain, the revision label, one claim per volumeClaimTemplate named
 * `<template>-<set>-<ordinal>` mounted as the template's volume, and the controller owner
 * reference at apps.kruise.io/v1beta1.
 */
import {
  KRUISE_V1BETA1_API_VERSION,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_POD_INDEX,
  LABEL_STATEFULSET_POD_NAME,
  type PodTemplateSpec,
  type StatefulSet,
} from '@flotilla/api';
import type { OwnerReference } from '../../runtime/kube-object.js';
import type { PersistentVolumeClaim, Pod, PodSpec } from '../../kube/types.js';

/** `<set>-<ordinal>`. */
export function podName(set: StatefulSet, ordinal: number): string {
  return `${set.metadata?.name ?? ''}-${ordinal}`;
}

/** The pod's ordinal when its name is `<set>-<n>`, else -1 (getParentNameAndOrdinal). */
export function ordinalOf(set: StatefulSet, pod: { metadata: { name: string } }): number {
  const prefix = `${set.metadata?.name ?? ''}-`;
  const name = pod.metadata.name;
  if (!name.startsWith(prefix)) return -1;
  const rest = name.slice(prefix.length);
  return /^(0|[1-9][0-9]*)$/.test(rest) ? Number(rest) : -1;
}

/** `<template>-<set>-<ordinal>`. */
export function claimName(templateName: string, set: StatefulSet, ordinal: number): string {
  return `${templateName}-${set.metadata?.name ?? ''}-${ordinal}`;
}

/** The controller owner reference pods and revisions carry (v1beta1, as OpenKruise v1.9 writes it). */
export function setOwnerRef(set: StatefulSet): OwnerReference {
  return {
    apiVersion: KRUISE_V1BETA1_API_VERSION,
    kind: 'StatefulSet',
    name: set.metadata?.name ?? '',
    uid: set.metadata?.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}

/**
 * The claims of one ordinal: the template's, named for the ordinal, labelled with the selector's
 * matchLabels; owned by the set when `whenDeleted: Delete` (garbage collected with it).
 */
export function claimsFor(set: StatefulSet, ordinal: number): PersistentVolumeClaim[] {
  const deleteWithSet = set.spec.persistentVolumeClaimRetentionPolicy?.whenDeleted === 'Delete';
  return (set.spec.volumeClaimTemplates ?? []).map((template) => {
    const metadata = template.metadata ?? {};
    return {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: claimName(metadata.name ?? '', set, ordinal),
        namespace: set.metadata?.namespace,
        labels: { ...(metadata.labels ?? {}), ...(set.spec.selector.matchLabels ?? {}) },
        ...(metadata.annotations ? { annotations: { ...metadata.annotations } } : {}),
        ...(deleteWithSet ? { ownerReferences: [{ ...setOwnerRef(set), controller: false }] } : {}),
      },
      spec: structuredClone(template.spec ?? {}),
    };
  });
}

/** The template's volumes with each claim template mounted as the ordinal's claim (updateStorage). */
function volumesWithClaims(set: StatefulSet, spec: PodSpec, ordinal: number): PodSpec['volumes'] {
  const templates = set.spec.volumeClaimTemplates ?? [];
  if (templates.length === 0) return spec.volumes;
  const names = new Set(templates.map((t) => t.metadata?.name ?? ''));
  const claims = templates.map((t) => ({
    name: t.metadata?.name ?? '',
    persistentVolumeClaim: { claimName: claimName(t.metadata?.name ?? '', set, ordinal) },
  }));
  return [...claims, ...(spec.volumes ?? []).filter((v) => !names.has(v.name))];
}

/** The pod of `ordinal` at `revision` (its full name) from `template`. */
export function newPod(set: StatefulSet, template: PodTemplateSpec, revision: string, ordinal: number): Pod {
  const spec = structuredClone(template.spec ?? { containers: [] }) as PodSpec;
  const name = podName(set, ordinal);
  const volumes = volumesWithClaims(set, spec, ordinal);
  if (volumes !== undefined) spec.volumes = volumes;
  const withIdentity = { ...spec, hostname: name, subdomain: set.spec.serviceName || undefined } as PodSpec;
  const finalizers = (template.metadata as { finalizers?: string[] } | undefined)?.finalizers;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: set.metadata?.namespace,
      labels: {
        ...(template.metadata?.labels ?? {}),
        [LABEL_STATEFULSET_POD_NAME]: name,
        [LABEL_POD_INDEX]: String(ordinal),
        [LABEL_CONTROLLER_REVISION_HASH]: revision,
      },
      ...(template.metadata?.annotations ? { annotations: { ...template.metadata.annotations } } : {}),
      ...(finalizers?.length ? { finalizers: [...finalizers] } : {}),
      ownerReferences: [setOwnerRef(set)],
    },
    spec: withIdentity,
  };
}
