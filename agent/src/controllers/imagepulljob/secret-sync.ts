/**
 * Carries out planSecrets: releases copies the job no longer wants, then creates or refreshes
 * one copy per pull secret in the daemon config namespace and returns the references the job's
 * NodeImage entries must list. Creations are recorded as expectations first, so a cache that has
 * not seen a new copy yet never makes the next pass create a second one.
 */
import type { ImagePullJob } from '@flotilla/api';
import type { Logger } from 'pino';
import type { ScaleExpectations } from '../../runtime/expectations.js';
import type { SecretClient } from './client.js';
import { keyOf, newCopy, planSecrets, refreshedCopy, releasedCopy, type SecretLike } from './secrets-plan.js';
import type { SecretRef } from './status.js';
import type { EventRecording } from '../../runtime/events.js';

/** Read access to the secrets informer. */
export interface SecretLister {
  get(namespace: string | undefined, name: string): SecretLike | undefined;
  list(namespace?: string): SecretLike[];
  /**
   * The namespaces whose secrets this lister sees, when not all of them
   * (FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES); undefined: every namespace.
   */
  readonly namespaces?: readonly string[];
}

export interface SecretSyncDeps {
  secrets: SecretLister;
  client: SecretClient;
  /** Keyed by job key; names are source secret keys. */
  expectations: ScaleExpectations;
  events: EventRecording;
  /** Where copies live and the daemon reads them; OpenKruise: kruise-daemon-config. */
  namespace: string;
  log: Logger;
}

export const REASON_PULL_SECRET_NOT_FOUND = 'PullSecretNotFound';

/**
 * Makes the config namespace hold what `job` needs: copies of its pull secrets while it runs
 * (`running`), none once it finished or is being deleted. Returns the copies to list.
 */
export async function syncJobSecrets(job: ImagePullJob, running: boolean, deps: SecretSyncDeps): Promise<SecretRef[]> {
  const ns = job.metadata?.namespace ?? '';
  // A job in the config namespace itself needs no copies: the daemon reads its secrets directly.
  if (ns === deps.namespace) {
    return running ? (job.spec.pullSecrets ?? []).map((name) => ({ namespace: ns, name })) : [];
  }
  const jobKey = keyOf(job);
  const plan = planSecrets(job, deps.secrets.list(deps.namespace), running);
  for (const copy of plan.release) await release(copy, jobKey, deps);
  if (plan.claim.length === 0) return [];
  await deps.client.ensureNamespace(deps.namespace);
  const refs: SecretRef[] = [];
  for (const { source, copy } of plan.claim) {
    const [sourceNs = '', sourceName = ''] = source.split('/');
    const src = deps.secrets.get(sourceNs, sourceName);
    if (!src) {
      // Pulls go on without it; the registry's refusal then tells each node why it failed.
      const seen = deps.secrets.namespaces;
      const message =
        seen && !seen.includes(sourceNs)
          ? `pull secret ${source} not readable: the agent reads pull secrets only in namespaces ${seen.join(', ')} (FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES, the chart's imagePullJob.pullSecretNamespaces)`
          : `pull secret ${source} not found`;
      deps.events.event(job, 'Warning', REASON_PULL_SECRET_NOT_FOUND, message);
      deps.log.warn({ secret: source }, 'pull secret not found');
      continue;
    }
    refs.push({ namespace: deps.namespace, name: await claim(src, copy, jobKey, deps) });
  }
  return refs;
}

async function claim(
  src: SecretLike,
  copy: SecretLike | undefined,
  jobKey: string,
  deps: SecretSyncDeps,
): Promise<string> {
  if (!copy) {
    const source = keyOf(src);
    deps.expectations.expectCreations(jobKey, [source]);
    try {
      const created = await deps.client.create(newCopy(src, jobKey, deps.namespace));
      deps.log.info({ secret: keyOf(created), source }, 'copied pull secret for the node daemon');
      return created.metadata?.name ?? '';
    } catch (err) {
      deps.expectations.lowerExpectations(jobKey, { creations: [source] });
      throw err;
    }
  }
  const refreshed = refreshedCopy(copy, src, jobKey);
  if (refreshed) await deps.client.update(refreshed);
  return copy.metadata?.name ?? '';
}

async function release(copy: SecretLike, jobKey: string, deps: SecretSyncDeps): Promise<void> {
  const outcome = releasedCopy(copy, jobKey);
  if (!outcome) return;
  if ('delete' in outcome) {
    await deps.client.delete(copy);
    deps.log.info({ secret: keyOf(copy) }, 'deleted pull secret copy no job references');
  } else {
    await deps.client.update(outcome.update);
  }
}
