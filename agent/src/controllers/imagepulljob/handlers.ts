/**
 * Which ImagePullJobs to wake when something they depend on changes (OpenKruise's
 * imagepulljob_event_handler.go): a NodeImage wakes the jobs owning its tags and the running jobs
 * that target it (a new node for a Never job), a Pod the running jobs whose podSelector matches
 * it, a Secret the jobs that use it as a source or reference its copy.
 */
import type { ImagePullJob, NodeImage } from '@flotilla/api';
import { ANNOTATION_IMAGEPULLJOB_REFERENCES } from '@flotilla/api';
import { labelSelectorMatcher } from '../../runtime/label-selector.js';
import type { KeyMapper } from '../../runtime/handlers.js';
import { keyOf, referencesOf, type SecretLike } from './secrets-plan.js';
import { jobTargets, type PodLike } from './targets.js';

/** Jobs indexed by `namespace/secret` for every entry of spec.pullSecrets. */
export const BY_PULL_SECRET = 'byPullSecret';

export function pullSecretKeys(job: ImagePullJob): string[] {
  return (job.spec?.pullSecrets ?? []).map((name) => `${job.metadata?.namespace}/${name}`);
}

/** Jobs that are neither finished nor being deleted. */
export function isRunning(job: ImagePullJob): boolean {
  return !job.status?.completionTime && !job.metadata?.deletionTimestamp;
}

export interface HandlerSources {
  jobs(namespace?: string): readonly ImagePullJob[];
  jobsUsingSecret(secretKey: string): readonly ImagePullJob[];
  podsOnNode(node: string): readonly PodLike[];
}

/** NodeImage → owners of its tags, plus running jobs that target it. */
export function nodeImageToJobs(src: HandlerSources): KeyMapper<NodeImage> {
  return (ni) => {
    const keys = new Set<string>();
    for (const image of Object.values(ni.spec?.images ?? {})) {
      for (const tag of image.tags ?? []) {
        for (const ref of tag.ownerReferences ?? []) {
          if (ref.kind === 'ImagePullJob') keys.add(`${ref.namespace}/${ref.name}`);
        }
      }
    }
    const pods = (): readonly PodLike[] => src.podsOnNode(ni.metadata?.name ?? '');
    for (const job of src.jobs()) if (isRunning(job) && jobTargets(job, ni, pods)) keys.add(keyOf(job));
    return [...keys];
  };
}

/** Pod → running jobs in its namespace whose podSelector matches it. */
export function podToJobs(src: HandlerSources): KeyMapper<PodLike> {
  return (pod) =>
    src
      .jobs(pod.metadata?.namespace)
      .filter((job) => isRunning(job) && job.spec.podSelector)
      .filter((job) => labelSelectorMatcher(job.spec.podSelector!)(pod.metadata?.labels))
      .map(keyOf);
}

/** Secret → jobs using it as a pull secret, or listed in its copy's references. */
export function secretToJobs(src: HandlerSources): KeyMapper<SecretLike> {
  return (secret) => {
    const keys = new Set(src.jobsUsingSecret(keyOf(secret)).map(keyOf));
    if (secret.metadata?.annotations?.[ANNOTATION_IMAGEPULLJOB_REFERENCES] !== undefined) {
      for (const key of referencesOf(secret)) keys.add(key);
    }
    return [...keys];
  };
}
