/**
 * The deletion-protection inventory over the apiserver: lists (paged) the pods or PVCs of a
 * namespace, or a CRD's custom resources at its storage version in every namespace, and counts
 * those that would go with the deletion. Runs in the main thread, which owns the apiserver client.
 */
import type { KubeRest } from '../../runtime/rest.js';
import { resourcePath, Resources, type ResourceRef } from '../../runtime/resource.js';
import type { DeletionInventory } from './deletion-protection-handler.js';
import { isActiveObject, isActivePod, isBoundPvc, type InventoryQuery } from './deletion-protection.js';

interface Item {
  metadata?: { deletionTimestamp?: string | null };
  status?: { phase?: string };
}

const PAGE = 500;

async function countWhere(rest: KubeRest, path: string, keep: (item: Item) => boolean): Promise<number> {
  let n = 0;
  let token: string | undefined;
  do {
    const page = await rest.request<{ items?: Item[]; metadata?: { continue?: string } }>({
      method: 'GET',
      path,
      query: { limit: PAGE, ...(token ? { continue: token } : {}) },
    });
    n += (page.items ?? []).filter(keep).length;
    token = page.metadata?.continue || undefined;
  } while (token);
  return n;
}

export function kubeDeletionInventory(rest: KubeRest): DeletionInventory {
  return {
    count(query: InventoryQuery): Promise<number> {
      switch (query.what) {
        case 'activePods':
          return countWhere(rest, resourcePath(Resources.pods, query.namespace), isActivePod);
        case 'boundPvcs':
          return countWhere(rest, resourcePath(Resources.persistentVolumeClaims, query.namespace), isBoundPvc);
        case 'activeCustomResources': {
          // Every namespace at once: namespaced or not, the collection path without one lists all.
          const ref: ResourceRef = { ...query, kind: '', namespaced: true };
          return countWhere(rest, resourcePath(ref), isActiveObject);
        }
      }
    },
  };
}
