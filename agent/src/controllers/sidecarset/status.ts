/** SidecarSet status, computed fresh from the matched pods and written only when it changed. */
import type { SidecarSet, SidecarSetStatus } from '@flotilla/api';
import { isPodSidecarUpdated } from './control/annotations.js';
import { isSidecarReady } from './pod-state.js';
import type { Pod } from '../../kube/types.js';

export function calculateStatus(
  ss: SidecarSet,
  pods: readonly Pod[],
  latestRevision: string,
  collisionCount: number,
): SidecarSetStatus {
  let updatedPods = 0;
  let readyPods = 0;
  let updatedReadyPods = 0;
  for (const pod of pods) {
    const updated = isPodSidecarUpdated(ss, pod);
    if (updated) updatedPods++;
    if (isSidecarReady(pod, ss)) {
      readyPods++;
      if (updated) updatedReadyPods++;
    }
  }
  return {
    observedGeneration: ss.metadata?.generation ?? 0,
    matchedPods: pods.length,
    updatedPods,
    readyPods,
    updatedReadyPods,
    latestRevision,
    collisionCount,
  };
}

export function statusChanged(current: SidecarSetStatus | undefined, next: SidecarSetStatus): boolean {
  const c = current;
  return (
    !c ||
    (next.observedGeneration ?? 0) > (c.observedGeneration ?? 0) ||
    c.matchedPods !== next.matchedPods ||
    c.updatedPods !== next.updatedPods ||
    c.readyPods !== next.readyPods ||
    c.updatedReadyPods !== next.updatedReadyPods ||
    c.latestRevision !== next.latestRevision ||
    c.collisionCount !== next.collisionCount
  );
}
