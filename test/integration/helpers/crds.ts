import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiextensionsV1Api, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { createKubeRest, PatchType } from '../../../agent/src/runtime/rest.js';
import { parse } from 'yaml';
import { eventually, type Kube } from './kube.js';

const crdDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../deploy/crds');

export function loadCrds(): V1CustomResourceDefinition[] {
  return readdirSync(crdDir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => parse(readFileSync(path.join(crdDir, f), 'utf8')) as V1CustomResourceDefinition);
}

/**
 * Installs (or updates) the generated Kruise CRDs with server-side apply and waits until each
 * is Established. Idempotent, so every suite that needs them may call it. The CRDs go over the
 * raw JSON client: client-node's typed serializer would drop the `x-kubernetes-*` schema keys.
 */
export async function installCrds(k: Kube): Promise<V1CustomResourceDefinition[]> {
  const ext = k.kc.makeApiClient(ApiextensionsV1Api);
  const rest = createKubeRest(k.kc);
  const crds = loadCrds();
  for (const crd of crds) {
    await rest.request({
      method: 'PATCH',
      path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata!.name!}`,
      query: { fieldManager: 'flotilla-tests', force: true },
      body: crd,
      contentType: PatchType.apply,
    });
  }
  for (const crd of crds) {
    await eventually(`CRD ${crd.metadata!.name} Established`, async () => {
      const got = await ext.readCustomResourceDefinition({ name: crd.metadata!.name! });
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    });
  }
  return crds;
}
