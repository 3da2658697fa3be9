/** The pod webhook's SpreadStore over a WorkloadSpread cache and the apiserver. */
import type { WorkloadSpread } from '@flotilla/api';
import { isKubeStatus } from '../../errors.js';
import type { ReadStore } from '../../runtime/cache.js';
import { resourcePath, Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import type { SpreadStore } from './admission.js';
import { kubeWorkloadSpreadClient } from './client.js';
import type { SpreadPod } from './subsets.js';

export function kubeSpreadStore(rest: KubeRest, cache: ReadStore<WorkloadSpread>): SpreadStore {
  const client = kubeWorkloadSpreadClient(rest);
  return {
    list: (namespace) => cache.list(namespace),
    get: async (namespace, name) => {
      try {
        return await rest.request<WorkloadSpread>({
          method: 'GET',
          path: resourcePath(Resources.workloadSpreads, namespace, name),
        });
      } catch (err) {
        if (isKubeStatus(err, 404)) return undefined;
        throw err;
      }
    },
    updateStatus: (ws) => client.updateStatus(ws),
    getWorkload: (ref, namespace, name) => client.getWorkload(ref, namespace, name),
    getPod: async (namespace, name) => {
      try {
        return await rest.request<SpreadPod>({ method: 'GET', path: resourcePath(Resources.pods, namespace, name) });
      } catch (err) {
        if (isKubeStatus(err, 404)) return undefined;
        throw err;
      }
    },
  };
}
