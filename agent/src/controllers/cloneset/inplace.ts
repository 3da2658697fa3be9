/**
 * In-place update, pure (OpenKruise pkg/util/inplaceupdate): whether a revision change can be
 * applied to a running pod, what to patch into it, in which container batches, and when it is
 * done.
 *
 * Eligible changes (jsonpatch of the two revisions' data): every operation under the pod spec is
 * a `replace` of `/spec/containers/N/image`, or, with the InPlaceWorkloadVerticalScaling gate, of
 * a container's cpu or memory value (inplace-resources.ts); operations under the template
 * metadata (labels, annotations) are allowed and become a metadata patch. Anything else means
 * recreate. Not supported here, since they need kruise-daemon: env-from-metadata restarts, the
 * runtime-containers-meta completion check of container hashes.
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
import {
  addResourceChange,
  isResourcesPath,
  qosClass,
  resizeRestartsContainer,
  resourcesNotApplied,
  writeResources,
  type ContainerResources,
  type ResourceRequirements,
} from './inplace-resources.js';
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
  /** New cpu/memory values by container name (gate InPlaceWorkloadVerticalScaling). */
  containerResources?: ContainerResources;
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
  /** Resources of lower-priority containers waiting for the next batch. */
  nextContainerResources?: ContainerResources;
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

/** Switches of the in-place update: OpenKruise's gate and what the apiserver serves. */
export interface InPlaceOptions {
  /** Gate InPlaceWorkloadVerticalScaling: cpu/memory changes are applied in place too. */
  verticalScaling?: boolean;
  /**
   * Resources change through the pod's `resize` subresource (Kubernetes ≥ 1.32); otherwise they
   * are written into the pod spec of the in-place update.
   */
  resizeSubresource?: boolean;
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
  opts: InPlaceOptions = {},
): UpdateSpec | undefined {
  const oldTemplate = templateOf(oldData);
  const newTemplate = templateOf(newData);
  if (!oldTemplate || !newTemplate) return undefined;
  const changes = inPlaceChanges(oldData, newData, oldTemplate, opts);
  if (!changes) return undefined;
  const resized = Object.keys(changes.containerResources).length > 0;
  // The apiserver refuses a resize that changes the pod's QoS class: recreate instead.
  if (resized && qosClass(oldTemplate.spec ?? {}) !== qosClass(newTemplate.spec ?? {})) return undefined;
  const spec: UpdateSpec = { revision, containerImages: changes.containerImages };
  if (resized) spec.containerResources = changes.containerResources;
  if (changes.metadataChanged) spec.metaDataPatch = metadataPatchOf(oldTemplate, newTemplate);
  if (graceSeconds > 0) spec.graceSeconds = graceSeconds;
  return spec;
}

interface InPlaceChanges {
  containerImages: Record<string, string>;
  containerResources: ContainerResources;
  metadataChanged: boolean;
}

/**
 * The new image of each container whose image changed, its new resources (with the gate), and
 * whether the template metadata changed; undefined when any other part of the pod spec changed.
 */
function inPlaceChanges(
  oldData: unknown,
  newData: unknown,
  oldTemplate: Template,
  opts: InPlaceOptions,
): InPlaceChanges | undefined {
  const changes: InPlaceChanges = { containerImages: {}, containerResources: {}, metadataChanged: false };
  const containers = oldTemplate.spec?.containers ?? [];
  for (const op of createJsonPatch(oldData, newData)) {
    const path = op.path.replace('/spec/template', '');
    if (path.startsWith('/metadata/')) {
      changes.metadataChanged = true;
      continue;
    }
    if (!path.startsWith('/spec/') || op.op !== 'replace') return undefined;
    if (opts.verticalScaling && isResourcesPath(path)) {
      if (!addResourceChange({ ...op, path }, containers, changes.containerResources)) return undefined;
      continue;
    }
    const index = IMAGE_PATH.exec(path)?.[1];
    const container = index === undefined ? undefined : containers[Number(index)];
    if (!container || typeof op.value !== 'string') return undefined;
    changes.containerImages[container.name] = op.value;
  }
  return changes;
}

/**
 * Whether an in-place update first takes the pod out of its Services (InPlaceUpdateReady=False,
 * defaultCheckPodNeedsBeUnready): always, except a resize-only update under the vertical scaling
 * gate, which does so only when a changed resource restarts its container (resizePolicy
 * RestartContainer). A metadata change does not count against "resize-only".
 */
export function updateNeedsUnready(pod: Pod, spec: UpdateSpec, opts: InPlaceOptions = {}): boolean {
  const resources = spec.containerResources ?? {};
  const resizeOnly =
    opts.verticalScaling === true &&
    Object.keys(resources).length > 0 &&
    Object.keys(spec.containerImages).length === 0;
  return !resizeOnly || resizeRestartsContainer(pod, resources);
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
 * Sets the new images of the containers updating now, and sorts what else changes: resources of
 * this batch (to resize), images and resources of later batches.
 */
function splitBatch(
  pod: Pod,
  now: ReadonlySet<string>,
  images: Record<string, string>,
  resources: ContainerResources,
): { nextImages: Record<string, string>; nextResources: ContainerResources; resize: ContainerResources } {
  const nextImages: Record<string, string> = {};
  const nextResources: ContainerResources = {};
  const resize: ContainerResources = {};
  for (const c of pod.spec.containers) {
    const image = images[c.name];
    if (image !== undefined) {
      if (now.has(c.name)) c.image = image;
      else nextImages[c.name] = image;
    }
    const wanted = resources[c.name];
    if (wanted !== undefined) (now.has(c.name) ? resize : nextResources)[c.name] = wanted;
  }
  return { nextImages, nextResources, resize };
}

/** Keeps the imageID each of these containers runs now, to tell when the new image runs. */
function recordImageIds(pod: Pod, state: InPlaceUpdateState, names: readonly string[]): void {
  for (const s of pod.status?.containerStatuses ?? []) {
    if (!names.includes(s.name)) continue;
    state.lastContainerStatuses ??= {};
    state.lastContainerStatuses[s.name] ??= s.imageID ? { imageID: s.imageID } : {};
  }
}

/**
 * Patches the spec into a pod copy (defaultPatchUpdateSpecToPod): the metadata patch, then the
 * images and resources of this batch's containers (highest priority first, see
 * container-priority.ts), their previous imageIDs, the containers left for the next batch, and
 * the state annotation. Resolves the resources this batch gives to its containers through the
 * pod's `resize` subresource; without it (`resizeSubresource` off) they are written into the pod
 * spec here and nothing is resolved.
 */
export function patchSpecToPod(
  pod: Pod,
  spec: UpdateSpec,
  state: InPlaceUpdateState,
  now: number,
  opts: InPlaceOptions = {},
): ContainerResources {
  applyMetadataPatch(pod, spec.metaDataPatch);
  const images = spec.containerImages;
  const resources = opts.verticalScaling ? (spec.containerResources ?? {}) : {};
  const changed = new Set(pod.spec.containers.map((c) => c.name).filter((n) => n in images || n in resources));
  const batch = nextBatch(pod, changed);
  const { nextImages, nextResources, resize } = splitBatch(pod, batch.now, images, resources);
  recordImageIds(
    pod,
    state,
    [...batch.now].filter((n) => n in images),
  );
  state.nextContainerImages = nextImages;
  state.nextContainerResources = nextResources;
  const more = Object.keys(nextImages).length + Object.keys(nextResources).length > 0;
  state.preCheckBeforeNext = more ? { containersRequiredReady: [...batch.now].sort() } : undefined;
  state.containerBatchesRecord = [
    ...(state.containerBatchesRecord ?? []),
    { timestamp: formatTime(now), containers: [...batch.now].sort() },
  ];
  pod.metadata.annotations ??= {};
  pod.metadata.annotations[ANNOTATION_INPLACE_UPDATE_STATE] = stateJson(state);
  if (opts.resizeSubresource) return resize;
  writeResources(pod, resize);
  return {};
}

function sorted<V>(record: Record<string, V> | undefined | null): Record<string, V> | undefined {
  if (!record) return undefined;
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function nonEmpty<V>(record: Record<string, V> | undefined): Record<string, V> | undefined {
  return record && Object.keys(record).length > 0 ? sorted(record) : undefined;
}

/** Resources by container as Go marshals map[string]ResourceRequirements: limits, then requests, keys sorted. */
function goResources(record: ContainerResources | undefined): ContainerResources | undefined {
  const out = Object.entries(record ?? {}).map(([name, r]): [string, ResourceRequirements] => [
    name,
    { limits: nonEmpty(r.limits), requests: nonEmpty(r.requests) },
  ]);
  return nonEmpty(Object.fromEntries(out));
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
    nextContainerResources: goResources(s.nextContainerResources),
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
    containerResources: goResources(spec.containerResources),
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
    containerResources?: ContainerResources;
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
    ...(raw.containerResources ? { containerResources: raw.containerResources } : {}),
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
 * Why the containers of the current batch are not yet updated, or undefined when they are
 * (defaultCheckContainersInPlaceUpdateCompleted): with the vertical scaling gate and a resize in
 * the state, every container status must report the spec's resources; then, for each container
 * recorded in lastContainerStatuses, the status must show a new imageID or the spec's image; a
 * container without status is not done.
 */
export function containersNotUpdated(
  pod: Pod,
  state: InPlaceUpdateState,
  opts: InPlaceOptions = {},
): string | undefined {
  if (opts.verticalScaling && state.updateResources) {
    const notApplied = resourcesNotApplied(pod);
    if (notApplied !== undefined) return notApplied;
  }
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

/** Whether containers wait for a later batch (images or resources). */
export function hasNextBatch(state: InPlaceUpdateState): boolean {
  return (
    Object.keys(state.nextContainerImages ?? {}).length + Object.keys(state.nextContainerResources ?? {}).length > 0
  );
}

/**
 * Why the pod's in-place update is not complete, or undefined when it is (or none ran):
 * still in grace, containers left for a next batch, or containers not yet updated.
 */
export function inPlaceUpdateIncomplete(pod: Pod, opts: InPlaceOptions = {}): string | undefined {
  if (hasGrace(pod)) return 'still in grace period of in-place update';
  const state = readState(pod);
  if (!state) return undefined;
  if (hasNextBatch(state)) return 'containers left for the next batches';
  return containersNotUpdated(pod, state, opts);
}
