/**
 * What to do with one desired message, decided from the message and the object currently in
 * the cluster. Pure, so the rules are unit-tested:
 * - never go backwards: a message older than the generation stamped on the object is skipped;
 * - touch only what the hub manages: an object of the same name without the managed-by label
 *   (created by someone else, or taken over by removing the label) is neither applied over nor
 *   pruned; putting the label back hands it (back) to the hub;
 * - apply stamps the generation, so status reports and later messages can be ordered;
 * - a run-to-completion kind whose template changed is replaced, not patched (job-rerun.ts);
 * - a BroadcastJob that finished and removed itself (ttlSecondsAfterFinished) is not created
 *   again for the template it ran (finished-jobs.ts).
 */
import { GENERATION_ANNOTATION, MANAGED_BY_HUB, MANAGED_BY_LABEL, type DesiredMessage } from '@flotilla/api';
import { manifestTemplateHash, ranTemplate, type FinishedRun } from './finished-jobs.js';
import { planJobApply, type JobApplyPlan } from './job-rerun.js';
import type { KubeObject } from './types.js';

export type DesiredDecision =
  | { action: 'apply'; manifest: KubeObject }
  | { action: 'replace'; manifest: KubeObject; reason: NonNullable<JobApplyPlan['reason']> }
  | { action: 'delete' }
  | { action: 'skip'; reason: 'stale' | 'not-managed' | 'already-gone' | 'finished' };

export function appliedGeneration(obj: KubeObject | undefined): number | undefined {
  const raw = obj?.metadata?.annotations?.[GENERATION_ANNOTATION];
  const n = Number(raw);
  return raw !== undefined && Number.isInteger(n) ? n : undefined;
}

export function isManaged(obj: KubeObject | undefined): boolean {
  return obj?.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_HUB;
}

/** Adds the generation annotation and the managed-by label to the hub's manifest. */
export function stampManifest(manifest: Record<string, unknown>, generation: number): KubeObject {
  const m = manifest as KubeObject;
  const metadata = m.metadata ?? {};
  return {
    ...m,
    metadata: {
      ...metadata,
      labels: { ...metadata.labels, [MANAGED_BY_LABEL]: MANAGED_BY_HUB },
      annotations: { ...metadata.annotations, [GENERATION_ANNOTATION]: String(generation) },
    },
  };
}

/**
 * `finished`: the remembered finished run of this object, if any (finished-jobs.ts); while the job
 * is gone, a manifest with the template it ran is not applied.
 */
export function decideDesired(
  msg: DesiredMessage,
  current: KubeObject | undefined,
  finished?: FinishedRun,
): DesiredDecision {
  const applied = appliedGeneration(current);
  if (applied !== undefined && isManaged(current) && applied > msg.generation)
    return { action: 'skip', reason: 'stale' };
  if (msg.deleted) {
    if (!current) return { action: 'skip', reason: 'already-gone' };
    if (!isManaged(current)) return { action: 'skip', reason: 'not-managed' };
    return { action: 'delete' };
  }
  if (!msg.manifest) return { action: 'skip', reason: 'stale' };
  if (current && !isManaged(current)) return { action: 'skip', reason: 'not-managed' };
  if (!current && ranTemplate(finished, manifestTemplateHash(msg.manifest)))
    return { action: 'skip', reason: 'finished' };
  const plan = planJobApply(msg.kind, stampManifest(msg.manifest, msg.generation), current);
  return plan.replace
    ? { action: 'replace', manifest: plan.manifest, reason: plan.reason ?? 'template-changed' }
    : { action: 'apply', manifest: plan.manifest };
}
