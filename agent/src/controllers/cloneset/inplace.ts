/**
 * In-place update, pure (OpenKruise pkg/util/inplaceupdate): whether a revision change can be
 * applied to a running pod, what to patch into it, in which container batches, and when it is
 * done.
 *
 * Eligible changes (jsonpatch of the two revisions' data): every operation under the pod spec is
 * a `replace` of `/spec/containers/N/image`; operations under the template metadata (labels,
 * annotations) are allowed and become a metadata patch. Anything else means recreate.
 * Not supported here, since they need kruise-daemon or alpha gates: env-from-metadata restarts,
 * resource resizing, the runtime-containers-meta completion check of container hashes.
 */
import {
  ANNOTATION_INPLACE_UPDATE_GRACE,
  ANNOTATION_INPLACE_UPDATE_GRACE_OLD,
  ANNOTATION_INPLACE_UPDATE_STATE,
  ANNOTATION_INPLACE_UPDATE_STATE_OLD,
} from '@flotilla/api';
import { formatTime } from '../../runtime/kube-time.js';
import { nextBatch } from './container-priority.js';
import { AgentError } from '../../errors.js';
import { createJsonPatch } from './json-diff.js';
import type { Pod } from '../../kube/types.js';
import type { Template } from './types.js';

/** Label and annotation changes; null removes a key. */
export interface MetadataPatch {
  labels?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
}

/** What to change in a pod (OpenKruise UpdateSpec). */
export interface UpdateSpec {
  /** Full name of the revision the pod moves to. */
  revision: string;
  /** New image by container name. */
  containerImages: Record<string, string>;
  metaDataPatch?: MetadataPatch;
  /** inPlaceUpdateStrategy.gracePeriodSeconds: wait this long, not ready, before changing images. */
  graceSeconds?: number;
}

/** The record of an in-place update on the pod (annotation apps.kruise.io/inplace-update-state). */
export interface InPlaceUpdateState {
  revision: string;
  updateTimestamp: string;
  /** imageID of each updated container before its update, to tell when the new image runs. */
  lastContainerStatuses: Record<string, { imageID?: string }> | null;
  updateEnvFromMetadata?: boolean;
  updateResources?: boolean;
  updateImages?: boolean;
  /** Images of lower-priority containers waiting for the next batch. */
  nextContainerImages?: Record<string, string>;
  nextContainerRefMetadata?: Record<string, unknown>;
  nextContainerResources?: Record<string, unknown>;
  /** Containers that must be ready before the next batch starts. */
  preCheckBeforeNext?: { containersRequiredReady?: string[] };
  containerBatchesRecord?: { timestamp: string; containers: string[] }[];
}

const IMAGE_PATH = /^\/spec\/containers\/([0-9]+)\/image$/;

function templateOf(data: unknown): Template | undefined {
  return (data as { spec?: { template?: Template } } | undefined)?.spec?.template;
}

function mapDiff(
  from: Record<string, string> | undefined,
  to: Record<string, string> | undefined,
): Record<string, string | null> | undefined {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(to ?? {})) if (from?.[k] !== v) out[k] = v;
  for (const k of Object.keys(from ?? {})) if (!(k in (to ?? {}))) out[k] = null;
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The update spec moving a pod from the old revision's data to the new one's, or undefined when
 * the change can't be done in place. `oldData`/`newData` are the parsed revision data.
 */
export function calculateInPlaceSpec(
  oldData: unknown,
  newData: unknown,
  revision: string,
  graceSeconds = 0,
): UpdateSpec | undefined {
  const oldTemplate = templateOf(oldData);
  const newTemplate = templateOf(newData);
  if (!oldTemplate || !newTemplate) return undefined;
  const changes = inPlaceChanges(oldData, newData, oldTemplate);
  if (!changes) return undefined;
  const spec: UpdateSpec = { revision, containerImages: changes.containerImages };
  if (changes.metadataChanged) spec.metaDataPatch = metadataPatchOf(oldTemplate, newTemplate);
  if (graceSeconds > 0) spec.graceSeconds = graceSeconds;
  return spec;
}

/**
 * The new image of each container whose image changed, and whether the template metadata did;
 * undefined when any other part of the pod spec changed.
 */
function inPlaceChanges(
  oldData: unknown,
  newData: unknown,
  oldTemplate: Template,
): { containerImages: Record<string, string>; metadataChanged: boolean } | undefined {
  const containerImages: Record<string, string> = {};
  let metadataChanged = false;
  for (const op of createJsonPatch(oldData, newData)) {
    const path = op.path.replace('/spec/template', '');
    if (path.startsWith('/metadata/')) {
      metadataChanged = true;
      continue;
    }
    if (!path.startsWith('/spec/') || op.op !== 'replace') return undefined;
    const index = IMAGE_PATH.exec(path)?.[1];
    const container = index === undefined ? undefined : oldTemplate.spec?.containers?.[Number(index)];
    if (!container || typeof op.value !== 'string') return undefined;
    containerImages[container.name] = op.value;
  }
  return { containerImages, metadataChanged };
}

/** The label and annotation changes between two templates. */
function metadataPatchOf(oldTemplate: Template, newTemplate: Template): MetadataPatch {
  const labels = mapDiff(oldTemplate.metadata?.labels, newTemplate.metadata?.labels);
  const annotations = mapDiff(oldTemplate.metadata?.annotations, newTemplate.metadata?.annotations);
  return { ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) };
}

function applyMap(target: Record<string, string>, patch: Record<string, string | null> | undefined): void {
  for (const [k, v] of Object.entries(patch ?? {})) {
    if (v === null) delete target[k];
    else target[k] = v;
  }
}

/** Applies a metadata patch to a pod (in place; pass a copy). */
export function applyMetadataPatch(pod: Pod, patch: MetadataPatch | undefined): void {
  if (!patch) return;
  pod.metadata.labels ??= {};
  pod.metadata.annotations ??= {};
  applyMap(pod.metadata.labels, patch.labels);
  applyMap(pod.metadata.annotations, patch.annotations);
}

/**
 * Patches the spec into a pod copy (defaultPatchUpdateSpecToPod): the metadata patch, then the
 * images of this batch's containers (highest priority first, see container-priority.ts), their
 * previous imageIDs, the containers left for the next batch, and the state annotation.
 */
export function patchSpecToPod(pod: Pod, spec: UpdateSpec, state: InPlaceUpdateState, now: number): void {
  applyMetadataPatch(pod, spec.metaDataPatch);
  const changed = new Set(pod.spec.containers.map((c) => c.name).filter((n) => n in spec.containerImages));
  const batch = nextBatch(pod, changed);
  const next: Record<string, string> = {};
  for (const c of pod.spec.containers) {
    const image = spec.containerImages[c.name];
    if (image === undefined) continue;
    if (batch.now.has(c.name)) c.image = image;
    else next[c.name] = image;
  }
  for (const s of pod.status?.containerStatuses ?? []) {
    if (!batch.now.has(s.name) || !(s.name in spec.containerImages)) continue;
    state.lastContainerStatuses ??= {};
    state.lastContainerStatuses[s.name] ??= s.imageID ? { imageID: s.imageID } : {};
  }
  state.nextContainerImages = next;
  state.preCheckBeforeNext =
    Object.keys(next).length > 0 ? { containersRequiredReady: [...batch.now].sort() } : undefined;
  state.containerBatchesRecord = [
    ...(state.containerBatchesRecord ?? []),
    { timestamp: formatTime(now), containers: [...batch.now].sort() },
  ];
  pod.metadata.annotations ??= {};
  pod.metadata.annotations[ANNOTATION_INPLACE_UPDATE_STATE] = stateJson(state);
}

function sorted<V>(record: Record<string, V> | undefined | null): Record<string, V> | undefined {
  if (!record) return undefined;
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function nonEmpty<V>(record: Record<string, V> | undefined): Record<string, V> | undefined {
  return record && Object.keys(record).length > 0 ? sorted(record) : undefined;
}

/** The state as Go marshals InPlaceUpdateState: field order, omitempty, sorted map keys. */
export function stateJson(s: InPlaceUpdateState): string {
  return JSON.stringify({
    revision: s.revision,
    updateTimestamp: s.updateTimestamp,
    lastContainerStatuses: sorted(s.lastContainerStatuses) ?? null,
    updateEnvFromMetadata: s.updateEnvFromMetadata || undefined,
    updateResources: s.updateResources || undefined,
    updateImages: s.updateImages || undefined,
    nextContainerImages: nonEmpty(s.nextContainerImages),
    nextContainerRefMetadata: nonEmpty(s.nextContainerRefMetadata),
    nextContainerResources: nonEmpty(s.nextContainerResources),
    preCheckBeforeNext: s.preCheckBeforeNext?.containersRequiredReady?.length ? s.preCheckBeforeNext : undefined,
    containerBatchesRecord: s.containerBatchesRecord?.length ? s.containerBatchesRecord : undefined,
  });
}

/** The spec as Go marshals UpdateSpec (the grace annotation); metaDataPatch is base64 bytes. */
export function graceJson(spec: UpdateSpec): string {
  const patch = spec.metaDataPatch ? { metadata: spec.metaDataPatch } : undefined;
  return JSON.stringify({
    revision: spec.revision,
    containerImages: nonEmpty(spec.containerImages),
    metaDataPatch: patch ? Buffer.from(JSON.stringify(patch)).toString('base64') : undefined,
    graceSeconds: spec.graceSeconds || undefined,
  });
}

function annotation(pod: Pod, key: string, oldKey: string): string | undefined {
  return pod.metadata.annotations?.[key] ?? pod.metadata.annotations?.[oldKey];
}

function parse<T>(pod: Pod, what: string, text: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new AgentError('CLONESET_ERR_INPLACE_STATE', `pod ${pod.metadata.name}: bad ${what} annotation`, {
      cause: err,
    });
  }
}

/** The in-place update state on the pod (new or legacy key); undefined when none. */
export function readState(pod: Pod): InPlaceUpdateState | undefined {
  const text = annotation(pod, ANNOTATION_INPLACE_UPDATE_STATE, ANNOTATION_INPLACE_UPDATE_STATE_OLD);
  return text === undefined ? undefined : parse<InPlaceUpdateState>(pod, 'in-place update state', text);
}

/** Whether the pod waits out an in-place grace period (new or legacy key). */
export function hasGrace(pod: Pod): boolean {
  return annotation(pod, ANNOTATION_INPLACE_UPDATE_GRACE, ANNOTATION_INPLACE_UPDATE_GRACE_OLD) !== undefined;
}

/** The pending update spec of a pod in its grace period; undefined when none. */
export function readGrace(pod: Pod): UpdateSpec | undefined {
  const text = annotation(pod, ANNOTATION_INPLACE_UPDATE_GRACE, ANNOTATION_INPLACE_UPDATE_GRACE_OLD);
  if (text === undefined) return undefined;
  const raw = parse<{
    revision?: string;
    containerImages?: Record<string, string>;
    metaDataPatch?: string;
    graceSeconds?: number;
  }>(pod, 'in-place update grace', text);
  const patch = raw.metaDataPatch
    ? (parse<{ metadata?: MetadataPatch }>(
        pod,
        'metaDataPatch',
        Buffer.from(raw.metaDataPatch, 'base64').toString('utf8'),
      ).metadata ?? undefined)
    : undefined;
  return {
    revision: raw.revision ?? '',
    containerImages: raw.containerImages ?? {},
    ...(patch ? { metaDataPatch: patch } : {}),
    ...(raw.graceSeconds ? { graceSeconds: raw.graceSeconds } : {}),
  };
}

/** Removes both grace annotation keys from a pod copy. */
export function removeGrace(pod: Pod): void {
  delete pod.metadata.annotations?.[ANNOTATION_INPLACE_UPDATE_GRACE];
  delete pod.metadata.annotations?.[ANNOTATION_INPLACE_UPDATE_GRACE_OLD];
}

/** An image with `:latest` added when it names no tag, as the kubelet reports it. */
function withTag(image: string): string {
  return image.includes(':') ? image : `${image}:latest`;
}

/**
 * Why the containers of the current batch are not yet running their new images, or undefined
 * when they are: for each container recorded in lastContainerStatuses, the status must show a
 * new imageID or the spec's image; a container without status is not done.
 */
export function containersNotUpdated(pod: Pod, state: InPlaceUpdateState): string | undefined {
  const images = new Map(pod.spec.containers.map((c) => [c.name, withTag(c.image ?? '')]));
  const waiting = new Set(Object.keys(state.lastContainerStatuses ?? {}));
  for (const s of pod.status?.containerStatuses ?? []) {
    const old = state.lastContainerStatuses?.[s.name];
    if (!old) continue;
    if (old.imageID === s.imageID && images.get(s.name) !== s.image) return `container ${s.name} imageID not changed`;
    waiting.delete(s.name);
  }
  return waiting.size > 0 ? `no status yet for containers ${[...waiting].sort().join(', ')}` : undefined;
}

/**
 * Why the pod's in-place update is not complete, or undefined when it is (or none ran):
 * still in grace, containers left for a next batch, or containers not yet restarted.
 */
export function inPlaceUpdateIncomplete(pod: Pod): string | undefined {
  if (hasGrace(pod)) return 'still in grace period of in-place update';
  const state = readState(pod);
  if (!state) return undefined;
  if (Object.keys(state.nextContainerImages ?? {}).length > 0) return 'containers left for the next batches';
  return containersNotUpdated(pod, state);
}
