/**
 * Facts about a pod the SidecarSet controller decides on: readiness, whether its sidecar
 * containers run what their spec says (consistency after an in-place update), and the
 * SidecarSetUpgradable condition.
 */
import {
  ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE,
  CONDITION_SIDECARSET_UPGRADABLE,
  type SidecarSet,
} from '@flotilla/api';
import { podSidecarSetHashWithoutImage, sidecarSetHashWithoutImageOf } from './control/annotations.js';
import type { Pod, PodCondition } from './types.js';

export function isActivePod(pod: Pod): boolean {
  return !pod.metadata.deletionTimestamp && pod.status?.phase !== 'Succeeded' && pod.status?.phase !== 'Failed';
}

/** Running and Ready (util.IsRunningAndReady). */
export function isRunningAndReady(pod: Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

/** Names of the pod containers the SidecarSet owns. */
export function sidecarNames(ss: SidecarSet): Set<string> {
  return new Set((ss.spec.containers ?? []).map((c) => c.name));
}

/** Every container of the SidecarSet exists in the pod (IsPodConsistentWithSidecarSet). */
export function hasAllSidecars(pod: Pod, ss: SidecarSet): boolean {
  const names = new Set(pod.spec.containers.map((c) => c.name));
  return (ss.spec.containers ?? []).every((c) => names.has(c.name));
}

/**
 * The sidecars run what the spec says: a status per container, and no sidecar whose image was
 * changed in place still reports the image ID it had before (IsPodStateConsistent).
 */
export function isPodStateConsistent(pod: Pod, ss: SidecarSet): boolean {
  const statuses = pod.status?.containerStatuses ?? [];
  if (statuses.length !== pod.spec.containers.length) return false;
  const sidecars = sidecarNames(ss);
  let before: Record<string, { lastContainerStatuses?: Record<string, { imageID?: string }> }> = {};
  try {
    before = JSON.parse(
      pod.metadata.annotations?.[ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE] ?? '{}',
    ) as typeof before;
  } catch {
    return false;
  }
  const last = before[ss.metadata?.name ?? '']?.lastContainerStatuses ?? {};
  const specImage = new Map(pod.spec.containers.map((c) => [c.name, c.image]));
  return statuses
    .filter((s) => sidecars.has(s.name))
    .every((s) => !(last[s.name] && last[s.name]!.imageID === s.imageID && specImage.get(s.name) !== s.image));
}

/** Ready for the SidecarSet: consistent and running-and-ready. */
export function isSidecarReady(pod: Pod, ss: SidecarSet): boolean {
  return isPodStateConsistent(pod, ss) && isRunningAndReady(pod);
}

/**
 * Whether only images differ between the pod's sidecars and the SidecarSet (the pod's
 * without-image hash equals the SidecarSet's), and whether running sidecars are consistent.
 */
export function upgradability(pod: Pod, ss: SidecarSet): { canUpgrade: boolean; consistent: boolean } {
  if (podSidecarSetHashWithoutImage(pod, ss.metadata?.name ?? '') !== sidecarSetHashWithoutImageOf(ss)) {
    return { canUpgrade: false, consistent: false };
  }
  return { canUpgrade: true, consistent: isPodStateConsistent(pod, ss) };
}

/** The SidecarSetUpgradable condition to write, or undefined when the pod already has it. */
export function upgradableCondition(pod: Pod, upgradable: boolean, now: string): PodCondition | undefined {
  const status = upgradable ? 'True' : 'False';
  const current = (pod.status?.conditions ?? []).find((c) => c.type === CONDITION_SIDECARSET_UPGRADABLE);
  if (current?.status === status) return undefined;
  return {
    type: CONDITION_SIDECARSET_UPGRADABLE,
    status,
    lastTransitionTime: now,
    ...(upgradable
      ? {}
      : {
          reason: 'UpdateImmutableField',
          message: "Pod's sidecar set is not upgradable due to changes out of image field",
        }),
  };
}
