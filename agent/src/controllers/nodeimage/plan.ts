/**
 * What the NodeImage controller decides, as pure functions of what it read (OpenKruise's
 * pkg/controller/nodeimage/nodeimage_controller.go): whether a Node's NodeImage must be created or
 * deleted, which labels and tags its spec keeps, and which tags its status must mark failed
 * because the node daemon never answered or the deadline passed.
 */
import {
  KRUISE_GROUP,
  KruiseKind,
  LABEL_FAKE_NODEIMAGE,
  type ImageSpec,
  type ImageTagSpec,
  type ImageTagStatus,
  type NodeImage,
  type NodeImageStatus,
  type ObjectReference,
} from '@flotilla/api';
import { sortTags } from '../../kube/nodeimage.js';
import { sameJson } from '../../runtime/kube-object.js';
import { formatTime, parseTime } from '../../runtime/kube-time.js';

/** The parts of a core/v1 Node the controller reads. */
export interface NodeLike {
  metadata?: { name?: string; labels?: Record<string, string>; deletionTimestamp?: string };
  status?: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] };
}

export type ImageStatus = NonNullable<NodeImageStatus['imageStatuses']>[string];

/** What to do with the NodeImage of one node name. */
export type NodeImageAction =
  | { type: 'none' }
  /** The Node is Ready: create its NodeImage (with the Node's labels). */
  | { type: 'create'; labels: Record<string, string> }
  /** The Node is Ready but only since recently: look again later. */
  | { type: 'wait'; afterMs: number }
  /** The Node is gone: its NodeImage goes too (unless it is a test's fake one). */
  | { type: 'delete' }
  /** Both exist: keep the spec and status in order. */
  | { type: 'sync' };

/**
 * The NodeImage follows its Node. It is created only once the Node has been Ready for
 * `creationDelayMs` (OpenKruise waits 30 s so a flapping new node doesn't churn), and kept when
 * its Node vanished only if it carries the fake-nodeimage label that e2e tests use.
 */
export function nodeImageAction(
  node: NodeLike | undefined,
  nodeImage: NodeImage | undefined,
  nowMs: number,
  creationDelayMs: number,
): NodeImageAction {
  if (!node || node.metadata?.deletionTimestamp) return actionWithoutNode(nodeImage);
  if (!nodeImage) return actionForNewNode(node, nowMs, creationDelayMs);
  return nodeImage.metadata?.deletionTimestamp ? { type: 'none' } : { type: 'sync' };
}

/** The Node is gone or going: so is its NodeImage, unless it is a test's fake one. */
function actionWithoutNode(nodeImage: NodeImage | undefined): NodeImageAction {
  if (!nodeImage || nodeImage.metadata?.deletionTimestamp) return { type: 'none' };
  return nodeImage.metadata?.labels?.[LABEL_FAKE_NODEIMAGE] !== undefined ? { type: 'sync' } : { type: 'delete' };
}

/** A Node without a NodeImage gets one once it has been Ready for `creationDelayMs`. */
function actionForNewNode(node: NodeLike, nowMs: number, creationDelayMs: number): NodeImageAction {
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  if (ready?.status !== 'True') return { type: 'none' };
  const since = parseTime(ready.lastTransitionTime) ?? 0;
  const left = since + creationDelayMs - nowMs;
  return left > 0 ? { type: 'wait', afterMs: left } : { type: 'create', labels: { ...node.metadata?.labels } };
}

/** Whether the ImagePullJob an owner reference names still exists with the same uid. */
export type OwnerAlive = (owner: ObjectReference) => boolean;

/** The spec and labels a NodeImage should have; `changed` false means leave it alone. */
export interface SpecPlan {
  changed: boolean;
  labels: Record<string, string> | undefined;
  images: Record<string, ImageSpec>;
  /** Why, one line per change, for the log. */
  messages: string[];
  /** When the next tag's TTL runs out, if any tag is waiting for it. */
  requeueAfterMs: number | undefined;
}

/**
 * Copies the Node's labels and drops tags that have no createdAt (they never went through
 * defaulting), whose ImagePullJob owners are all gone, or whose TTL after completion (of the same
 * version) expired. An image left without tags is dropped.
 */
export function planNodeImageSpec(
  nodeImage: NodeImage,
  node: NodeLike | undefined,
  ownerAlive: OwnerAlive,
  nowMs: number,
): SpecPlan {
  const messages: string[] = [];
  let labels = nodeImage.metadata?.labels;
  if (node && !sameStrings(labels, node.metadata?.labels)) {
    labels = { ...node.metadata?.labels };
    messages.push('node labels changed');
  }
  let requeueAfterMs: number | undefined;
  const images: Record<string, ImageSpec> = {};
  for (const [name, image] of Object.entries(nodeImage.spec.images ?? {})) {
    const kept = keptTags(name, image, nodeImage.status?.imageStatuses?.[name], ownerAlive, nowMs);
    messages.push(...kept.messages);
    if (kept.waitMs !== undefined) requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, kept.waitMs);
    if (kept.tags.length > 0) images[name] = { ...image, tags: sortTags(kept.tags) };
    else messages.push(`no longer has ${name} image spec`);
  }
  return { changed: messages.length > 0, labels, images, messages, requeueAfterMs };
}

/** The tags of one image that stay, why the others go, and when the next TTL runs out. */
function keptTags(
  name: string,
  image: ImageSpec,
  status: ImageStatus | undefined,
  ownerAlive: OwnerAlive,
  nowMs: number,
): { tags: ImageTagSpec[]; messages: string[]; waitMs: number | undefined } {
  const tags: ImageTagSpec[] = [];
  const messages: string[] = [];
  let waitMs: number | undefined;
  for (const tag of image.tags) {
    const verdict = tagVerdict(name, tag, status, ownerAlive, nowMs);
    if (verdict.message) messages.push(verdict.message);
    if (verdict.keep) tags.push(verdict.keep);
    if (verdict.waitMs !== undefined) waitMs = Math.min(waitMs ?? Infinity, verdict.waitMs);
  }
  return { tags, messages, waitMs };
}

interface TagVerdict {
  keep?: ImageTagSpec;
  message?: string;
  waitMs?: number;
}

function tagVerdict(
  name: string,
  tag: ImageTagSpec,
  status: ImageStatus | undefined,
  ownerAlive: OwnerAlive,
  nowMs: number,
): TagVerdict {
  const full = `${name}:${tag.tag}`;
  if (!tag.createdAt) return { message: `image ${full} has no createdAt field` };
  const owners = tag.ownerReferences ?? [];
  const alive = owners.filter((ref) => !isImagePullJobRef(ref) || ownerAlive(ref));
  let keep = tag;
  let message: string | undefined;
  if (alive.length !== owners.length) {
    message = `image ${full} owners changed from ${ownerNames(owners)} to ${ownerNames(alive)}`;
    if (alive.length === 0) return { message };
    keep = { ...tag, ownerReferences: alive };
  }
  const ttl = tag.pullPolicy?.ttlSecondsAfterFinished;
  const done = status?.tags.find((s) => s.tag === tag.tag && s.version === tag.version)?.completionTime;
  const doneMs = parseTime(done);
  if (ttl !== undefined && doneMs !== undefined) {
    const left = doneMs + ttl * 1000 - nowMs;
    if (left <= 0) return { message: `image ${full} has exceeded TTL (${ttl})s since ${done} completed` };
    return { keep, message, waitMs: left };
  }
  return { keep, message };
}

function isImagePullJobRef(ref: ObjectReference): boolean {
  const group = ref.apiVersion?.includes('/') ? ref.apiVersion.split('/')[0] : '';
  return group === KRUISE_GROUP && ref.kind === KruiseKind.ImagePullJob;
}

function ownerNames(refs: ObjectReference[]): string {
  return `[${refs.map((r) => `${r.namespace}/${r.name}`).join(', ')}]`;
}

export interface StatusPlan {
  /** The status to write; undefined when nothing changed. */
  status: NodeImageStatus | undefined;
  /** Tags newly marked failed, for events on their owners. */
  failed: { image: string; tag: ImageTagSpec; message: string }[];
  /** When the next tag may time out. */
  requeueAfterMs: number | undefined;
}

export const NOT_RESPONDED_MESSAGE = 'node has not responded for a long time';
export const DEADLINE_MESSAGE = 'pulling exceeds the activeDeadlineSeconds';

/**
 * Marks tags failed that the node daemon never picked up within `responseTimeoutMs` of their
 * creation, or that are still unfinished after activeDeadlineSeconds (plus the response timeout),
 * and recounts desired/succeeded/failed/pulling/waiting over the tags still in the spec.
 */
export function planNodeImageStatus(nodeImage: NodeImage, nowMs: number, responseTimeoutMs: number): StatusPlan {
  const old = nodeImage.status;
  const statuses: Record<string, ImageStatus> = structuredClone(old?.imageStatuses ?? {});
  const failed: StatusPlan['failed'] = [];
  let requeueAfterMs: number | undefined;
  const now = formatTime(nowMs);
  for (const [name, image] of Object.entries(nodeImage.spec.images ?? {})) {
    for (const tag of image.tags) {
      const createdMs = parseTime(tag.createdAt);
      if (createdMs === undefined) continue;
      const tags = (statuses[name] ??= { tags: [] }).tags;
      const current = tags.find((s) => s.tag === tag.tag);
      const timeout = tagTimeout(tag, current, createdMs + responseTimeoutMs - nowMs);
      if (timeout?.kind === 'wait') requeueAfterMs = Math.min(requeueAfterMs ?? Infinity, timeout.ms);
      if (timeout?.kind !== 'failed') continue;
      upsertTag(tags, failedTag(tag, now, timeout.message));
      failed.push({ image: name, tag, message: timeout.message });
    }
  }
  const status = recount(nodeImage.spec.images ?? {}, statuses, old);
  return { status: sameJson(status, old) ? undefined : status, failed, requeueAfterMs };
}

/**
 * Whether a tag has timed out, or how long until it may; undefined when it cannot any more.
 * `current` is the node's report on the tag; `leftMs` what is left of the response timeout since
 * the tag was created.
 */
function tagTimeout(
  tag: ImageTagSpec,
  current: ImageTagStatus | undefined,
  leftMs: number,
): { kind: 'wait'; ms: number } | { kind: 'failed'; message: string } | undefined {
  if (!current || current.version !== tag.version) {
    return leftMs > 0 ? { kind: 'wait', ms: leftMs } : { kind: 'failed', message: NOT_RESPONDED_MESSAGE };
  }
  const deadline = tag.pullPolicy?.activeDeadlineSeconds;
  if (current.completionTime || deadline === undefined) return undefined;
  const left = leftMs + deadline * 1000;
  return left > 0 ? { kind: 'wait', ms: left } : { kind: 'failed', message: DEADLINE_MESSAGE };
}

function failedTag(tag: ImageTagSpec, now: string, message: string): ImageTagStatus {
  return { tag: tag.tag, phase: 'Failed', completionTime: now, version: tag.version, message };
}

function upsertTag(tags: ImageTagStatus[], status: ImageTagStatus): void {
  const i = tags.findIndex((s) => s.tag === status.tag);
  if (i >= 0) tags[i] = { ...tags[i], ...status };
  else tags.push(status);
}

/** Status counters over the tags present in the spec; statuses of tags gone from the spec are dropped. */
function recount(
  images: Record<string, ImageSpec>,
  statuses: Record<string, ImageStatus>,
  old: NodeImageStatus | undefined,
): NodeImageStatus {
  const count = { desired: 0, succeeded: 0, failed: 0, pulling: 0 };
  let waiting = 0;
  const kept: Record<string, ImageStatus> = {};
  for (const [name, image] of Object.entries(images)) {
    count.desired += image.tags.length;
    const wanted = new Set(image.tags.map((t) => t.tag));
    const tags = (statuses[name]?.tags ?? []).filter((s) => wanted.has(s.tag));
    for (const s of tags) {
      if (s.phase === 'Succeeded') count.succeeded++;
      else if (s.phase === 'Failed') count.failed++;
      else if (s.phase === 'Pulling') count.pulling++;
      else if (s.phase === 'Waiting') waiting++;
    }
    if (tags.length > 0) kept[name] = { tags: sortTags(tags) };
  }
  const { imageStatuses: _dropped, ...rest } = old ?? { desired: 0 };
  // waiting (OpenKruise v1.9) only once a daemon reported it, so older statuses are not rewritten.
  const queued = waiting > 0 || old?.waiting !== undefined ? { waiting } : {};
  return { ...rest, ...count, ...queued, ...(Object.keys(kept).length > 0 ? { imageStatuses: kept } : {}) };
}

function sameStrings(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ak = Object.keys(a ?? {});
  const bk = Object.keys(b ?? {});
  return ak.length === bk.length && ak.every((k) => a![k] === b?.[k]);
}
