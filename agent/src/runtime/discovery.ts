/**
 * Whether the apiserver serves a resource. OpenKruise skips a controller whose CRD is not
 * installed (utildiscovery.DiscoverGVK) instead of failing: an informer on an unknown resource
 * would never sync and keep the whole manager from becoming ready.
 */
import { isKubeStatus } from '../errors.js';
import type { ResourceRef } from './resource.js';
import type { KubeRest } from './rest.js';

interface ApiResourceList {
  resources?: { name?: string }[];
}

/** True when `ref`'s group/version lists its plural; false when the group/version is unknown. */
export async function isServed(rest: KubeRest, ref: ResourceRef): Promise<boolean> {
  const path = ref.group ? `/apis/${ref.group}/${ref.version}` : `/api/${ref.version}`;
  try {
    const list = await rest.request<ApiResourceList>({ method: 'GET', path });
    return (list.resources ?? []).some((r) => r.name === ref.plural);
  } catch (err) {
    if (isKubeStatus(err, 404)) return false;
    throw err;
  }
}
