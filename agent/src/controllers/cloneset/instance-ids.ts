/**
 * Instance ids: the 5-character suffix of a CloneSet pod's name, also carried by its PVCs
 * (`apps.kruise.io/cloneset-instance-id`). Ids of PVCs whose pod is gone are reused first, so a
 * replacement pod gets its predecessor's volumes back; new ids come from k8s rand.String's
 * alphabet and avoid every id in use by a pod or a PVC.
 */
import { SAFE_ALPHABET } from '@flotilla/api';
import { instanceId } from './pods.js';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.js';

export const INSTANCE_ID_LENGTH = 5;

/** A random id; `random` returns [0, 1) like Math.random. */
export function randomInstanceId(random: () => number = Math.random): string {
  let id = '';
  for (let i = 0; i < INSTANCE_ID_LENGTH; i++) id += SAFE_ALPHABET[Math.floor(random() * SAFE_ALPHABET.length)];
  return id;
}

/**
 * `count` ids for new pods: ids of PVCs no active pod uses come first (sorted, so the choice is
 * stable), then fresh random ids unique among all ids of pods and PVCs and `taken` (ids of pods
 * still terminating, whose names are not free yet).
 */
export function availableInstanceIds(
  count: number,
  pods: readonly Pod[],
  pvcs: readonly PersistentVolumeClaim[],
  random: () => number = Math.random,
  taken: ReadonlySet<string> = new Set(),
): string[] {
  const used = new Set<string>(taken);
  const free = new Set<string>();
  for (const pvc of pvcs) {
    const id = instanceId(pvc);
    if (id) {
      used.add(id);
      free.add(id);
    }
  }
  for (const pod of pods) {
    const id = instanceId(pod);
    if (id) {
      used.add(id);
      free.delete(id);
    }
  }
  const ids = [...free].sort().slice(0, count);
  while (ids.length < count) {
    let id = randomInstanceId(random);
    while (used.has(id)) id = randomInstanceId(random);
    used.add(id);
    ids.push(id);
  }
  return ids;
}
