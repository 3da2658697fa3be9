/**
 * The in-place cold upgrade of one pod, as a pure function over a fresh copy of it: each sidecar
 * container takes the SidecarSet's image (nothing else changes), the hash record is rewritten,
 * the image IDs before the change are kept in `kruise.io/sidecarset-inplace-update-state` (to tell
 * when the new image runs), and patchPodMetadata is re-applied.
 */
import {
  ANNOTATION_SIDECARSET_HASH,
  ANNOTATION_SIDECARSET_INJECTED_LIST,
  ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE,
  type SidecarSet,
} from '@flotilla/api';
import { readUpgradeSpecs, sidecarSetHashOf, writeUpgradeSpecs } from './control/annotations.js';
import { patchPodAnnotations } from './control/patch-metadata.js';
import type { Pod } from './types.js';

export function upgradePod(ss: SidecarSet, pod: Pod, now: string): Pod {
  const out = structuredClone(pod);
  const name = ss.metadata?.name ?? '';
  const annotations = (out.metadata.annotations ??= {});
  const changed: string[] = [];
  for (const sidecar of ss.spec.containers ?? []) {
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
  let states: Record<
    string,
    { revision?: string; updateTimestamp?: string; lastContainerStatuses?: Record<string, { imageID?: string }> }
  > = {};
  try {
    states = JSON.parse(annotations[ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE] ?? '{}') as typeof states;
  } catch {
    states = {};
  }
  const state = states[name] ?? { revision: sidecarSetHashOf(ss), updateTimestamp: now };
  state.lastContainerStatuses ??= {};
  for (const c of changed) {
    state.lastContainerStatuses[c] = {
      imageID: pod.status?.containerStatuses?.find((s) => s.name === c)?.imageID ?? '',
    };
  }
  states[name] = state;
  annotations[ANNOTATION_SIDECARSET_INPLACE_UPDATE_STATE] = JSON.stringify(states);
  patchPodAnnotations(annotations, ss.spec.patchPodMetadata);
  return out;
}
