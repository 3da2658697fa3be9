/**
 * Which NodeImages an ImagePullJob pulls on (GetNodeImagesForJob in OpenKruise's
 * pkg/util/imagejob/imagejob_reader.go): every NodeImage, the named ones, the ones whose labels
 * (copied from their Nodes) match, or the nodes running active pods that match `podSelector`.
 */
import type { ImagePullJob, NodeImage } from '@flotilla/api';
import { labelSelectorMatcher } from '../../runtime/label-selector.js';

/** The parts of a Pod the target resolution reads. */
export interface PodLike {
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
    creationTimestamp?: string;
  };
  spec?: { nodeName?: string };
  status?: { phase?: string };
}

/** What the resolution can look up; informers' caches in production. */
export interface TargetSources {
  /** Every NodeImage. */
  nodeImages(): readonly NodeImage[];
  nodeImage(name: string): NodeImage | undefined;
  /** Pods of one namespace. */
  pods(namespace: string): readonly PodLike[];
}

/**
 * The job's target NodeImages, in a stable order (the parallelism window takes them in this
 * order): by name for selectors, as listed for `selector.names`, by pod age for `podSelector`.
 * Names and pod nodes without a NodeImage are skipped, as OpenKruise does.
 */
export function targetNodeImages(job: ImagePullJob, src: TargetSources): NodeImage[] {
  const { selector, podSelector } = job.spec;
  if (podSelector) return byPods(job, src);
  if (selector?.names !== undefined) {
    return unique(selector.names)
      .map((name) => src.nodeImage(name))
      .filter((ni): ni is NodeImage => ni !== undefined);
  }
  const all = [...src.nodeImages()].sort(byName);
  if (!selector) return all;
  const matches = labelSelectorMatcher(selector);
  return all.filter((ni) => matches(ni.metadata?.labels));
}

function byPods(job: ImagePullJob, src: TargetSources): NodeImage[] {
  const matches = labelSelectorMatcher(job.spec.podSelector ?? {});
  const pods = src
    .pods(job.metadata?.namespace ?? '')
    .filter((p) => isActive(p) && p.spec?.nodeName && matches(p.metadata?.labels))
    .sort(byAge);
  return unique(pods.map((p) => p.spec!.nodeName!))
    .map((name) => src.nodeImage(name))
    .filter((ni): ni is NodeImage => ni !== undefined);
}

/** kubecontroller.IsPodActive: not finished and not being deleted. */
function isActive(p: PodLike): boolean {
  return p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed' && !p.metadata?.deletionTimestamp;
}

/**
 * Whether a job targets `nodeImage`, to wake only the jobs a NodeImage change concerns.
 * `podsOnNode` lists the pods scheduled to that node.
 */
export function jobTargets(job: ImagePullJob, nodeImage: NodeImage, podsOnNode: () => readonly PodLike[]): boolean {
  const { selector, podSelector } = job.spec;
  const name = nodeImage.metadata?.name ?? '';
  if (podSelector) {
    const matches = labelSelectorMatcher(podSelector);
    const ns = job.metadata?.namespace;
    return podsOnNode().some((p) => p.metadata?.namespace === ns && isActive(p) && matches(p.metadata?.labels));
  }
  if (!selector) return true;
  if (selector.names !== undefined) return selector.names.includes(name);
  return labelSelectorMatcher(selector)(nodeImage.metadata?.labels);
}

function unique(names: readonly string[]): string[] {
  return [...new Set(names)];
}

function byName(a: NodeImage, b: NodeImage): number {
  const x = a.metadata?.name ?? '';
  const y = b.metadata?.name ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}

function byAge(a: PodLike, b: PodLike): number {
  const x = `${a.metadata?.creationTimestamp ?? ''}/${a.metadata?.name ?? ''}`;
  const y = `${b.metadata?.creationTimestamp ?? ''}/${b.metadata?.name ?? ''}`;
  return x < y ? -1 : x > y ? 1 : 0;
}
