/**
 * KubeApplier over @kubernetes/client-node 1.4: server-side apply of the Kruise kinds under the
 * field manager `flotilla-agent` (force, since the hub is the owner of what it distributes).
 */
import {
  CustomObjectsApi,
  PatchStrategy,
  VersionApi,
  setHeaderOptions,
  type KubeConfig,
} from '@kubernetes/client-node';
import { MANAGED_BY_HUB, MANAGED_BY_LABEL, type WorkloadKind } from '@flotilla/api';
import type { KubeApplier, KubeObject, ObjectRef } from './types.js';

export const FIELD_MANAGER = 'flotilla-agent';
const GROUP = 'apps.kruise.io';
const VERSION = 'v1alpha1';

const RESOURCES: Record<WorkloadKind, { plural: string; namespaced: boolean }> = {
  CloneSet: { plural: 'clonesets', namespaced: true },
  SidecarSet: { plural: 'sidecarsets', namespaced: false },
  ImagePullJob: { plural: 'imagepulljobs', namespaced: true },
};

const applyHeaders = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);

function statusCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}

export function createKubeApplier(kc: KubeConfig): KubeApplier {
  const api = kc.makeApiClient(CustomObjectsApi);
  const version = kc.makeApiClient(VersionApi);
  const target = (ref: ObjectRef): { group: string; version: string; plural: string; name: string } => ({
    group: GROUP,
    version: VERSION,
    plural: RESOURCES[ref.kind].plural,
    name: ref.name,
  });
  return {
    async apply(ref, manifest) {
      const common = { ...target(ref), body: manifest, fieldManager: FIELD_MANAGER, force: true };
      const applied: unknown = RESOURCES[ref.kind].namespaced
        ? await api.patchNamespacedCustomObject({ ...common, namespace: ref.namespace }, applyHeaders)
        : await api.patchClusterCustomObject(common, applyHeaders);
      return applied as KubeObject;
    },
    async get(ref) {
      try {
        const obj: unknown = RESOURCES[ref.kind].namespaced
          ? await api.getNamespacedCustomObject({ ...target(ref), namespace: ref.namespace })
          : await api.getClusterCustomObject(target(ref));
        return obj as KubeObject;
      } catch (err) {
        if (statusCode(err) === 404) return undefined;
        throw err;
      }
    },
    async delete(ref) {
      try {
        if (RESOURCES[ref.kind].namespaced) {
          await api.deleteNamespacedCustomObject({ ...target(ref), namespace: ref.namespace });
        } else {
          await api.deleteClusterCustomObject(target(ref));
        }
      } catch (err) {
        if (statusCode(err) !== 404) throw err;
      }
    },
    async listManaged(kind) {
      try {
        const list = (await api.listClusterCustomObject({
          group: GROUP,
          version: VERSION,
          plural: RESOURCES[kind].plural,
          labelSelector: `${MANAGED_BY_LABEL}=${MANAGED_BY_HUB}`,
        })) as { items?: KubeObject[] };
        return list.items ?? [];
      } catch (err) {
        // The kind's CRD is not installed: nothing of that kind can be managed here.
        if (statusCode(err) === 404) return [];
        throw err;
      }
    },
    async serverVersion() {
      return (await version.getCode()).gitVersion;
    },
  };
}
