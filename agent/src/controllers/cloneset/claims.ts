/**
 * PVC housekeeping with scaleStrategy.disablePVCReuse (OpenKruise cleanupPVCs): claims of pods
 * that are gone are deleted, and claims of pods that are terminating are handed to that pod (owner
 * reference moved from the CloneSet to the pod) so the garbage collector removes them with it.
 * Either way a replacement pod gets fresh claims instead of its predecessor's.
 */
import { AgentError } from '../../errors.js';
import { instanceId } from './pods.js';
import type { SyncContext } from './sync-context.js';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.js';

/** Which claims to keep, hand to a terminating pod, or delete (pure). */
export function planClaimCleanup(
  active: readonly Pod[],
  inactive: readonly Pod[],
  claims: readonly PersistentVolumeClaim[],
): {
  keep: PersistentVolumeClaim[];
  handOver: { claim: PersistentVolumeClaim; pod: Pod }[];
  remove: PersistentVolumeClaim[];
} {
  const activeIds = new Set(active.map(instanceId).filter(Boolean));
  const inactiveById = new Map(inactive.filter((p) => instanceId(p)).map((p) => [instanceId(p), p]));
  const out = {
    keep: [] as PersistentVolumeClaim[],
    handOver: [] as { claim: PersistentVolumeClaim; pod: Pod }[],
    remove: [] as PersistentVolumeClaim[],
  };
  for (const claim of claims) {
    const id = instanceId(claim);
    const pod = inactiveById.get(id);
    if (activeIds.has(id)) out.keep.push(claim);
    else if (pod) out.handOver.push({ claim, pod });
    else out.remove.push(claim);
  }
  return out;
}

/** Carries out planClaimCleanup; resolves the claims still in use. */
export async function cleanupClaims(
  ctx: SyncContext,
  active: readonly Pod[],
  inactive: readonly Pod[],
  claims: readonly PersistentVolumeClaim[],
): Promise<PersistentVolumeClaim[]> {
  const plan = planClaimCleanup(active, inactive, claims);
  const csUid = ctx.cs.metadata?.uid;
  for (const { claim, pod } of plan.handOver) {
    const copy = structuredClone(claim);
    copy.metadata.ownerReferences = [
      ...(copy.metadata.ownerReferences ?? []).filter((r) => r.uid !== csUid),
      { apiVersion: 'v1', kind: 'Pod', name: pod.metadata.name, uid: pod.metadata.uid ?? '' },
    ];
    try {
      await ctx.client.updateClaim(copy);
    } catch (err) {
      throw new AgentError('CLONESET_ERR_POD_UPDATE', `failed to hand pvc ${claim.metadata.name} to its pod`, {
        cause: err,
      });
    }
  }
  for (const claim of plan.remove) {
    ctx.scaleExpectations.expectDeletions(ctx.key, [claim.metadata.name]);
    try {
      if (!(await ctx.client.deleteClaim(claim)))
        ctx.scaleExpectations.lowerExpectations(ctx.key, { deletions: [claim.metadata.name] });
    } catch (err) {
      ctx.scaleExpectations.lowerExpectations(ctx.key, { deletions: [claim.metadata.name] });
      throw new AgentError('CLONESET_ERR_DELETE', `failed to clean up pvc ${claim.metadata.name}`, { cause: err });
    }
  }
  return plan.keep;
}
