/**
 * SidecarSet hot upgrade, as OpenKruise lays it out on the pod: a sidecar `X` with
 * `upgradeStrategy.upgradeType: HotUpgrade` runs as two containers `X-1` and `X-2`. One is
 * working, the other runs `hotUpgradeEmptyImage` (an idle placeholder). Which one works is
 * recorded in `kruise.io/sidecarset-working-hotupgrade-container` (`{"X":"X-1"}`), and each
 * container's version and the version of its partner are annotations the containers read through
 * the downward API (SIDECARSET_VERSION, SIDECARSET_VERSION_ALT):
 *
 * - on injection, `X-1` works (version 1, alt 0) and `X-2` idles (version 0, alt 1);
 * - an upgrade puts the new image into the idle container and makes it the working one (its
 *   version becomes the SidecarSet's resourceVersion, the old one's alt the same), so the new
 *   sidecar starts beside the old one and can take its state over;
 * - once the new container runs and is ready, the old one is flipped to the empty image
 *   (version 0): the swap is complete.
 *
 * Everything here is pure.
 */
import {
  ANNOTATION_PREFIX_SIDECARSET_VERSION,
  ANNOTATION_PREFIX_SIDECARSET_VERSION_ALT,
  ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER,
  ENV_SIDECARSET_VERSION,
  ENV_SIDECARSET_VERSION_ALT,
  quoteGoString,
  type SidecarContainer,
  type SidecarSet,
} from '@flotilla/api';
import type { KubeObject } from '../../../runtime/kube-object.js';
import type { Container, EnvVar } from '@flotilla/api';
import type { Pod } from '../../../kube/types.js';

/** True for a sidecar upgraded by swapping two containers. */
export function isHotUpgrade(sidecar: Pick<SidecarContainer, 'upgradeStrategy'>): boolean {
  return sidecar.upgradeStrategy?.upgradeType === 'HotUpgrade';
}

/** The two pod containers of hot-upgrade sidecar `name`: `name-1`, `name-2`. */
export function hotUpgradeNames(name: string): [string, string] {
  return [`${name}-1`, `${name}-2`];
}

export const versionAnnotation = (container: string): string => `${ANNOTATION_PREFIX_SIDECARSET_VERSION}${container}`;
export const versionAltAnnotation = (container: string): string =>
  `${ANNOTATION_PREFIX_SIDECARSET_VERSION_ALT}${container}`;

/** The working-container map of the pod (sidecar name → pod container name); empty when absent or unreadable. */
export function workingContainers(pod: KubeObject): Map<string, string> {
  const text = pod.metadata?.annotations?.[ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER];
  const out = new Map<string, string>();
  if (!text) return out;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return out;
    for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') out.set(k, v);
  } catch {
    // An unreadable annotation counts as absent, as OpenKruise treats it.
  }
  return out;
}

/** Go's json.Marshal of map[string]string: keys sorted. */
export function formatWorkingContainers(working: ReadonlyMap<string, string>): string {
  const entries = [...working.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${quoteGoString(k)}:${quoteGoString(v)}`).join(',')}}`;
}

/**
 * The working container of hot sidecar `name` and the other one (idle, or the old version while
 * an upgrade is in flight). Without a record, `-2` counts as working, as in OpenKruise.
 */
export function hotUpgradeContainers(name: string, pod: KubeObject): { working: string; other: string } {
  const [one, two] = hotUpgradeNames(name);
  return workingContainers(pod).get(name) === one ? { working: one, other: two } : { working: two, other: one };
}

/** The downward-API env vars a hot container reads its own and its partner's version from. */
function versionEnv(container: string): EnvVar[] {
  const ref = (key: string): EnvVar['valueFrom'] => ({ fieldRef: { fieldPath: `metadata.annotations['${key}']` } });
  return [
    { name: ENV_SIDECARSET_VERSION, valueFrom: ref(versionAnnotation(container)) },
    { name: ENV_SIDECARSET_VERSION_ALT, valueFrom: ref(versionAltAnnotation(container)) },
  ];
}

/**
 * The pair a hot sidecar is injected as (already prepared for the pod: env, mounts), and the
 * annotations injection writes: `-1` works with the sidecar's image, `-2` idles on the empty image.
 */
export function hotUpgradePair(
  sidecar: SidecarContainer,
  working: Map<string, string>,
): { containers: [SidecarContainer, SidecarContainer]; annotations: Record<string, string> } {
  const [one, two] = hotUpgradeNames(sidecar.name);
  const first = structuredClone(sidecar);
  const second = structuredClone(sidecar);
  first.name = one;
  second.name = two;
  second.image = sidecar.upgradeStrategy?.hotUpgradeEmptyImage ?? '';
  first.env = [...(first.env ?? []), ...versionEnv(one)];
  second.env = [...(second.env ?? []), ...versionEnv(two)];
  working.set(sidecar.name, one);
  return {
    containers: [first, second],
    annotations: {
      // "1": the first injected version; "0": the idle container.
      [versionAnnotation(one)]: '1',
      [versionAltAnnotation(one)]: '0',
      [versionAnnotation(two)]: '0',
      [versionAltAnnotation(two)]: '1',
      [ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER]: formatWorkingContainers(working),
    },
  };
}

const containerOf = (pod: Pod, name: string): Container | undefined => pod.spec.containers.find((c) => c.name === name);

/**
 * Which of the pair takes the new image (findContainerToHotUpgrade): the one on the empty image;
 * else the not-ready one when only one is ready; else the older (not working) one. `readyAndConsistent`
 * tells whether a container runs what its spec says and is ready.
 */
export function containerToHotUpgrade(
  sidecar: SidecarContainer,
  pod: Pod,
  readyAndConsistent: (container: string) => boolean,
): { upgrade: string; other: string } {
  const [one, two] = hotUpgradeNames(sidecar.name);
  const empty = sidecar.upgradeStrategy?.hotUpgradeEmptyImage;
  if (containerOf(pod, one)?.image === empty) return { upgrade: one, other: two };
  if (containerOf(pod, two)?.image === empty) return { upgrade: two, other: one };
  const oneReady = readyAndConsistent(one);
  const twoReady = readyAndConsistent(two);
  if (oneReady && !twoReady) return { upgrade: two, other: one };
  if (!oneReady && twoReady) return { upgrade: one, other: two };
  const { working, other } = hotUpgradeContainers(sidecar.name, pod);
  return { upgrade: other, other: working };
}

/**
 * Puts the SidecarSet's image into the right container of the pair, in place on `pod`, and makes
 * it the working one. Returns the changed container's name, or undefined when the image already runs.
 */
export function hotUpgradeSidecar(
  ss: SidecarSet,
  sidecar: SidecarContainer,
  pod: Pod,
  readyAndConsistent: (container: string) => boolean,
): string | undefined {
  const { upgrade, other } = containerToHotUpgrade(sidecar, pod, readyAndConsistent);
  const target = containerOf(pod, upgrade);
  if (!target || containerOf(pod, other)?.image === sidecar.image) return undefined;
  target.image = sidecar.image;
  const annotations = (pod.metadata.annotations ??= {});
  const working = workingContainers(pod);
  working.set(sidecar.name, upgrade);
  annotations[ANNOTATION_SIDECARSET_WORKING_HOTUPGRADE_CONTAINER] = formatWorkingContainers(working);
  const version = ss.metadata?.resourceVersion ?? '';
  annotations[versionAltAnnotation(upgrade)] = annotations[versionAnnotation(other)] ?? '';
  annotations[versionAnnotation(upgrade)] = version;
  annotations[versionAltAnnotation(other)] = version;
  return upgrade;
}

/** The idle container of each hot sidecar of `ss` in this pod, with the image it should run. */
export function idleContainers(ss: SidecarSet, pod: KubeObject): Map<string, string> {
  const out = new Map<string, string>();
  for (const sidecar of ss.spec.containers ?? []) {
    if (!isHotUpgrade(sidecar)) continue;
    out.set(hotUpgradeContainers(sidecar.name, pod).other, sidecar.upgradeStrategy?.hotUpgradeEmptyImage ?? '');
  }
  return out;
}

/** True when some hot sidecar's idle container does not run the empty image: a swap is in flight. */
export function isInHotUpgrade(ss: SidecarSet, pod: Pod): boolean {
  for (const [name, empty] of idleContainers(ss, pod)) if (containerOf(pod, name)?.image !== empty) return true;
  return false;
}

/**
 * Completes the swaps in flight, in place on `pod`: every idle container that still runs an old
 * image is set to the empty image and its version annotations to 0. Returns the changed containers.
 */
export function resetIdleContainers(ss: SidecarSet, pod: Pod): string[] {
  const changed: string[] = [];
  const annotations = (pod.metadata.annotations ??= {});
  for (const sidecar of ss.spec.containers ?? []) {
    if (!isHotUpgrade(sidecar)) continue;
    const { working, other } = hotUpgradeContainers(sidecar.name, pod);
    const idle = containerOf(pod, other);
    const empty = sidecar.upgradeStrategy?.hotUpgradeEmptyImage ?? '';
    if (!idle || idle.image === empty) continue;
    idle.image = empty;
    changed.push(other);
    annotations[versionAnnotation(other)] = '0';
    annotations[versionAltAnnotation(working)] = '0';
  }
  return changed;
}
