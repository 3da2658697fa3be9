/**
 * The in-place upgrade of one pod, as a pure function over a fresh copy of it: each cold sidecar
 * container takes the SidecarSet's image (nothing else changes); each hot sidecar puts the image
 * into the idle (or older) container of its pair and makes that one the working container (see
 * control/hot-upgrade.ts). The hash record is rewritten, the image IDs before the change are kept
 * in `kruise.io/sidecarset-inplace-update-state` (to tell when the new image runs), and
 * patchPodMetadata is re-applied.
 */
import {
  ANNOTATION_SIDECARSET_HASH,
  ANNOTATION_SIDECARSET_INJECTED_LIST,
  ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE,
  type SidecarSet,
} from '@flotilla/api';
import { readUpgradeSpecs, sidecarSetHashOf, writeUpgradeSpecs } from './control/annotations.js';
import { hotUpgradeSidecar, isHotUpgrade, resetIdleContainers } from './control/hot-upgrade.js';
import { patchPodAnnotations } from './control/patch-metadata.js';
import { isContainerReadyAndConsistent } from './pod-state.js';
import type { Pod } from '../../kube/types.js';

type UpdateStates = Record<
  string,
  { revision?: string; updateTimestamp?: string; lastContainerStatuses?: Record<string, { imageID?: string }> }
>;

export function upgradePod(ss: SidecarSet, pod: Pod, now: string): Pod {
  const out = structuredClone(pod);
  const name = ss.metadata?.name ?? '';
  const annotations = (out.metadata.annotations ??= {});
  const changed: string[] = [];
  for (const sidecar of ss.spec.containers ?? []) {
    if (isHotUpgrade(sidecar)) {
      const upgraded = hotUpgradeSidecar(ss, sidecar, out, (c) => isContainerReadyAndConsistent(pod, ss, c));
      if (upgraded) changed.push(upgraded);
      continue;
    }
    const container = out.spec.containers.find((c) => c.name === sidecar.name);
    if (!container || container.image === sidecar.image) continue;
    container.image = sidecar.image;
    changed.push(sidecar.name);
  }
  const hashes = readUpgradeSpecs(out, ANNOTATION_SIDECARSET_HASH);
  const list = [
    ...(ss.spec.initContainers ?? []).filter((c) => c.restartPolicy === 'Always').map((c) => c.name),
    ...(ss.spec.containers ?? []).map((c) => c.name),
  ].sort();
  hashes.set(name, {
    updateTimestamp: now,
    hash: sidecarSetHashOf(ss),
    sidecarSetName: name,
    sidecarList: list,
    ...(ss.status?.latestRevision ? { controllerRevision: ss.status.latestRevision } : {}),
  });
  annotations[ANNOTATION_SIDECARSET_HASH] = writeUpgradeSpecs(hashes);
  if (!annotations[ANNOTATION_SIDECARSET_INJECTED_LIST]) annotations[ANNOTATION_SIDECARSET_INJECTED_LIST] = name;
  recordImageIds(ss, out, pod, changed, now);
  patchPodAnnotations(annotations, ss.spec.patchPodMetadata);
  return out;
}

/**
 * Keeps the image IDs `changed` containers of `before` ran in the in-place update state
 * (UpdatePodAnnotationsInUpgrade): a container is updated once it reports another image ID.
 */
export function recordImageIds(ss: SidecarSet, out: Pod, before: Pod, changed: readonly string[], now: string): void {
  const annotations = (out.metadata.annotations ??= {});
  const name = ss.metadata?.name ?? '';
  let states: UpdateStates;
  try {
    states = JSON.parse(annotations[ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE] ?? '{}') as UpdateStates;
  } catch {
    states = {};
  }
  const state = states[name] ?? { revision: sidecarSetHashOf(ss), updateTimestamp: now };
  state.lastContainerStatuses ??= {};
  for (const c of changed) {
    state.lastContainerStatuses[c] = {
      imageID: before.status?.containerStatuses?.find((s) => s.name === c)?.imageID ?? '',
    };
  }
  states[name] = state;
  annotations[ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE] = JSON.stringify(states);
}

/**
 * Completes the hot upgrades in flight on a fresh copy of the pod: the old container of each pair
 * goes back to the empty image (flipPodSidecarContainer). Undefined when nothing is in flight.
 */
export function finishHotUpgrade(ss: SidecarSet, pod: Pod, now: string): Pod | undefined {
  const out = structuredClone(pod);
  const changed = resetIdleContainers(ss, out);
  if (changed.length === 0) return undefined;
  recordImageIds(ss, out, pod, changed, now);
  return out;
}
