/**
 * The SidecarSet informer every component shares: it lists and watches SidecarSets at their
 * storage version (v1beta1, as OpenKruise v1.9 stores them) and converts each object in process to
 * v1alpha1, the version the controllers and handlers work in, with api's converter, which is also
 * what the conversion webhook answers with. Reading v1alpha1 from the apiserver instead would make
 * the agent's caches wait for the conversion webhook the agent itself serves, so a lone replica
 * could never start.
 */
import { KRUISE_API_VERSION, type SidecarSet, sidecarSetToV1alpha1 } from '@flotilla/api';
import type { InformerRequest, Manager } from '../runtime/manager.js';
import type { Informer } from '../runtime/informer.js';
import { Resources } from '../runtime/resource.js';

/** A SidecarSet read at any version, as v1alpha1. */
export function asV1alpha1SidecarSet(obj: SidecarSet): SidecarSet {
  if (obj.apiVersion === KRUISE_API_VERSION) return obj;
  return sidecarSetToV1alpha1(obj, KRUISE_API_VERSION) as unknown as SidecarSet;
}

export function sidecarSetInformer(
  manager: Pick<Manager, 'informer'>,
  options: Omit<InformerRequest<SidecarSet>, 'resource' | 'transform'> = {},
): Informer<SidecarSet> {
  return manager.informer<SidecarSet>({
    ...options,
    resource: Resources.sidecarSetsStored,
    transform: asV1alpha1SidecarSet,
  });
}
