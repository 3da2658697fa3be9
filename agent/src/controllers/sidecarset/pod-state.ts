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
import { hotUpgradeNames, idleContainers, isHotUpgrade, workingContainers } from './control/hot-upgrade.js';
import { isPodReady } from '../../kube/pods.js';
import type { Pod, PodCondition } from '../../kube/types.js';

/** Running and Ready (util.IsRunningAndReady). */
export function isRunningAndReady(pod: Pod): boolean {
  return pod.status?.phase === 'Running' && isPodReady(pod);
}

/** Names of the pod containers the SidecarSet owns (both containers of a hot-upgrade sidecar). */
export function sidecarNames(ss: SidecarSet): Set<string> {
  return new Set((ss.spec.containers ?? []).flatMap((c) => (isHotUpgrade(c) ? hotUpgradeNames(c.name) : [c.name])));
}

/**
 * Every container of the SidecarSet exists in the pod, and each hot-upgrade sidecar has both its
 * containers and a working-container record (IsPodConsistentWithSidecarSet).
 */
export function hasAllSidecars(pod: Pod, ss: SidecarSet): boolean {
  const names = new Set(pod.spec.containers.map((c) => c.name));
  // The working-container record is read only for hot-upgrade sidecars (it is JSON to parse).
  let working: Map<string, string> | undefined;
  return (ss.spec.containers ?? []).every((c) =>
    isHotUpgrade(c)
      ? (working ??= workingContainers(pod)).has(c.name) && hotUpgradeNames(c.name).every((n) => names.has(n))
      : names.has(c.name),
  );
}

/**
 * The sidecars (all of them, or only `only`) run what the spec says: a status per container, and
 * no sidecar whose image was changed in place still reports the image ID it had before
 * (IsPodStateConsistent).
 */
export function isPodStateConsistent(pod: Pod, ss: SidecarSet, only?: ReadonlySet<string>): boolean {
  const statuses = pod.status?.containerStatuses ?? [];
  if (statuses.length !== pod.spec.containers.length) return false;
  const sidecars = only && only.size > 0 ? only : sidecarNames(ss);
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

/**
 * Ready as the SidecarSet sees it (IsPodReady): running and Ready, and no hot upgrade half done
 * (every idle container of a hot sidecar is back on the empty image).
 */
export function isPodReadyForSidecarSet(pod: Pod, ss: SidecarSet): boolean {
  const image = new Map(pod.spec.containers.map((c) => [c.name, c.image]));
  for (const [name, empty] of idleContainers(ss, pod)) if (empty !== '' && image.get(name) !== empty) return false;
  return isRunningAndReady(pod);
}

/** Ready for the SidecarSet: consistent and ready. */
export function isSidecarReady(pod: Pod, ss: SidecarSet): boolean {
  return isPodStateConsistent(pod, ss) && isPodReadyForSidecarSet(pod, ss);
}

/**
 * Hot upgrade is done for everything but the idle containers: the pod is Running and every
 * container except the idle ones is ready (isHotUpgradingReady).
 */
export function isHotUpgradingReady(pod: Pod, ss: SidecarSet): boolean {
  if (isRunningAndReady(pod)) return true;
  const idle = idleContainers(ss, pod);
  return (pod.status?.containerStatuses ?? []).every((s) => idle.has(s.name) || s.ready === true);
}

/** The SidecarSet's containers in the pod without the idle containers of hot sidecars. */
export function workingSidecarNames(ss: SidecarSet, pod: Pod): Set<string> {
  const names = sidecarNames(ss);
  for (const idle of idleContainers(ss, pod).keys()) names.delete(idle);
  return names;
}

/** The container is ready and runs what its spec says. */
export function isContainerReadyAndConsistent(pod: Pod, ss: SidecarSet, container: string): boolean {
  const status = pod.status?.containerStatuses?.find((s) => s.name === container);
  return status?.ready === true && isPodStateConsistent(pod, ss, new Set([container]));
}

/**
 * Whether only images differ between the pod's sidecars and the SidecarSet (the pod's
 * without-image hash equals the SidecarSet's), and whether the pod is settled: no ready sidecar
 * still reports the image it ran before an earlier in-place update (IsSidecarSetUpgradable).
 */
export function upgradability(pod: Pod, ss: SidecarSet): { canUpgrade: boolean; consistent: boolean } {
  if (podSidecarSetHashWithoutImage(pod, ss.metadata?.name ?? '') !== sidecarSetHashWithoutImageOf(ss)) {
    return { canUpgrade: false, consistent: false };
  }
  const ready = new Map((pod.status?.containerStatuses ?? []).map((s) => [s.name, s.ready === true]));
  for (const name of sidecarNames(ss)) {
    if (ready.get(name) && !isPodStateConsistent(pod, ss, new Set([name])))
      return { canUpgrade: true, consistent: false };
  }
  return { canUpgrade: true, consistent: true };
}

/**
 * The SidecarSetUpgradable condition to write after SidecarSet `sidecarSet` found the pod
 * `upgradable` or not, or undefined when the pod already has it. Several SidecarSets share the one
 * condition, so, as OpenKruise does, its message holds each one's verdict as JSON
 * (`{"<sidecarSet>":true,...}`) and the status is True only while every one of them is: a pod
 * that one SidecarSet cannot upgrade stays False while another upgrades it.
 */
export function upgradableCondition(
  pod: Pod,
  sidecarSet: string,
  upgradable: boolean,
  now: string,
): PodCondition | undefined {
  const current = (pod.status?.conditions ?? []).find((c) => c.type === CONDITION_SIDECARSET_UPGRADABLE);
  const verdicts = { ...verdictsOf(current?.message), [sidecarSet]: upgradable };
  const all = Object.values(verdicts).every((v) => v !== false);
  const status = all ? 'True' : 'False';
  const reason = all ? 'AllSidecarsetUpgradable' : 'UpdateImmutableField';
  // Sorted keys, as Go marshals a map, so an unchanged verdict set writes nothing.
  const message = JSON.stringify(Object.fromEntries(Object.entries(verdicts).sort(([a], [b]) => (a < b ? -1 : 1))));
  if (current?.status === status && current.reason === reason && current.message === message) return undefined;
  return {
    type: CONDITION_SIDECARSET_UPGRADABLE,
    status,
    reason,
    message,
    lastTransitionTime: current?.status === status && current.lastTransitionTime ? current.lastTransitionTime : now,
  };
}

/** The per-SidecarSet verdicts kept in the condition's message; a message of another shape holds none. */
function verdictsOf(message: string | undefined): Record<string, unknown> {
  if (!message) return {};
  try {
    const parsed: unknown = JSON.parse(message);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}
