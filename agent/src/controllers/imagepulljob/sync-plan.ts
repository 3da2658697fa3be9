/**
 * How an ImagePullJob hands its image to nodes (syncNodeImages in OpenKruise's
 * imagepulljob_controller.go and imagepulljob_utils.go): at most `parallelism` nodes pull at a
 * time, each gets a tag entry in its NodeImage that names the job as owner, and each tag carries
 * pull limits and a TTL derived from the job.
 */
import type { ImagePullJob, ImageTagPullPolicy, ImageTagSpec, NodeImage } from '@flotilla/api';
import { KRUISE_API_VERSION, scaledValue } from '@flotilla/api';
import { listsSecret, type SecretRef } from './status.js';
import { type NodeImageRef, sortTags } from '../../kube/nodeimage.js';

const DEFAULT_TIMEOUT_SECONDS = 600;
const DEFAULT_BACKOFF_LIMIT = 3;
const NEVER_TTL_SECONDS = 24 * 3600;
const NEVER_MIN_DEADLINE_SECONDS = 1800;

/**
 * Nodes that may pull at once. An integer as given (default 1; 0 holds the job back). Admission
 * refuses percentages since OpenKruise v1.9, but a job stored earlier may carry one: it is taken
 * of the desired nodes, rounded up, at least 1 (OpenKruise reads it with IntValue(), which yields
 * 0 for "50%" and stalls the job).
 */
export function parallelismOf(job: ImagePullJob, desired: number): number {
  const value = job.spec.parallelism;
  if (value === undefined) return 1;
  // IntOrString may carry a plain number as a string ("2"), which IntValue() reads as 2.
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  const scaled = scaledValue(value, desired, true);
  if (scaled === undefined) return 1;
  return typeof value === 'string' ? Math.max(1, scaled) : scaled;
}

/** The not-yet-synced NodeImages to hand the image to now: what the parallelism window leaves room for. */
export function nodesToSync(notSynced: readonly string[], parallelism: number, active: number): string[] {
  return notSynced.slice(0, Math.max(0, parallelism - active));
}

/** The margin OpenKruise adds to a tag's TTL so the job reads the result before the tag goes. */
export interface TtlMargin {
  /** Fixed part; OpenKruise: 300 s. */
  baseSeconds: number;
  /** Random part, [0, jitter); OpenKruise: 300 s (Never jobs: ±600 s around 24 h). */
  jitterSeconds: number;
}

export const DEFAULT_TTL_MARGIN: TtlMargin = { baseSeconds: 300, jitterSeconds: 300 };

/**
 * The pull policy written into the tag: the job's timeout and retries, and a TTL after which the
 * NodeImage controller drops the finished tag — the job's TTL, else its deadline, else
 * timeout × retries, plus a margin; about a day for Never jobs, whose deadline is at least 30 min.
 */
export function tagPullPolicy(job: ImagePullJob, margin: TtlMargin, random: () => number): ImageTagPullPolicy {
  const pull = job.spec.pullPolicy ?? {};
  const completion = job.spec.completionPolicy ?? {};
  const policy: ImageTagPullPolicy = {};
  if (pull.timeoutSeconds !== undefined) policy.timeoutSeconds = pull.timeoutSeconds;
  if (pull.backoffLimit !== undefined) policy.backoffLimit = pull.backoffLimit;
  if (completion.type === 'Never') {
    policy.ttlSecondsAfterFinished = NEVER_TTL_SECONDS + Math.floor(random() * 1200) - 600;
    policy.activeDeadlineSeconds = Math.max(NEVER_MIN_DEADLINE_SECONDS, pull.timeoutSeconds ?? 0);
    return policy;
  }
  const base =
    completion.ttlSecondsAfterFinished ??
    completion.activeDeadlineSeconds ??
    (pull.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * (pull.backoffLimit ?? DEFAULT_BACKOFF_LIMIT);
  policy.ttlSecondsAfterFinished = base + margin.baseSeconds + Math.floor(random() * margin.jitterSeconds);
  if (completion.activeDeadlineSeconds !== undefined) policy.activeDeadlineSeconds = completion.activeDeadlineSeconds;
  return policy;
}

/** What to write into one NodeImage for one job. */
export interface TagRequest {
  job: ImagePullJob;
  image: NodeImageRef;
  /** Pull secret copies the image entry must list. */
  secrets: readonly SecretRef[];
  /** The policy for a new tag (see tagPullPolicy). */
  pullPolicy: ImageTagPullPolicy;
  /** metav1.Time of now. */
  now: string;
}

/**
 * The NodeImage with the job's tag added, or undefined when it already has it (owner listed and
 * every secret present). A tag another job asked for gets `version + 1` — a new pull round the
 * daemon reports on separately — and this job as an extra owner. A new tag starts one version
 * above whatever the node last reported for it, so an old result never counts for the new job.
 */
export function addJobToNodeImage(ni: NodeImage, req: TagRequest): NodeImage | undefined {
  const { job, image } = req;
  const current = ni.spec.images?.[image.name];
  const listed = current?.pullSecrets ?? [];
  const secrets = [...listed];
  for (const s of req.secrets) if (!listsSecret(secrets, s)) secrets.push({ namespace: s.namespace, name: s.name });
  const tags = withJobTag(ni, req, secrets.length > listed.length);
  if (!tags) return undefined;
  // The job's sandboxConfig replaces the image's, even when absent (OpenKruise does the same).
  const { sandboxConfig: _previous, ...rest } = current ?? { tags: [] };
  const entry = {
    ...rest,
    ...(secrets.length > 0 ? { pullSecrets: secrets } : {}),
    ...(job.spec.sandboxConfig ? { sandboxConfig: job.spec.sandboxConfig } : {}),
    tags: sortTags(tags),
  };
  return { ...ni, spec: { ...ni.spec, images: { ...ni.spec.images, [image.name]: entry } } };
}

/**
 * The image's tags with the job as an owner of its tag; undefined when it already owns it and no
 * secret was added (`secretsAdded`), so the NodeImage needs no write.
 */
function withJobTag(ni: NodeImage, req: TagRequest, secretsAdded: boolean): ImageTagSpec[] | undefined {
  const { job, image } = req;
  const tags = [...(ni.spec.images?.[image.name]?.tags ?? [])];
  const i = tags.findIndex((t) => t.tag === image.tag);
  const existing = tags[i];
  const owner = ownerRef(job);
  if (existing && (existing.ownerReferences ?? []).some((r) => r.uid === owner.uid)) {
    return secretsAdded ? tags : undefined;
  }
  if (existing) tags[i] = withOwner(existing, req, owner);
  else tags.push(newTag(req, owner, lastReportedVersion(ni, image) + 1));
  return tags;
}

/** A tag another job asked for, as a new pull round (`version + 1`) this job owns too. */
function withOwner(tag: ImageTagSpec, req: TagRequest, owner: ReturnType<typeof ownerRef>): ImageTagSpec {
  return {
    ...tag,
    version: (tag.version ?? 0) + 1,
    ownerReferences: [...(tag.ownerReferences ?? []), owner],
    createdAt: req.now,
    imagePullPolicy: req.job.spec.imagePullPolicy,
  };
}

/** The version of the image's tag the node last reported on; -1 when it never did. */
function lastReportedVersion(ni: NodeImage, image: NodeImageRef): number {
  return ni.status?.imageStatuses?.[image.name]?.tags.find((t) => t.tag === image.tag)?.version ?? -1;
}

function newTag(req: TagRequest, owner: ReturnType<typeof ownerRef>, version: number): ImageTagSpec {
  return {
    tag: req.image.tag,
    version,
    pullPolicy: req.pullPolicy,
    ownerReferences: [owner],
    createdAt: req.now,
    imagePullPolicy: req.job.spec.imagePullPolicy,
  };
}

/** The ObjectReference a tag keeps of its job. */
export function ownerRef(job: ImagePullJob): {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
  uid: string;
} {
  return {
    apiVersion: KRUISE_API_VERSION,
    kind: 'ImagePullJob',
    name: job.metadata?.name ?? '',
    namespace: job.metadata?.namespace ?? '',
    uid: job.metadata?.uid ?? '',
  };
}
