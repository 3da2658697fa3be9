/**
 * Makes sure the CloneSet's current spec is stored as a ControllerRevision and finds the current
 * and update revisions (OpenKruise getActiveRevisions, k8s history.CreateControllerRevision):
 * reuse an equal revision, bump an older equal one (rollback), or create a new one. A name
 * already taken by different data is a hash collision: status.collisionCount goes up and the
 * name is hashed again.
 */
import { AgentError, isKubeStatus } from '../../errors.js';
import {
  decideUpdateRevision,
  findCurrentRevision,
  newRevision,
  nextRevisionNumber,
  revisionBytes,
} from './revisions.js';
import type { SyncContext } from './sync-context.js';
import type { ControllerRevision } from '../../kube/types.js';

export interface ActiveRevisions {
  current: ControllerRevision;
  update: ControllerRevision;
  collisionCount: number;
  /** All revisions after this step, sorted. */
  revisions: ControllerRevision[];
}

const MAX_COLLISIONS = 100;

async function createRevision(
  ctx: SyncContext,
  sorted: readonly ControllerRevision[],
  collisionCount: number,
): Promise<{ revision: ControllerRevision; collisionCount: number }> {
  for (let count = collisionCount; count < collisionCount + MAX_COLLISIONS; count++) {
    const candidate = newRevision(ctx.cs, nextRevisionNumber(sorted), count);
    const { bytes, ...revision } = candidate;
    try {
      return { revision: await ctx.client.createRevision(revision), collisionCount: count };
    } catch (err) {
      if (!isKubeStatus(err, 409)) {
        throw new AgentError('CLONESET_ERR_REVISION', `failed to create revision ${revision.metadata.name}`, {
          cause: err,
        });
      }
      const existing = await ctx.client.getRevision(revision.metadata.namespace ?? '', revision.metadata.name);
      // Our own earlier create (the cache hadn't shown it yet): the same data under the same name.
      if (revisionBytes(existing) === bytes) return { revision: existing, collisionCount: count };
      ctx.log.warn({ revision: revision.metadata.name, collisionCount: count + 1 }, 'revision hash collision');
    }
  }
  throw new AgentError('CLONESET_ERR_REVISION', `no free revision name after ${MAX_COLLISIONS} collisions`);
}

/** Stores the update revision if needed and returns the active revisions. `sorted` ascending. */
export async function syncRevisions(ctx: SyncContext, sorted: readonly ControllerRevision[]): Promise<ActiveRevisions> {
  let collisionCount = ctx.cs.status?.collisionCount ?? 0;
  const candidate = newRevision(ctx.cs, nextRevisionNumber(sorted), collisionCount);
  const decision = decideUpdateRevision(sorted, candidate.bytes);
  let update: ControllerRevision;
  let revisions = [...sorted];
  if (decision.kind === 'reuse') {
    update = decision.revision;
  } else if (decision.kind === 'bump') {
    try {
      update = await ctx.client.updateRevision({ ...structuredClone(decision.revision), revision: decision.to });
    } catch (err) {
      throw new AgentError('CLONESET_ERR_REVISION', `failed to bump revision ${decision.revision.metadata.name}`, {
        cause: err,
      });
    }
    ctx.resourceVersions.expectUpdated(ctx.key, update);
    revisions = [...sorted.filter((r) => r !== decision.revision), update];
  } else {
    const created = await createRevision(ctx, sorted, collisionCount);
    update = created.revision;
    collisionCount = created.collisionCount;
    revisions = [...sorted, update];
  }
  const current = findCurrentRevision(revisions, ctx.cs.status?.currentRevision, update);
  return { current, update, collisionCount, revisions };
}
