/**
 * The status of an Advanced StatefulSet, pure (OpenKruise's computeReplicaStatus and
 * completeRollingUpdate): counts over the pods that exist and are not terminating, and the
 * current revision moving to the update revision once every wanted pod runs it and is ready.
 */
import type { StatefulSet, StatefulSetStatus } from '@flotilla/api';
import { formatTime } from '../../runtime/kube-time.js';
import { isPodReady } from '../../kube/pods.js';
import type { Pod } from '../../kube/types.js';
import { selectorString } from '../cloneset/status.js';
import { hasRevision } from '../cloneset/pods.js';
import { isAvailable, wantedOrdinals } from './plan.js';

export interface StatusInput {
  set: StatefulSet;
  pods: readonly Pod[];
  currentRevision: string;
  updateRevision: string;
  collisionCount: number;
  now: number;
}

/** The status the set should have now; conditions are kept as they are. */
export function computeStatus(input: StatusInput): StatefulSetStatus {
  const { set } = input;
  const minReady = set.spec.updateStrategy?.rollingUpdate?.minReadySeconds ?? 0;
  const live = input.pods.filter((p) => p.metadata.deletionTimestamp === undefined);
  const ready = (p: Pod): boolean => p.status?.phase === 'Running' && isPodReady(p);
  const updated = live.filter((p) => hasRevision(p, input.updateRevision));
  const status: StatefulSetStatus = {
    observedGeneration: set.metadata?.generation ?? 0,
    replicas: live.length,
    readyReplicas: live.filter(ready).length,
    availableReplicas: live.filter((p) => isAvailable(p, minReady, input.now)).length,
    currentReplicas: live.filter((p) => hasRevision(p, input.currentRevision)).length,
    updatedReplicas: updated.length,
    updatedReadyReplicas: updated.filter(ready).length,
    updatedAvailableReplicas: updated.filter((p) => isAvailable(p, minReady, input.now)).length,
    currentRevision: input.currentRevision,
    updateRevision: input.updateRevision,
    collisionCount: input.collisionCount,
    labelSelector: selectorString(set.spec.selector),
    ...(set.status?.conditions ? { conditions: set.status.conditions } : {}),
  };
  const wanted = wantedOrdinals(set).length;
  const rolledOut =
    set.spec.updateStrategy?.type === 'RollingUpdate' &&
    status.updatedReplicas === wanted &&
    status.updatedReadyReplicas === wanted &&
    status.replicas === wanted;
  if (rolledOut || input.currentRevision === input.updateRevision) {
    status.currentRevision = input.updateRevision;
    status.currentReplicas = status.updatedReplicas;
  }
  return status;
}

/**
 * The status with condition `type` True and `message` (SetStatefulsetCondition): a condition of
 * that type already True with the same reason is kept as it is. Like OpenKruise, the failure
 * conditions are set by type and never taken away.
 */
export function withCondition(
  status: StatefulSetStatus,
  type: string,
  message: string,
  now: number,
): StatefulSetStatus {
  const conditions = status.conditions ?? [];
  const current = conditions.find((c) => c.type === type);
  if (current?.status === 'True' && (current.reason ?? '') === '') return status;
  const next = { type, status: 'True', message, lastTransitionTime: formatTime(now) };
  return { ...status, conditions: [...conditions.filter((c) => c.type !== type), next] };
}
