/**
 * KubeApplier over the runtime's KubeRest (the agent's one Kubernetes client: kept-alive HTTP/2,
 * raw JSON): server-side apply of the distributed kinds under the field manager `flotilla-agent`
 * (force, since the hub is the owner of what it distributes), reads and deletes.
 */
import { KruiseResources, MANAGED_BY_HUB, MANAGED_BY_LABEL } from '@flotilla/api';
import { AgentError, isKubeStatus } from '../errors.js';
import { resourcePath } from '../runtime/resource.js';
import { PatchType, type KubeRest } from '../runtime/rest.js';
import type { KubeApplier, KubeObject, ObjectRef } from './types.js';

export const FIELD_MANAGER = 'flotilla-agent';

/**
 * The object's path, or undefined for a namespaced kind without a namespace: no such object can
 * exist, and resourcePath would address every namespace instead.
 */
function objectPath(ref: ObjectRef): string | undefined {
  const resource = KruiseResources[ref.kind];
  if (resource.namespaced && ref.namespace === '') return undefined;
  return resourcePath(resource, ref.namespace, ref.name);
}

/** The hub link's cluster side over `rest`, the agent's one client (connections shared with the runtime). */
export function createKubeApplier(rest: KubeRest): KubeApplier {
  return {
    async apply(ref, manifest) {
      const path = objectPath(ref);
      if (!path) throw new AgentError('AGENT_ERR_KUBE_API', `${ref.kind} ${ref.name}: namespace is required`);
      return rest.request<KubeObject>({
        method: 'PATCH',
        path,
        query: { fieldManager: FIELD_MANAGER, force: true },
        contentType: PatchType.apply,
        body: manifest,
      });
    },
    async get(ref) {
      const path = objectPath(ref);
      if (!path) return undefined;
      try {
        return await rest.request<KubeObject>({ method: 'GET', path });
      } catch (err) {
        if (isKubeStatus(err, 404)) return undefined;
        throw err;
      }
    },
    async delete(ref, propagation) {
      const path = objectPath(ref);
      if (!path) return;
      try {
        const query = propagation ? { propagationPolicy: propagation } : undefined;
        await rest.request({ method: 'DELETE', path, query, discardBody: true });
      } catch (err) {
        if (!isKubeStatus(err, 404)) throw err;
      }
    },
    async listManaged(kind) {
      try {
        const list = await rest.request<{ items?: KubeObject[] }>({
          method: 'GET',
          path: resourcePath(KruiseResources[kind]),
          query: { labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_HUB}` },
        });
        return list.items ?? [];
      } catch (err) {
        // The kind's CRD is not installed: nothing of that kind can be managed here.
        if (isKubeStatus(err, 404)) return [];
        throw err;
      }
    },
    async serverVersion() {
      return (await rest.request<{ gitVersion: string }>({ method: 'GET', path: '/version' })).gitVersion;
    },
  };
}
