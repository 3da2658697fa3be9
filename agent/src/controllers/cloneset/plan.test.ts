import { describe, expect, it } from 'vitest';
import { LifecycleState } from '@flotilla/api';
import { calculateDiffs, type Diffs } from './plan.js';
import { cloneSet, NOW, pod } from './testing/fixtures.js';
import type { Pod } from '../../kube/types.js';

interface Setup {
  replicas: number;
  partition: number | string;
  maxUnavailable: number | string;
  maxSurge: number | string;
  scaleMaxUnavailable?: number | string;
  paused?: boolean;
  /** The CloneSet label apps.kruise.io/cloneset-scaling-exclude-preparing-delete=true. */
  excludePreparingDelete?: boolean;
  /** currentRevision == updateRevision. */
  consistent?: boolean;
  /** Without the CloneSetPartitionRollback gate (the cases otherwise run with it, as OpenKruise's do). */
  noRollback?: boolean;
  /** Scale-time counting with PreparingUpdateAsUpdate. */
  preparingUpdateAsUpdate?: boolean;
}

const STATES: Record<string, string> = {
  N: LifecycleState.Normal,
  D: LifecycleState.PreparingDelete,
  U: LifecycleState.Updating,
  P: LifecycleState.PreparingUpdate,
};

/**
 * Pods written as tokens `<rev><state><ready><delete>`: rev n(ew)/o(ld), state N/D/U/P, ready r
 * or -, an optional x for specified-delete; `3*oNr` repeats a token.
 */
function pods(spec: string): Pod[] {
  return spec
    .split(' ')
    .filter(Boolean)
    .flatMap((token) => {
      const [, times, rev, state, ready, del] = /^(?:(\d+)\*)?([no])([NDUP])([r-])(x?)$/.exec(token)!;
      return Array.from({ length: Number(times ?? 1) }, () =>
        pod({
          revision: rev === 'n' ? 'new_rev' : 'old_rev',
          state: STATES[state!],
          ready: ready === 'r',
          specifiedDelete: del === 'x',
        }),
      );
    });
}

const EMPTY: Diffs = {
  scaleUpNum: 0,
  scaleUpNumOldRevision: 0,
  scaleUpLimit: 0,
  scaleDownNum: 0,
  scaleDownNumOldRevision: 0,
  deleteReadyLimit: 0,
  useSurge: 0,
  useSurgeOldRevision: 0,
  updateNum: 0,
  updateMaxUnavailable: 0,
};

// Step-named cases, the scenarios of OpenKruise's TestCalculateDiffsWithExpectation.
const CASES: [string, Setup, string, Partial<Diffs>][] = [
  ['an empty cloneset', { replicas: 0, partition: 0, maxUnavailable: 1, maxSurge: 0 }, '', {}],
  [
    'increase replicas to 5 (step 1/2)',
    { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    '',
    { scaleUpNum: 5, scaleUpLimit: 5 },
  ],
  ['increase replicas to 5 (step 2/2)', { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 }, '5*nNr', {}],
  [
    'specified delete 1 pod (all ready) (step 1/3)',
    { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    'nNrx 4*nNr',
    { deleteReadyLimit: 1 },
  ],
  [
    'specified delete 1 pod (all ready) (step 2/3)',
    { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    '4*nNr',
    { scaleUpNum: 1, scaleUpLimit: 1 },
  ],
  [
    'specified delete 1 pod (all ready) (step 3/3)',
    { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    '5*nNr',
    {},
  ],
  [
    'specified delete 2 pod (all ready) (step 1/6)',
    { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    '2*nNrx 3*nNr',
    { deleteReadyLimit: 1 },
  ],
  [
    'specified delete 2 pod (all ready) (step 2/6)',
    { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    'nNrx 3*nNr',
    { scaleUpNum: 1, scaleUpLimit: 1 },
  ],
  [
    'specified delete 2 pod (all ready) (step 3/6)',
    { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    'nNrx 3*nNr nN-',
    {},
  ],
  [
    'specified delete 2 pod (all ready) (step 4/6)',
    { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    'nNrx 4*nNr',
    { deleteReadyLimit: 1 },
  ],
  [
    'specified delete 2 pod (all ready) (step 5/6)',
    { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    '4*nNr',
    { scaleUpNum: 1, scaleUpLimit: 1 },
  ],
  [
    'specified delete 2 pod (all ready) (step 6/6)',
    { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    '5*nNr',
    {},
  ],
  [
    'specified delete 2 pod and replicas to 4 (step 1/3)',
    { replicas: 4, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    '2*nN-x 3*nNr',
    { deleteReadyLimit: 2 },
  ],
  [
    'specified delete 2 pod and replicas to 4 (step 2/3)',
    { replicas: 4, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    '3*nNr',
    { scaleUpNum: 1, scaleUpLimit: 1 },
  ],
  [
    'specified delete 2 pod and replicas to 4 (step 3/3)',
    { replicas: 4, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    '4*nNr',
    {},
  ],
  [
    'update partition=3 (step 1/3)',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 0 },
    '5*oNr',
    { updateNum: 2, updateMaxUnavailable: 1 },
  ],
  [
    'update partition=3 (step 2/3)',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 0 },
    'nNr 4*oNr',
    { updateNum: 1, updateMaxUnavailable: 1 },
  ],
  ['update partition=3 (step 3/3)', { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 0 }, '2*nNr 3*oNr', {}],
  [
    'rollback partition=4 (step 1/3)',
    { replicas: 5, partition: 4, maxUnavailable: 2, maxSurge: 0 },
    '4*nNr oNr',
    { updateNum: -3, updateMaxUnavailable: 2 },
  ],
  [
    'rollback partition=4 (step 2/3)',
    { replicas: 5, partition: 4, maxUnavailable: 2, maxSurge: 0 },
    '2*nNr 3*oNr',
    { updateNum: -1, updateMaxUnavailable: 2 },
  ],
  ['rollback partition=4 (step 3/3)', { replicas: 5, partition: 4, maxUnavailable: 2, maxSurge: 0 }, 'nNr 4*oNr', {}],
  [
    'specified delete with maxSurge (step 1/4)',
    { replicas: 5, partition: 0, maxUnavailable: 0, maxSurge: 1 },
    'nNrx 4*nNr',
    { scaleUpNum: 1, useSurge: 1, scaleUpLimit: 1 },
  ],
  [
    'specified delete with maxSurge (step 2/4)',
    { replicas: 5, partition: 0, maxUnavailable: 0, maxSurge: 1 },
    'nNrx 4*nNr nN-',
    { useSurge: 1 },
  ],
  [
    'specified delete with maxSurge (step 3/4)',
    { replicas: 5, partition: 0, maxUnavailable: 0, maxSurge: 1 },
    'nNrx 5*nNr',
    { deleteReadyLimit: 1, useSurge: 1 },
  ],
  [
    'specified delete with maxSurge (step 4/4)',
    { replicas: 5, partition: 0, maxUnavailable: 0, maxSurge: 1 },
    '5*nNr',
    {},
  ],
  [
    'update in-place partition=3 with maxSurge (step 1/4)',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    '5*oNr',
    { scaleUpNum: 1, useSurge: 1, updateNum: 2, updateMaxUnavailable: 1, scaleUpLimit: 1 },
  ],
  [
    'update in-place partition=3 with maxSurge (step 2/4)',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    '5*oNr nN-',
    { useSurge: 1, updateNum: 1, updateMaxUnavailable: 2 },
  ],
  [
    'update in-place partition=3 with maxSurge (step 3/4)',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    '4*oNr nU- nN-',
    { scaleDownNum: 1, scaleDownNumOldRevision: 1 },
  ],
  [
    'update in-place partition=3 with maxSurge (step 4/4)',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    '4*oNr nNr nN-',
    { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 1 },
  ],
  [
    'update recreate partition=3 with maxSurge (step 1/7)',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    '5*oNr',
    { scaleUpNum: 1, useSurge: 1, updateNum: 2, updateMaxUnavailable: 1, scaleUpLimit: 1 },
  ],
  [
    'update recreate partition=3 with maxSurge (step 2/7)',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    '5*oNr nN-',
    { useSurge: 1, updateNum: 1, updateMaxUnavailable: 2 },
  ],
  [
    'update recreate partition=3 with maxSurge (step 3/7)',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    '4*oNr oNrx nN-',
    { useSurge: 1, useSurgeOldRevision: 1, deleteReadyLimit: 1, updateNum: 1, updateMaxUnavailable: 2 },
  ],
  [
    'update recreate partition=3 with maxSurge (step 4/7)',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    '4*oNr nN-',
    { useSurge: 1, scaleUpNum: 1, updateNum: 1, updateMaxUnavailable: 1, scaleUpLimit: 1 },
  ],
  [
    'update recreate partition=3 with maxSurge (step 5/7)',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    '4*oNr 2*nN-',
    { scaleDownNum: 1, scaleDownNumOldRevision: 1 },
  ],
  [
    'update recreate partition=3 with maxSurge (step 6/7)',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    '4*oNr nNr nN-',
    { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 1 },
  ],
  [
    'update recreate partition=3 with maxSurge (step 7/7)',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 1 },
    '3*oNr 2*nNr',
    {},
  ],
  [
    'update recreate partition=99% with maxUnavailable=3, maxSurge=2 (step 1/3)',
    { replicas: 5, partition: '99%', maxUnavailable: 3, maxSurge: 2 },
    '5*oNr',
    { scaleUpNum: 1, useSurge: 1, updateNum: 1, updateMaxUnavailable: 3, scaleUpLimit: 1 },
  ],
  [
    'update recreate partition=99% with maxUnavailable=3, maxSurge=2 (step 2/3)',
    { replicas: 5, partition: '99%', maxUnavailable: 3, maxSurge: 2 },
    '5*oNr nN-',
    { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 3 },
  ],
  [
    'update recreate partition=99% with maxUnavailable=3, maxSurge=2 (step 3/3)',
    { replicas: 5, partition: '99%', maxUnavailable: 3, maxSurge: 2 },
    '4*oNr nN-',
    {},
  ],
  [
    'update recreate partition=99% with maxUnavailable=40%, maxSurge=30% (step 1/3)',
    { replicas: 5, partition: '99%', maxUnavailable: '40%', maxSurge: '30%' },
    '5*oNr',
    { scaleUpNum: 1, useSurge: 1, updateNum: 1, updateMaxUnavailable: 2, scaleUpLimit: 1 },
  ],
  [
    'update recreate partition=99% with maxUnavailable=40%, maxSurge=30% (step 2/3)',
    { replicas: 5, partition: '99%', maxUnavailable: '40%', maxSurge: '30%' },
    '5*oNr nN-',
    { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 2 },
  ],
  [
    'update recreate partition=99% with maxUnavailable=40%, maxSurge=30% (step 3/3)',
    { replicas: 5, partition: '99%', maxUnavailable: '40%', maxSurge: '30%' },
    '4*oNr nN-',
    {},
  ],
  [
    'update recreate partition=99% with maxUnavailable=30%, maxSurge=30% (step 1/3)',
    { replicas: 5, partition: '99%', maxUnavailable: '30%', maxSurge: '30%' },
    '5*oNr',
    { scaleUpNum: 1, useSurge: 1, updateNum: 1, updateMaxUnavailable: 1, scaleUpLimit: 1 },
  ],
  [
    'update recreate partition=99% with maxUnavailable=30%, maxSurge=30% (step 2/3)',
    { replicas: 5, partition: '99%', maxUnavailable: '30%', maxSurge: '30%' },
    '5*oNr nN-',
    { scaleDownNum: 1, scaleDownNumOldRevision: 1, deleteReadyLimit: 1 },
  ],
  [
    'update recreate partition=99% with maxUnavailable=30%, maxSurge=30% (step 3/3)',
    { replicas: 5, partition: '99%', maxUnavailable: '30%', maxSurge: '30%' },
    '4*oNr nN-',
    {},
  ],
  [
    'revision consistent 1',
    { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0, consistent: true },
    '5*nNr',
    {},
  ],
  [
    'revision consistent 2',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 0, consistent: true },
    '5*nNr',
    {},
  ],
  [
    'revision consistent 3',
    { replicas: 5, partition: 3, maxUnavailable: 1, maxSurge: 0, consistent: true },
    '2*oNr 3*nNr',
    {},
  ],
  [
    'revision consistent 4',
    { replicas: 5, partition: 1, maxUnavailable: 1, maxSurge: 0, consistent: true },
    '3*oNr 2*nNr',
    { updateNum: 2, updateMaxUnavailable: 1 },
  ],
  [
    'allow to update when fail to scale out normally',
    { replicas: 5, partition: 1, maxUnavailable: 2, maxSurge: 0, consistent: true },
    '2*oNr 2*nNr',
    { scaleUpNum: 1, updateNum: 1, updateMaxUnavailable: 1, scaleUpLimit: 1 },
  ],
  [
    'allow to update when fail to scale in normally',
    { replicas: 5, partition: 1, maxUnavailable: 1, maxSurge: 0, consistent: true },
    '3*oNr 3*nNr',
    { scaleDownNum: 1, scaleDownNumOldRevision: 2, deleteReadyLimit: 2, updateNum: 1, updateMaxUnavailable: 2 },
  ],
  [
    'disable rollback feature-gate',
    { replicas: 5, partition: 4, maxUnavailable: 1, maxSurge: 0, noRollback: true },
    'oNr 4*nNr',
    {},
  ],
  [
    'increase replicas 0 to 5 with scale maxUnavailable = 2',
    { replicas: 5, partition: 0, maxUnavailable: 1, maxSurge: 0, scaleMaxUnavailable: 2 },
    '',
    { scaleUpNum: 5, scaleUpLimit: 2 },
  ],
  [
    'increase replicas 3 to 6 with scale maxUnavailable = 2, not ready pod = 1',
    { replicas: 6, partition: 0, maxUnavailable: 1, maxSurge: 0, scaleMaxUnavailable: 2 },
    '2*nNr nN-',
    { scaleUpNum: 3, scaleUpLimit: 1 },
  ],
  [
    'increase replicas 3 to 6 with scale maxUnavailable = 2, not ready pod = 2',
    { replicas: 6, partition: 0, maxUnavailable: 1, maxSurge: 0, scaleMaxUnavailable: 2 },
    'nNr 2*nN-',
    { scaleUpNum: 3 },
  ],
  [
    '[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 1/4)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    '2*nNr nNrx',
    { deleteReadyLimit: 1 },
  ],
  [
    '[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 2/4)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    '2*nNr nDrx',
    {},
  ],
  [
    '[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 3/4)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    '2*nNr',
    { scaleUpNum: 1, scaleUpLimit: 1 },
  ],
  [
    '[scalingExcludePreparingDelete=false] specific delete a pod with lifecycle hook (step 4/4)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0 },
    '2*nNr nN-',
    {},
  ],
  [
    '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 1/4)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '2*nNr nNrx',
    { deleteReadyLimit: 1 },
  ],
  [
    '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 2/4)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '2*nNr nDrx',
    { scaleUpNum: 1, scaleUpLimit: 1 },
  ],
  [
    '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 3/4)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '2*nNr nDrx nN-',
    {},
  ],
  [
    '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook (step 4/4)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '2*nNr nDrx nN-',
    {},
  ],
  [
    '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 1/5)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '2*nNr nNrx',
    { deleteReadyLimit: 1 },
  ],
  [
    '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 2/5)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '2*nNr nDrx',
    { scaleUpNum: 1, scaleUpLimit: 1 },
  ],
  [
    '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 3/5)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '2*nNr nDrx nN-',
    {},
  ],
  [
    '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 4/5)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '3*nNr nN-',
    { scaleDownNum: 1, deleteReadyLimit: 1 },
  ],
  [
    '[scalingExcludePreparingDelete=true] specific delete a pod with lifecycle hook and then cancel (step 5/5)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '3*nNr',
    {},
  ],
  [
    '[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 1/6)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '3*nNr',
    {},
  ],
  [
    '[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 2/6)',
    { replicas: 2, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '2*nNr nNrx',
    { deleteReadyLimit: 2 },
  ],
  [
    '[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 3/6)',
    { replicas: 2, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '2*nNr nDrx',
    {},
  ],
  [
    '[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 4/6)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '2*nNr nDrx',
    { scaleUpNum: 1, scaleUpLimit: 1 },
  ],
  [
    '[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 5/6)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '2*nNr nDrx nN-',
    {},
  ],
  [
    '[scalingExcludePreparingDelete=true] specific scale down with lifecycle hook, then scale up pods (step 6/6)',
    { replicas: 3, partition: 0, maxUnavailable: 1, maxSurge: 0, excludePreparingDelete: true },
    '2*nNr nN-',
    {},
  ],
  [
    '[scalingWithPreparingUpdate=true] scaling up when a preparing pod is not updated, and expected-updated is 1',
    {
      replicas: 4,
      partition: '90%',
      maxUnavailable: 1,
      maxSurge: 0,
      excludePreparingDelete: true,
      preparingUpdateAsUpdate: true,
    },
    'oPr 2*oNr',
    { scaleUpNum: 1, scaleUpLimit: 1, scaleUpNumOldRevision: 1 },
  ],
  [
    '[scalingWithPreparingUpdate=true] scaling up when a preparing pod is not updated, and expected-updated is 2',
    {
      replicas: 4,
      partition: 2,
      maxUnavailable: 1,
      maxSurge: 0,
      excludePreparingDelete: true,
      preparingUpdateAsUpdate: true,
    },
    'oPr 2*oNr',
    { scaleUpNum: 1, scaleUpLimit: 1 },
  ],
  [
    '[UpdateStrategyPaused=true] scale up pods with maxSurge=3,maxUnavailable=0',
    { replicas: 5, partition: 0, maxUnavailable: 0, maxSurge: 3, paused: true },
    '3*oNr',
    { scaleUpNum: 2, scaleUpLimit: 2, updateNum: 3, updateMaxUnavailable: -2 },
  ],
  [
    '[UpdateStrategyPaused=true] scale down pods with maxSurge=3,maxUnavailable=0',
    { replicas: 3, partition: 0, maxUnavailable: 0, maxSurge: 3, paused: true },
    '5*oNr',
    { scaleDownNum: 2, scaleDownNumOldRevision: 5, deleteReadyLimit: 2, updateNum: 3, updateMaxUnavailable: 2 },
  ],
  [
    '[UpdateStrategyPaused=true] create 0 newRevision pods with maxSurge=3,maxUnavailable=0',
    { replicas: 5, partition: 0, maxUnavailable: 0, maxSurge: 3, paused: true },
    '5*oNr 3*nN-',
    { scaleDownNum: 3, scaleDownNumOldRevision: 5, updateNum: 2, updateMaxUnavailable: 3 },
  ],
  [
    '[UpdateStrategyPaused=true] create 0 newRevision pods with maxSurge=3,maxUnavailable=0',
    { replicas: 5, partition: 2, maxUnavailable: 0, maxSurge: 3, paused: true },
    '5*oNr 3*nN-',
    { scaleDownNum: 3, scaleDownNumOldRevision: 3 },
  ],
];

describe('calculateDiffs', () => {
  it.each(CASES)('%s', (_name, setup, podSpec, expected) => {
    const cs = cloneSet(
      {
        replicas: setup.replicas,
        updateStrategy: {
          partition: setup.partition,
          maxUnavailable: setup.maxUnavailable,
          maxSurge: setup.maxSurge,
          ...(setup.paused ? { paused: true } : {}),
        },
        ...(setup.scaleMaxUnavailable === undefined
          ? {}
          : { scaleStrategy: { maxUnavailable: setup.scaleMaxUnavailable } }),
      },
      setup.excludePreparingDelete ? { 'apps.kruise.io/cloneset-scaling-exclude-preparing-delete': 'true' } : undefined,
    );
    const diffs = calculateDiffs({
      cs,
      pods: pods(podSpec),
      currentRevision: setup.consistent ? 'new_rev' : 'old_rev',
      updateRevision: 'new_rev',
      now: NOW,
      forScale: setup.preparingUpdateAsUpdate,
      options: { partitionRollback: !setup.noRollback, preparingUpdateAsUpdate: setup.preparingUpdateAsUpdate },
    });
    expect(diffs).toEqual({ ...EMPTY, ...expected });
  });

  it('counts unavailable pods with minReadySeconds: a pod ready for less than that is unavailable', () => {
    const cs = cloneSet({ replicas: 3, minReadySeconds: 30, scaleStrategy: { maxUnavailable: 1 } });
    const diffs = calculateDiffs({
      cs,
      pods: [pod({ revision: 'r' }), pod({ revision: 'r', readySince: 10 })],
      currentRevision: 'r',
      updateRevision: 'r',
      now: NOW,
    });
    // One pod is short of its 30 s, so scaleStrategy.maxUnavailable=1 leaves no room to create.
    expect(diffs).toMatchObject({ scaleUpNum: 1, scaleUpLimit: 0 });
  });

  it('never returns -0 for updateNum', () => {
    const cs = cloneSet({ replicas: 2 });
    const diffs = calculateDiffs({
      cs,
      pods: pods('2*nNr'),
      currentRevision: 'old_rev',
      updateRevision: 'new_rev',
      now: NOW,
    });
    expect(Object.is(diffs.updateNum, 0)).toBe(true);
  });
});
