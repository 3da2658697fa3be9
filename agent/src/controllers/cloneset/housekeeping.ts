/**
 * What a reconcile tidies after syncing (OpenKruise truncatePodsToDelete, truncateHistory,
 * claimPods): names of vanished pods leave spec.scaleStrategy.podsToDelete, unused
 * ControllerRevisions beyond revisionHistoryLimit are deleted, and owned pods that no longer
 * match the selector are released (their owner reference removed).
 */
import { labelSelectorMatcher } from '../../runtime/label-selector.js';
import { AgentError } from '../../errors.js';
import { revisionsToTruncate } from './revisions.js';
import type { SyncContext } from './sync-context.js';
import type { ControllerRevision, Pod } from '../../kube/types.js';

/** podsToDelete without the names of pods that no longer exist; undefined when nothing changes. */
export function prunedPodsToDelete(listed: readonly string[] | undefined, pods: readonly Pod[]): string[] | undefined {
  if (!listed?.length) return undefined;
  const existing = new Set(pods.map((p) => p.metadata.name));
  const kept = listed.filter((n) => existing.has(n));
  return kept.length === listed.length ? undefined : kept;
}

export async function prunePodsToDelete(ctx: SyncContext, pods: readonly Pod[]): Promise<void> {
  const kept = prunedPodsToDelete(ctx.cs.spec.scaleStrategy?.podsToDelete, pods);
  if (kept === undefined) return;
  try {
    ctx.resourceVersions.expectUpdated(ctx.key, await ctx.client.setPodsToDelete(ctx.cs, kept));
  } catch (err) {
    throw new AgentError('CLONESET_ERR_STATUS', 'failed to prune spec.scaleStrategy.podsToDelete', { cause: err });
  }
}

export async function truncateHistory(
  ctx: SyncContext,
  input: { sorted: readonly ControllerRevision[]; pods: readonly Pod[]; current: string; update: string },
): Promise<void> {
  const limit = ctx.cs.spec.revisionHistoryLimit ?? 10;
  for (const revision of revisionsToTruncate({ ...input, limit })) {
    try {
      await ctx.client.deleteRevision(revision);
    } catch (err) {
      throw new AgentError('CLONESET_ERR_REVISION', `failed to delete revision ${revision.metadata.name}`, {
        cause: err,
      });
    }
  }
}

/** Owned pods the selector no longer matches (pure). */
export function podsToRelease(ctx: Pick<SyncContext, 'cs'>, pods: readonly Pod[]): Pod[] {
  const matches = labelSelectorMatcher(ctx.cs.spec.selector);
  return pods.filter((p) => !matches(p.metadata.labels));
}

/** Removes our owner reference from pods the selector no longer matches; resolves the pods kept. */
export async function releasePods(ctx: SyncContext, pods: readonly Pod[]): Promise<Pod[]> {
  const release = new Set(podsToRelease(ctx, pods));
  const uid = ctx.cs.metadata?.uid;
  for (const pod of release) {
    try {
      // A strategic-merge delete directive: removes just our reference, guarded by the pod's uid.
      await ctx.client.patchPodMetadata(pod, { ownerReferences: [{ $patch: 'delete', uid }], uid: pod.metadata.uid });
      ctx.log.info({ pod: pod.metadata.name }, 'released pod that no longer matches the selector');
    } catch (err) {
      throw new AgentError('CLONESET_ERR_POD_UPDATE', `failed to release pod ${pod.metadata.name}`, { cause: err });
    }
  }
  return pods.filter((p) => !release.has(p));
}
