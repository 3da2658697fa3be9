/** The PodUnavailableBudget guard's reads and writes over the apiserver (guard.ts). */
import type { PodUnavailableBudget } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import type { Pod } from '../../kube/types.js';
import { resourcePath, Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import { pubGuard, type PubGuard, type PubStore } from './guard.js';
import { systemClock } from '../../runtime/clock.js';
import { kubePubClient } from './client.js';

async function getOrUndefined<T>(rest: KubeRest, path: string): Promise<T | undefined> {
  try {
    return await rest.request<T>({ method: 'GET', path });
  } catch (err) {
    if (isKubeStatus(err, 404)) return undefined;
    throw err;
  }
}

/**
 * The guard a controller consults before taking a pod down itself (CloneSet in-place updates,
 * SidecarSet upgrades): the same check as the webhook's, without its denial event.
 */
export function controllerPubGuard(rest: KubeRest, inPlaceResize: boolean): PubGuard {
  return pubGuard({ store: kubePubStore(rest), clock: systemClock, inPlaceResize, onDenied: () => undefined });
}

export function kubePubStore(rest: KubeRest): PubStore {
  const pubs = Resources.podUnavailableBudgets;
  const client = kubePubClient(rest);
  return {
    getWorkload: (namespace, ref) => client.workload(namespace, ref),
    getPod: (namespace, name) => getOrUndefined<Pod>(rest, resourcePath(Resources.pods, namespace, name)),
    getPub: (namespace, name) => getOrUndefined<PodUnavailableBudget>(rest, resourcePath(pubs, namespace, name)),
    updateStatus: (pub) =>
      rest.request<PodUnavailableBudget>({
        method: 'PUT',
        path: resourcePath(pubs, pub.metadata?.namespace, pub.metadata?.name, 'status'),
        body: pub,
      }),
  };
}
