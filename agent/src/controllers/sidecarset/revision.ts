/**
 * SidecarSet revisions (ControllerRevisions in the agent's namespace, labelled
 * `kruise.io/sidecarset-name`), built as OpenKruise's history control builds them: the data is
 * `{"spec":{"$patch":"replace","containers","imagePullSecrets","initContainers","patchPodMetadata","volumes"}}`
 * after the typed round trip, re-marshalled with sorted keys; the name is `<sidecarset>-<hash>`
 * with k8s' ControllerRevision hash.
 */
import {
  ANNOTATION_SIDECARSET_HASH,
  ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
  controllerRevisionHash,
  controllerRevisionName,
  encodeGoTyped,
  goJsonMarshal,
  KRUISE_API_VERSION,
  LABEL_SIDECARSET_CUSTOM_VERSION,
  LABEL_SIDECARSET_NAME,
  sidecarSetHash,
  sidecarSetHashWithoutImage,
  type SidecarSet,
} from '@flotilla/api';
import type { ControllerRevision } from '../../kube/types.js';

/** A typed Go encoding, parsed back so the final marshal can sort keys like Go's map round trip. */
const typed = (type: string, value: unknown): unknown => JSON.parse(encodeGoTyped(type, value));

function patchPodMetadataData(value: SidecarSet['spec']['patchPodMetadata']): unknown {
  if (!value) return null;
  return value.map((p) => ({
    ...(p.annotations && Object.keys(p.annotations).length > 0 ? { annotations: p.annotations } : {}),
    ...(p.patchPolicy ? { patchPolicy: p.patchPolicy } : {}),
  }));
}

/** The revision `data` bytes for a (defaulted) SidecarSet. */
export function sidecarSetRevisionData(ss: SidecarSet): string {
  const s = ss.spec;
  return goJsonMarshal({
    spec: {
      $patch: 'replace',
      volumes: typed('[]core.Volume', s.volumes),
      containers: typed('[]kruise.SidecarContainer', s.containers),
      initContainers: typed('[]kruise.SidecarContainer', s.initContainers),
      imagePullSecrets: typed('[]core.LocalObjectReference', s.imagePullSecrets),
      patchPodMetadata: patchPodMetadataData(s.patchPodMetadata),
    },
  });
}

/**
 * The ControllerRevision OpenKruise would create for this SidecarSet: labels are the SidecarSet's
 * plus its name (and custom version), annotations are the SidecarSet's (which include its hashes).
 */
export function newSidecarSetRevision(
  ss: SidecarSet,
  namespace: string,
  revision: number,
  collisionCount: number,
): ControllerRevision {
  const data = sidecarSetRevisionData(ss);
  const name = controllerRevisionName(ss.metadata?.name ?? '', controllerRevisionHash(data, collisionCount));
  const customVersion = ss.metadata?.labels?.[LABEL_SIDECARSET_CUSTOM_VERSION];
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name,
      namespace,
      labels: {
        ...ss.metadata?.labels,
        [LABEL_SIDECARSET_NAME]: ss.metadata?.name ?? '',
        ...(customVersion ? { [LABEL_SIDECARSET_CUSTOM_VERSION]: customVersion } : {}),
      },
      annotations: { ...ss.metadata?.annotations },
      ownerReferences: [
        {
          apiVersion: KRUISE_API_VERSION,
          kind: 'SidecarSet',
          name: ss.metadata?.name ?? '',
          uid: ss.metadata?.uid ?? '',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    data: JSON.parse(data) as unknown,
    revision,
  };
}

/** Revision data as stored: an object, or its JSON text. */
function dataOf(rev: ControllerRevision): Record<string, unknown> {
  const d = typeof rev.data === 'string' ? (JSON.parse(rev.data) as unknown) : rev.data;
  return (d ?? {}) as Record<string, unknown>;
}

/** True when the revision holds exactly this data (history.EqualRevision). */
export function revisionHasData(rev: ControllerRevision, data: string): boolean {
  return goJsonMarshal(dataOf(rev)) === data;
}

/**
 * The SidecarSet as it was at `rev`: the revision's containers, volumes, secrets and patches over
 * the live object, its hashes from the revision (computed when the revision lacks them), and
 * status.latestRevision naming the revision, which is what goes into the pod's hash record.
 */
export function restoreSidecarSet(ss: SidecarSet, rev: ControllerRevision): SidecarSet {
  const spec = (dataOf(rev).spec ?? {}) as Record<string, unknown>;
  const pick = <T>(key: string): T | undefined => (spec[key] === null ? undefined : (spec[key] as T | undefined));
  const restored: SidecarSet = structuredClone(ss);
  restored.spec = {
    ...restored.spec,
    containers: pick('containers'),
    initContainers: pick('initContainers'),
    volumes: pick('volumes'),
    imagePullSecrets: pick('imagePullSecrets'),
    patchPodMetadata: pick('patchPodMetadata'),
  };
  const annotations = { ...restored.metadata?.annotations };
  annotations[ANNOTATION_SIDECARSET_HASH] =
    rev.metadata.annotations?.[ANNOTATION_SIDECARSET_HASH] || sidecarSetHash(restored);
  annotations[ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE] =
    rev.metadata.annotations?.[ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE] || sidecarSetHashWithoutImage(restored);
  restored.metadata = { ...restored.metadata, annotations };
  restored.status = {
    matchedPods: 0,
    updatedPods: 0,
    readyPods: 0,
    ...restored.status,
    latestRevision: rev.metadata.name,
  };
  return restored;
}

/** Oldest first by .revision, then name (history.SortControllerRevisions). */
export function sortRevisions(revisions: readonly ControllerRevision[]): ControllerRevision[] {
  return [...revisions].sort(
    (a, b) =>
      a.revision - b.revision || (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0),
  );
}

/**
 * The revision `injectionStrategy.revision` names: by revisionName, or the newest one carrying
 * the customVersion label. Undefined when none matches.
 */
export function findInjectionRevision(
  revisions: readonly ControllerRevision[],
  info: { revisionName?: string; customVersion?: string },
): ControllerRevision | undefined {
  if (info.revisionName !== undefined) return revisions.find((r) => r.metadata.name === info.revisionName);
  if (info.customVersion !== undefined) {
    const matching = revisions.filter(
      (r) => r.metadata.labels?.[LABEL_SIDECARSET_CUSTOM_VERSION] === info.customVersion,
    );
    return sortRevisions(matching).at(-1);
  }
  return undefined;
}
