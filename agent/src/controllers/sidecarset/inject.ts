/**
 * SidecarSet injection into a pod being created, as OpenKruise's pod webhook does it, as a pure
 * function over a copy of the pod:
 *
 * 1. each SidecarSet's patchPodMetadata is applied;
 * 2. its init containers (sorted by name) and containers are prepared for this pod (shared
 *    mounts, IS_INJECTED=true, transferred env), with the volumes their mounts name;
 * 3. containers go before the app containers (BeforeAppContainer) or after them; one with the name
 *    of an existing pod container replaces it in place; init containers go after the pod's own by
 *    default; a HotUpgrade sidecar `X` goes in as the pair `X-1` (working) and `X-2` (empty
 *    image) with its version annotations (control/hot-upgrade.ts);
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

interface Collected {
  containers: { c: SidecarContainer; policy: string }[];
  initContainers: { c: SidecarContainer; policy: string }[];
  volumes: Volume[];
  secrets: { name?: string }[];
}

const nameOf = (ss: SidecarSet): string => ss.metadata?.name ?? '';

/**
 * Injects `sidecarSets` (already matched to the pod and resolved to the revision to inject) into
 * a copy of `pod`. `now` is the RFC 3339 time written into the hash records.
 */
export function injectSidecars(pod: MutablePod, sidecarSets: readonly SidecarSet[], now: string): InjectionResult {
  const out = structuredClone(pod);
  const ordered = [...sidecarSets].sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0));
  if (ordered.length === 0) return { pod: out, changed: false, conflicts: [] };
  const metadata = (out.metadata ??= {});
  const annotations = (metadata.annotations ??= {});
  let changed = false;
  for (const ss of ordered) changed = patchPodAnnotations(annotations, ss.spec.patchPodMetadata) || changed;

  const collected: Collected = { containers: [], initContainers: [], volumes: [], secrets: [] };
  const conflicts: InjectionConflict[] = [];
  const owner = new Map<string, string>();
  const hashes = readUpgradeSpecs(out, ANNOTATION_SIDECARSET_HASH);
  const hashesWithoutImage = readUpgradeSpecs(out, ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE);
  const injectedNames = injectedSidecarSets(out);
  const working = workingContainers(out);
  /** Hot sidecars become two containers; native init sidecars only (OpenKruise's rule). */
  const isHot = (sidecar: SidecarContainer, init: boolean): boolean =>
    isHotUpgrade(sidecar) && (!init || sidecar.restartPolicy === 'Always');
  for (const ss of ordered) {
    injectedNames.add(nameOf(ss));
    const volumes = new Map((ss.spec.volumes ?? []).map((v) => [v.name, v]));
    const take = (sidecar: SidecarContainer, policy: string, into: Collected['containers'], init = false): boolean => {
      const hot = isHot(sidecar, init);
      const names = hot ? hotUpgradeNames(sidecar.name) : [sidecar.name];
      const keptFrom = names.map((n) => owner.get(n)).find((o) => o !== undefined);
      if (keptFrom !== undefined) {
        conflicts.push({ container: sidecar.name, keptFrom, skippedFrom: nameOf(ss) });
        return false;
      }
      for (const n of names) owner.set(n, nameOf(ss));
      for (const m of sidecar.volumeMounts ?? []) {
        const v = volumes.get(m.name);
        if (v) collected.volumes.push(v);
      }
      const prepared = sidecarForPod(sidecar, out);
      const at = sidecar.podInjectPolicy ?? policy;
      if (!hot) {
        into.push({ c: prepared, policy: at });
        return true;
      }
      const pair = hotUpgradePair(prepared, working);
      for (const c of pair.containers) into.push({ c, policy: at });
      Object.assign(annotations, pair.annotations);
      return true;
    };
    const inits = [...(ss.spec.initContainers ?? [])].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    let injecting = false;
    const sidecarList = new Set<string>();
    for (const init of inits) {
      if (init.restartPolicy === 'Always') sidecarList.add(init.name);
      injecting = take(init, 'AfterAppContainer', collected.initContainers, true) || injecting;
    }
    collected.secrets.push(...(ss.spec.imagePullSecrets ?? []));
    for (const sidecar of ss.spec.containers ?? []) {
      sidecarList.add(sidecar.name);
      injecting = take(sidecar, 'BeforeAppContainer', collected.containers) || injecting;
    }
    if (!injecting) continue;
    const list = [...sidecarList].sort();
    hashes.set(nameOf(ss), {
      updateTimestamp: now,
      hash: sidecarSetHashOf(ss),
      sidecarSetName: nameOf(ss),
      sidecarList: list,
      ...(ss.status?.latestRevision ? { controllerRevision: ss.status.latestRevision } : {}),
    });
    hashesWithoutImage.set(nameOf(ss), {
      updateTimestamp: now,
      hash: sidecarSetHashWithoutImageOf(ss),
      sidecarSetName: nameOf(ss),
      sidecarList: list,
    });
  }
  if (collected.containers.length === 0 && collected.initContainers.length === 0) {
    return { pod: out, changed, conflicts };
  }

  const spec = (out.spec ??= {});
  spec.initContainers = mergeContainers(spec.initContainers ?? [], collected.initContainers);
  if (spec.initContainers.length === 0) delete spec.initContainers;
  spec.containers = mergeContainers(spec.containers ?? [], collected.containers);
  const volumes = mergeByName(spec.volumes ?? [], collected.volumes);
  if (volumes.length > 0) spec.volumes = volumes;
  const secrets = mergeByName(spec.imagePullSecrets ?? [], collected.secrets);
  if (secrets.length > 0) spec.imagePullSecrets = secrets;
  annotations[ANNOTATION_SIDECARSET_HASH] = writeUpgradeSpecs(hashes);
  annotations[ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE] = writeUpgradeSpecs(hashesWithoutImage);
  annotations[ANNOTATION_SIDECARSET_INJECTED_LIST] = formatInjectedList(injectedNames);
  return { pod: out, changed: true, conflicts };
}

/** mergeSidecarContainers: same name replaces in place; the rest go before or after the pod's. */
function mergeContainers(origins: readonly Container[], injected: Collected['containers']): Container[] {
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
