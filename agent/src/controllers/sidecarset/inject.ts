/**
 * SidecarSet injection into a pod being created, as OpenKruise's pod webhook does it, as a pure
 * function over a copy of the pod:
 *
 * 1. each SidecarSet's patchPodMetadata is applied;
 * 2. its init containers and containers are prepared for this pod (resources from a v1.9
 *    resourcesPolicy, shared mounts and volume devices, IS_INJECTED=true, transferred env), with
 *    the volumes their mounts and devices name;
 * 3. containers go before the app containers (BeforeAppContainer) or after them; one with the name
 *    of an existing pod container replaces it in place; init containers go after the pod's own by
 *    default; a HotUpgrade sidecar `X` goes in as the pair `X-1` (working) and `X-2` (empty
 *    image) with its version annotations (control/hot-upgrade.ts);
 *    order as OpenKruise v1.9: the init containers of all SidecarSets together are stable-sorted
 *    by name before they are placed; containers keep SidecarSet order (here: by SidecarSet name,
 *    OpenKruise: its informer's list order) unless `sortContainersByName` (the gate
 *    EnableSortSidecarContainerByName) stable-sorts them by name too;
 * 4. volumes and imagePullSecrets are merged (the pod's own win on a name clash);
 * 5. the hash, hash-without-image and injected-list annotations are written.
 *
 * Deterministic result for name clashes between SidecarSets (OpenKruise would produce a pod the
 * apiserver rejects): SidecarSets are applied in name order and the first to inject a container
 * name keeps it; the later SidecarSet's container of that name is left out and reported in
 * `conflicts` so the caller can record an event.
 */
import {
  ANNOTATION_SIDECARSET_HASH,
  ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
  ANNOTATION_SIDECARSET_INJECTED_LIST,
  type SidecarContainer,
  type SidecarSet,
} from '@flotilla/api';
import {
  formatInjectedList,
  injectedSidecarSets,
  readUpgradeSpecs,
  sidecarSetHashOf,
  sidecarSetHashWithoutImageOf,
  writeUpgradeSpecs,
} from './control/annotations.js';
import { sidecarForPod, toPodContainer } from './control/env-mounts.js';
import { policyResources } from './control/resources-policy.js';
import { hotUpgradeNames, hotUpgradePair, isHotUpgrade, workingContainers } from './control/hot-upgrade.js';
import { patchPodAnnotations } from './control/patch-metadata.js';
import type { Container, Volume } from '@flotilla/api';
import type { MutablePod } from '../../kube/types.js';

/** A container name two SidecarSets both wanted to inject. */
export interface InjectionConflict {
  container: string;
  /** The SidecarSet whose container was injected. */
  keptFrom: string;
  /** The SidecarSet whose container was left out. */
  skippedFrom: string;
}

export interface InjectionResult {
  /** The mutated copy of the pod. */
  pod: MutablePod;
  /** False when nothing was injected or patched. */
  changed: boolean;
  conflicts: InjectionConflict[];
}

/** A sidecar to inject, and where it goes among the pod's containers. */
type Placed = { c: SidecarContainer; policy: string };

interface Collected {
  containers: Placed[];
  initContainers: Placed[];
  volumes: Volume[];
  secrets: { name?: string }[];
}

/** An injection under way: the pod copy, what the SidecarSets bring, and the records to write. */
interface Injection {
  pod: MutablePod;
  annotations: Record<string, string>;
  collected: Collected;
  conflicts: InjectionConflict[];
  /** Container name → the SidecarSet that injected it. */
  owner: Map<string, string>;
  hashes: ReturnType<typeof readUpgradeSpecs>;
  hashesWithoutImage: ReturnType<typeof readUpgradeSpecs>;
  injectedNames: Set<string>;
  /** Hot-upgrade sidecar → its working container (control/hot-upgrade.ts). */
  working: ReturnType<typeof workingContainers>;
  /** Every container name the matched SidecarSets inject: never a resourcesPolicy target. */
  sidecarNames: Set<string>;
  sortContainersByName: boolean;
  now: string;
}

export interface InjectionOptions {
  /** OpenKruise's EnableSortSidecarContainerByName gate (alpha, off by default). */
  sortContainersByName?: boolean;
}

/** Where a sidecar goes: the list it joins, its default placement, and whether it is an init container. */
interface Slot {
  list: 'containers' | 'initContainers';
  policy: string;
  init: boolean;
}

const CONTAINER_SLOT: Slot = { list: 'containers', policy: 'BeforeAppContainer', init: false };
const INIT_CONTAINER_SLOT: Slot = { list: 'initContainers', policy: 'AfterAppContainer', init: true };

const nameOf = (ss: SidecarSet): string => ss.metadata?.name ?? '';
const compareNames = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Injects `sidecarSets` (already matched to the pod and resolved to the revision to inject) into
 * a copy of `pod`. `now` is the RFC 3339 time written into the hash records. Throws
 * SIDECARSET_ERR_RESOURCES_POLICY when a resourcesPolicy finds no target or fails to evaluate.
 */
export function injectSidecars(
  pod: MutablePod,
  sidecarSets: readonly SidecarSet[],
  now: string,
  options: InjectionOptions = {},
): InjectionResult {
  const out = structuredClone(pod);
  const ordered = [...sidecarSets].sort((a, b) => compareNames(nameOf(a), nameOf(b)));
  if (ordered.length === 0) return { pod: out, changed: false, conflicts: [] };
  const annotations = ((out.metadata ??= {}).annotations ??= {});
  let changed = false;
  for (const ss of ordered) changed = patchPodAnnotations(annotations, ss.spec.patchPodMetadata) || changed;

  const injection: Injection = {
    pod: out,
    annotations,
    collected: { containers: [], initContainers: [], volumes: [], secrets: [] },
    conflicts: [],
    owner: new Map(),
    hashes: readUpgradeSpecs(out, ANNOTATION_SIDECARSET_HASH),
    hashesWithoutImage: readUpgradeSpecs(out, ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE),
    injectedNames: injectedSidecarSets(out),
    working: workingContainers(out),
    sidecarNames: new Set(
      ordered.flatMap((ss) => [...(ss.spec.initContainers ?? []), ...(ss.spec.containers ?? [])].map((c) => c.name)),
    ),
    sortContainersByName: options.sortContainersByName ?? false,
    now,
  };
  for (const ss of ordered) collectSidecarSet(injection, ss);
  const { collected, conflicts } = injection;
  if (collected.containers.length === 0 && collected.initContainers.length === 0) {
    return { pod: out, changed, conflicts };
  }
  writeInjection(injection);
  return { pod: out, changed: true, conflicts };
}

/** Takes one SidecarSet's init containers (by name) and containers; records its hashes if any went in. */
function collectSidecarSet(injection: Injection, ss: SidecarSet): void {
  injection.injectedNames.add(nameOf(ss));
  const volumes = new Map((ss.spec.volumes ?? []).map((v) => [v.name, v]));
  let injecting = false;
  const sidecarList = new Set<string>();
  for (const init of [...(ss.spec.initContainers ?? [])].sort((a, b) => compareNames(a.name, b.name))) {
    if (init.restartPolicy === 'Always') sidecarList.add(init.name);
    injecting = takeSidecar(injection, { ss, volumes }, init, INIT_CONTAINER_SLOT) || injecting;
  }
  injection.collected.secrets.push(...(ss.spec.imagePullSecrets ?? []));
  for (const sidecar of ss.spec.containers ?? []) {
    sidecarList.add(sidecar.name);
    injecting = takeSidecar(injection, { ss, volumes }, sidecar, CONTAINER_SLOT) || injecting;
  }
  if (injecting) recordHashes(injection, ss, [...sidecarList].sort());
}

/**
 * Prepares one sidecar for the pod and collects it with the volumes its mounts name; false when
 * an earlier SidecarSet already injected a container of its name (a conflict).
 */
function takeSidecar(
  injection: Injection,
  from: { ss: SidecarSet; volumes: Map<string, Volume> },
  sidecar: SidecarContainer,
  slot: Slot,
): boolean {
  // Hot sidecars become two containers; native init sidecars only (OpenKruise's rule).
  const hot = isHotUpgrade(sidecar) && (!slot.init || sidecar.restartPolicy === 'Always');
  const names = hot ? hotUpgradeNames(sidecar.name) : [sidecar.name];
  const keptFrom = names.map((n) => injection.owner.get(n)).find((o) => o !== undefined);
  if (keptFrom !== undefined) {
    injection.conflicts.push({ container: sidecar.name, keptFrom, skippedFrom: nameOf(from.ss) });
    return false;
  }
  for (const n of names) injection.owner.set(n, nameOf(from.ss));
  for (const m of [...(sidecar.volumeMounts ?? []), ...((sidecar.volumeDevices ?? []) as { name: string }[])]) {
    const v = from.volumes.get(m.name);
    if (v) injection.collected.volumes.push(v);
  }
  const resources = policyResources(sidecar, injection.pod, injection.sidecarNames);
  const prepared = sidecarForPod(resources ? { ...sidecar, resources } : sidecar, injection.pod);
  const policy = sidecar.podInjectPolicy ?? slot.policy;
  const into = injection.collected[slot.list];
  if (!hot) {
    into.push({ c: prepared, policy });
    return true;
  }
  const pair = hotUpgradePair(prepared, injection.working);
  for (const c of pair.containers) into.push({ c, policy });
  Object.assign(injection.annotations, pair.annotations);
  return true;
}

/** The SidecarSet's records in the hash and hash-without-image annotations. */
function recordHashes(injection: Injection, ss: SidecarSet, sidecarList: string[]): void {
  injection.hashes.set(nameOf(ss), {
    updateTimestamp: injection.now,
    hash: sidecarSetHashOf(ss),
    sidecarSetName: nameOf(ss),
    sidecarList,
    ...(ss.status?.latestRevision ? { controllerRevision: ss.status.latestRevision } : {}),
  });
  injection.hashesWithoutImage.set(nameOf(ss), {
    updateTimestamp: injection.now,
    hash: sidecarSetHashWithoutImageOf(ss),
    sidecarSetName: nameOf(ss),
    sidecarList,
  });
}

/** Writes what was collected into the pod copy: containers, volumes, pull secrets, annotations. */
function writeInjection({ pod, collected, annotations, ...records }: Injection): void {
  const spec = (pod.spec ??= {});
  spec.initContainers = mergeContainers(spec.initContainers ?? [], byName(collected.initContainers));
  if (spec.initContainers.length === 0) delete spec.initContainers;
  const containers = records.sortContainersByName ? byName(collected.containers) : collected.containers;
  spec.containers = mergeContainers(spec.containers ?? [], containers);
  const volumes = mergeByName(spec.volumes ?? [], collected.volumes);
  if (volumes.length > 0) spec.volumes = volumes;
  const secrets = mergeByName(spec.imagePullSecrets ?? [], collected.secrets);
  if (secrets.length > 0) spec.imagePullSecrets = secrets;
  annotations[ANNOTATION_SIDECARSET_HASH] = writeUpgradeSpecs(records.hashes);
  annotations[ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE] = writeUpgradeSpecs(records.hashesWithoutImage);
  annotations[ANNOTATION_SIDECARSET_INJECTED_LIST] = formatInjectedList(records.injectedNames);
}

/** A stable sort by container name (Array.prototype.sort is stable). */
const byName = (placed: readonly Placed[]): Placed[] => [...placed].sort((a, b) => compareNames(a.c.name, b.c.name));

/** mergeSidecarContainers: same name replaces in place; the rest go before or after the pod's. */
function mergeContainers(origins: readonly Container[], injected: readonly Placed[]): Container[] {
  const index = new Map(origins.map((c, i) => [c.name, i]));
  const result = [...origins];
  const before: Container[] = [];
  const after: Container[] = [];
  for (const { c, policy } of injected) {
    const container = toPodContainer(c);
    const at = index.get(c.name);
    if (at !== undefined) result[at] = container;
    else if (policy === 'BeforeAppContainer') before.push(container);
    else after.push(container);
  }
  return [...before, ...result, ...after];
}

/** `original` plus the items of `additional` with new names (util.MergeVolumes, mergeSidecarSecrets). */
function mergeByName<T extends { name?: string }>(original: readonly T[], additional: readonly T[]): T[] {
  const out: T[] = [];
  const seen = new Set<string>();
  for (const item of [...original, ...additional]) {
    const name = item.name ?? '';
    if (seen.has(name)) continue;
    seen.add(name);
    out.push(item);
  }
  return out;
}
