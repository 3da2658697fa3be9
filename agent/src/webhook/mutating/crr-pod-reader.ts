/** CrrPodReader over the apiserver: GET the pod, and its node when it has one. */
import { isKubeStatus } from '../../errors.js';
import { resourcePath, Resources } from '../../runtime/resource.js';
import type { KubeRest } from '../../runtime/rest.js';
import type { CrrPodLookup, CrrPodReader } from './crr-defaults.js';

async function getOrUndefined<T>(rest: KubeRest, path: string): Promise<T | undefined> {
  try {
    return await rest.request<T>({ method: 'GET', path });
  } catch (err) {
    if (isKubeStatus(err, 404)) return undefined;
    throw err;
  }
}

export function kubeCrrPodReader(rest: KubeRest): CrrPodReader {
  return {
    async read(namespace, name): Promise<CrrPodLookup> {
      const pod = await getOrUndefined<NonNullable<CrrPodLookup['pod']>>(
        rest,
        resourcePath(Resources.pods, namespace, name),
      );
      const nodeName = pod?.spec.nodeName;
      const node = nodeName
        ? await getOrUndefined(rest, resourcePath(Resources.nodes, undefined, nodeName))
        : undefined;
      return { pod, nodeExists: node !== undefined };
    },
  };
}
