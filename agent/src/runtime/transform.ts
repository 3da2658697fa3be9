/**
 * Transforms applied to every object before an informer caches it (client-go's SetTransform):
 * what no controller reads is dropped, so the caches of a large cluster stay small.
 */
import type { KubeObject } from './kube-object.js';

/**
 * Changes an object before it is cached; gets a private copy (plain JSON, not yet frozen) and may
 * modify it in place. It must keep every field any controller sharing the informer reads, and
 * every field a controller writes back with a full update (PUT) of a cached copy.
 */
export type ObjectTransform = <T extends KubeObject>(obj: T) => T;

/**
 * Drops metadata.managedFields: no controller reads it, and it is about half of a pod's memory
 * (test/bench/cloneset). Updating a cached copy (PUT) stays safe: an update without
 * managedFields keeps the server's, since the apiserver's field manager falls back to the live
 * object's fields so that clients unaware of them never wipe them.
 */
export function stripManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata?.managedFields !== undefined) delete obj.metadata.managedFields;
  return obj;
}

/**
 * Drops a Node's status.images, the list of every image on the node with its sizes: often the
 * largest part of a Node (up to 50 entries by default), and no controller reads it. Nodes are
 * never updated with a full copy from the cache.
 */
export function stripNodeImages<T extends KubeObject>(obj: T): T {
  const node = obj as T & { status?: { images?: unknown } };
  if (obj.kind === 'Node' && (obj.apiVersion ?? 'v1') === 'v1' && node.status?.images !== undefined) {
    delete node.status.images;
  }
  return obj;
}

/** The transform the manager gives every informer unless told otherwise. */
export function defaultTransform<T extends KubeObject>(obj: T): T {
  return stripNodeImages(stripManagedFields(obj));
}
