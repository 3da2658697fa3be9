/**
 * NodeImage writes, behind an interface so the controllers are tested against an in-memory fake.
 * Updates are full PUTs carrying the resourceVersion that was read: a concurrent writer (the other
 * controller, the node daemon) makes them fail with 409 instead of being silently overwritten.
 */
import { KRUISE_API_VERSION, type NodeImage } from '@flotilla/api';
import { isKubeStatus } from '../errors.js';
import { resourcePath, Resources } from '../runtime/resource.js';
import type { KubeRest } from '../runtime/rest.js';

export interface NodeImageClient {
  /** The live object, or undefined when it does not exist. */
  get(name: string): Promise<NodeImage | undefined>;
  create(nodeImage: NodeImage): Promise<NodeImage>;
  /** Replaces metadata and spec; 409 when `nodeImage.metadata.resourceVersion` is stale. */
  update(nodeImage: NodeImage): Promise<NodeImage>;
  /** Replaces the status subresource; 409 when stale. */
  updateStatus(nodeImage: NodeImage): Promise<NodeImage>;
  /** Deletes the object with this uid (a recreated namesake is left alone); absent is fine. */
  delete(name: string, uid: string | undefined): Promise<void>;
}

/** A NodeImageClient over the raw JSON API. */
export function kubeNodeImageClient(rest: KubeRest): NodeImageClient {
  const ref = Resources.nodeImages;
  const body = (n: NodeImage): NodeImage => ({ ...n, apiVersion: KRUISE_API_VERSION, kind: 'NodeImage' });
  return {
    async get(name) {
      try {
        return await rest.request<NodeImage>({ method: 'GET', path: resourcePath(ref, undefined, name) });
      } catch (err) {
        if (isKubeStatus(err, 404)) return undefined;
        throw err;
      }
    },
    create: (n) => rest.request<NodeImage>({ method: 'POST', path: resourcePath(ref), body: body(n) }),
    update: (n) =>
      rest.request<NodeImage>({ method: 'PUT', path: resourcePath(ref, undefined, n.metadata?.name), body: body(n) }),
    updateStatus: (n) =>
      rest.request<NodeImage>({
        method: 'PUT',
        path: resourcePath(ref, undefined, n.metadata?.name, 'status'),
        body: body(n),
      }),
    async delete(name, uid) {
      try {
        await rest.request({
          method: 'DELETE',
          path: resourcePath(ref, undefined, name),
          body: { apiVersion: 'v1', kind: 'DeleteOptions', ...(uid ? { preconditions: { uid } } : {}) },
        });
      } catch (err) {
        if (!isKubeStatus(err, 404) && !isKubeStatus(err, 409)) throw err;
      }
    },
  };
}
