/**
 * The heart of the CloneSet controller, pure: from the spec and the pods that exist, how many pods
 * to create, delete and update, and within which limits (OpenKruise's
 * calculateDiffsWithExpectation). Scale and update are never done in the same reconcile; the
 * expectations and the order of steps in the controller keep the two consistent.
 */
import { LABEL_CLONESET_SCALING_EXCLUDE_PREPARING_DELETE, LifecycleState } from '@flotilla/api';
import { hasRevision, isPodAvailable, isSpecifiedDelete, lifecycleState } from './pods.js';
import { resolveStrategy, type ResolvedStrategy } from './strategy.js';
import type { Pod } from '../../kube/types.js';
import type { CloneSet } from './types.js';

/** Feature switches OpenKruise has as gates or flags; all default off, as in OpenKruise. */
export interface PlanOptions {
  /** `--cloneset-scaling-exclude-preparing-delete`: PreparingDelete pods don't count towards replicas. */
  scalingExcludePreparingDelete?: boolean;
  /** Gate CloneSetPartitionRollback: raising the partition rolls updated pods back. */
  partitionRollback?: boolean;
  /** Gate PreparingUpdateAsUpdate: when scaling, PreparingUpdate pods count as updated. */
  preparingUpdateAsUpdate?: boolean;
}

/** What calculateDiffs decides. All counts are pods. */
export interface Diffs {
  /** Pods to create (≥ 0): replicas plus the surge in use, minus the pods that exist. */
  scaleUpNum: number;
  /**
   * How many of the pods to create should be of the current (old) revision, so the partition
   * holds after a scale-up (≥ 0). May exceed scaleUpNum; creation takes the smaller.
   */
  scaleUpNumOldRevision: number;
  /**
   * Pods that may actually be created now (≤ scaleUpNum): what scaleStrategy.maxUnavailable
   * leaves after the pods already unavailable. When smaller than scaleUpNum a ScaleUpLimited
   * event is emitted.
   */
  scaleUpLimit: number;
  /** Pods to delete by scaling in (≥ 0), not counting pods already specified for deletion. */
  scaleDownNum: number;
  /** How many of those should be old-revision pods; may exceed scaleDownNum. */
  scaleDownNumOldRevision: number;
  /**
   * Ready pods that may be deleted now (specified deletes and scale-in): maxUnavailable plus the
   * pods above replicas, minus the pods already unavailable. Unready pods are always deletable.
   * Only computed when something is to be deleted; 0 otherwise.
   */
  deleteReadyLimit: number;
  /** Pods temporarily allowed above replicas (≤ maxSurge): for specified deletes or for the update. */
  useSurge: number;
  /** The part of useSurge that is old-revision pods (so the partition holds while surging). */
  useSurgeOldRevision: number;
  /**
   * Pods to move between revisions: > 0 update that many to the update revision, < 0 roll that
   * many back to the current revision (only with partitionRollback), 0 nothing to update.
   */
  updateNum: number;
  /**
   * Most pods of the target revision that may be unavailable (being updated counts) while
   * updating: maxUnavailable plus the pods above replicas. 0 when updateNum is 0.
   */
  updateMaxUnavailable: number;
}

/** Pod counts by revision and state, as calculateDiffs sees them; exported for logs and tests. */
export interface RevisionCounts {
  total: number;
  active: number;
  preDeleting: number;
  toDelete: number;
  unavailable: number;
}

export interface DiffInput {
  cs: CloneSet;
  /** Active pods owned by the CloneSet. */
  pods: readonly Pod[];
  currentRevision: string;
  updateRevision: string;
  now: number;
  /**
   * True when counting for the scale step (PreparingUpdate pods may count as updated there, see
   * PlanOptions.preparingUpdateAsUpdate); false for the update step.
   */
  forScale?: boolean;
  options?: PlanOptions;
}

/** Pods of one revision, counted. */
function countPods(pods: readonly Pod[], cs: CloneSet, now: number): RevisionCounts {
  const counts: RevisionCounts = { total: 0, active: 0, preDeleting: 0, toDelete: 0, unavailable: 0 };
  const minReady = cs.spec.minReadySeconds ?? 0;
  for (const pod of pods) {
    counts.total++;
    if (lifecycleState(pod) === LifecycleState.PreparingDelete) {
      counts.preDeleting++;
      continue;
    }
    counts.active++;
    if (isSpecifiedDelete(pod, cs.spec.scaleStrategy?.podsToDelete)) counts.toDelete++;
    else if (!isPodAvailable(pod, minReady, now)) counts.unavailable++;
  }
  return counts;
}

/** Whether the pod counts as updated: at the update revision (or PreparingUpdate, when so configured). */
export function isPodUpdated(pod: Pod, updateRevision: string, preparingUpdateAsUpdate = false): boolean {
  if (preparingUpdateAsUpdate && lifecycleState(pod) === LifecycleState.PreparingUpdate) return true;
  return hasRevision(pod, updateRevision);
}

/** Whether the CloneSet excludes PreparingDelete pods from the replica count. */
export function excludesPreparingDelete(cs: CloneSet, options: PlanOptions = {}): boolean {
  return (
    options.scalingExcludePreparingDelete === true ||
    cs.metadata?.labels?.[LABEL_CLONESET_SCALING_EXCLUDE_PREPARING_DELETE] === 'true'
  );
}

function opposite(a: number, b: number): boolean {
  return (a < 0 && b > 0) || (a > 0 && b < 0);
}

/** The strategy resolved and the pods counted by revision: what calculateDiffs works from. */
interface Counted {
  s: ResolvedStrategy;
  old: RevisionCounts;
  neu: RevisionCounts;
  /** The pods given (DiffInput.pods), both revisions. */
  pods: number;
  /** Pods preparing deletion or unavailable, both revisions. */
  unavailable: number;
}

/**
 * How far each revision's active pods are from what the partition asks: oldDiff > 0 old pods too
 * many (to update), newDiff < 0 new pods too few; the other signs only with partitionRollback.
 */
interface RevisionDiffs {
  oldDiff: number;
  newDiff: number;
}

type Surge = Pick<Diffs, 'useSurge' | 'useSurgeOldRevision'>;

function countByRevision(input: DiffInput, options: PlanOptions): Counted {
  const { cs, pods, now } = input;
  const asUpdated = input.forScale === true && options.preparingUpdateAsUpdate === true;
  const newPods = pods.filter((p) => isPodUpdated(p, input.updateRevision, asUpdated));
  const oldPods = pods.filter((p) => !isPodUpdated(p, input.updateRevision, asUpdated));
  const neu = countPods(newPods, cs, now);
  const old = countPods(oldPods, cs, now);
  const unavailable = old.preDeleting + neu.preDeleting + old.unavailable + neu.unavailable;
  return { s: resolveStrategy(cs), old, neu, pods: pods.length, unavailable };
}

function revisionDiffs(input: DiffInput, c: Counted, options: PlanOptions): RevisionDiffs {
  let oldDiff = c.old.active - c.s.partition;
  let newDiff = c.neu.active - (c.s.replicas - c.s.partition);
  // Forward only, unless partition rollback is enabled and there are two revisions to move between.
  if (input.updateRevision === input.currentRevision || !options.partitionRollback) {
    oldDiff = Math.max(oldDiff, 0);
    newDiff = Math.min(newDiff, 0);
  }
  return { oldDiff, newDiff };
}

/** How much surge to use, for specified deletes or for the update (never both at once). */
function surge({ s, old, neu, unavailable: totalUnavailable }: Counted, update: RevisionDiffs): Surge {
  if (s.maxSurge <= 0) return { useSurge: 0, useSurgeOldRevision: 0 };

  // Replace specified pods before deleting them when deleting would exceed maxUnavailable.
  let scaleSurge = 0;
  let scaleOldSurge = 0;
  const toDelete = old.toDelete + neu.toDelete;
  if (toDelete > 0) {
    scaleSurge = Math.min(Math.max(totalUnavailable + toDelete - s.maxUnavailable, 0), toDelete);
    if (scaleSurge > neu.toDelete) scaleOldSurge = scaleSurge - neu.toDelete;
  }

  // Surge new pods while old ones are still to be moved (the diffs point in opposite directions).
  let updateSurge = 0;
  let updateOldSurge = 0;
  if (opposite(update.oldDiff, update.newDiff)) {
    if (Math.abs(update.oldDiff) <= Math.abs(update.newDiff)) {
      updateSurge = Math.abs(update.oldDiff);
      if (update.oldDiff < 0) updateOldSurge = updateSurge;
    } else {
      updateSurge = Math.abs(update.newDiff);
      if (update.newDiff > 0) updateOldSurge = updateSurge;
    }
  }

  const [want, wantOld] = scaleSurge >= updateSurge ? [scaleSurge, scaleOldSurge] : [updateSurge, updateOldSurge];
  const useSurge = Math.min(s.maxSurge, want);
  return { useSurge, useSurgeOldRevision: Math.min(useSurge, wantOld) };
}

/**
 * Calculates scale and update numbers for a CloneSet (OpenKruise calculateDiffsWithExpectation).
 * `cs` must be defaulted.
 */
export function calculateDiffs(input: DiffInput): Diffs {
  const options = input.options ?? {};
  const counted = countByRevision(input, options);
  const move = revisionDiffs(input, counted, options);
  const surged = surge(counted, move);
  return {
    ...scaleDiffs(counted, surged, excludesPreparingDelete(input.cs, options)),
    ...surged,
    ...updateDiffs(counted, move),
  };
}

/** Pods to create and delete, and the limits on doing it now. */
function scaleDiffs(
  c: Counted,
  surged: Surge,
  excludePreparingDelete: boolean,
): Omit<Diffs, keyof Surge | 'updateNum' | 'updateMaxUnavailable'> {
  const { s, old, neu } = c;
  let currentTotal = c.pods;
  let currentOld = old.total;
  if (excludePreparingDelete) {
    currentTotal -= old.preDeleting + neu.preDeleting;
    currentOld -= old.preDeleting;
  }
  const expectedTotal = s.replicas + surged.useSurge;
  const expectedOld = s.partition + surged.useSurgeOldRevision;
  const diffs = {
    scaleUpNum: 0,
    scaleUpNumOldRevision: 0,
    scaleUpLimit: 0,
    scaleDownNum: 0,
    scaleDownNumOldRevision: 0,
    deleteReadyLimit: 0,
  };
  if (expectedTotal - currentTotal > 0) {
    diffs.scaleUpNum = expectedTotal - currentTotal;
    diffs.scaleUpNumOldRevision = Math.max(expectedOld - currentOld, 0);
    diffs.scaleUpLimit = Math.min(diffs.scaleUpNum, Math.max(s.scaleMaxUnavailable - c.unavailable, 0));
  }
  const down = currentTotal - old.toDelete - neu.toDelete - expectedTotal;
  if (down > 0) {
    diffs.scaleDownNum = down;
    diffs.scaleDownNumOldRevision = Math.max(currentOld - old.toDelete - expectedOld, 0);
  }
  if (neu.toDelete > 0 || old.toDelete > 0 || diffs.scaleDownNum > 0) {
    diffs.deleteReadyLimit = Math.max(s.maxUnavailable + (c.pods - s.replicas) - c.unavailable, 0);
  }
  return diffs;
}

/** Pods to move between revisions, and how many of the target revision may be unavailable meanwhile. */
function updateDiffs(c: Counted, move: RevisionDiffs): Pick<Diffs, 'updateNum' | 'updateMaxUnavailable'> {
  const updateNum = Math.abs(move.oldDiff) <= Math.abs(move.newDiff) ? move.oldDiff : -move.newDiff;
  if (updateNum === 0) return { updateNum: 0, updateMaxUnavailable: 0 }; // never -0
  return { updateNum, updateMaxUnavailable: c.s.maxUnavailable + c.pods - c.s.replicas };
}
