import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiextensionsV1Api, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { createKubeRest, PatchType } from '../../../agent/src/runtime/rest.js';
import { inject } from 'vitest';
import { parse } from 'yaml';
import { eventually, type Kube } from './kube.js';

const crdDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../deploy/crds');

/**
 * The generated CRDs as tests install them: a CRD converted by webhook calls the run's conversion
 * server (conversion-server.ts) instead of the generator's placeholder Service, so that suites
 * re-installing the CRDs never point them somewhere that does not answer. Outside a vitest run
 * (no provided server) they stay as generated.
 */
export function loadCrds(): V1CustomResourceDefinition[] {
  let conversion: { url: string; caPem: string } | undefined;
  try {
    conversion = inject('conversion');
  } catch {
    conversion = undefined;
  }
  return readdirSync(crdDir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((f) => {
      const crd = parse(readFileSync(path.join(crdDir, f), 'utf8')) as V1CustomResourceDefinition;
      const webhook = crd.spec.conversion?.webhook;
      if (webhook && conversion) {
        webhook.clientConfig = {
          url: `${conversion.url}/convert`,
          caBundle: Buffer.from(conversion.caPem).toString('base64'),
        };
      }
      return crd;
    });
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
