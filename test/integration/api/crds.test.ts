import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiException, type KubernetesObject } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { KruiseResources, type KruiseKindName } from '@flotilla/api';
import { run, toolPath } from '@flotilla/test';
import { createKubeRest } from '../../../agent/src/runtime/rest.js';
import { cluster } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { customResource, kube, testNamespace } from '../helpers/kube.js';

const corpus = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../api/src/kruise/testdata/valid');

interface Schema {
  properties?: Record<string, Schema>;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

interface Manifest extends KubernetesObject {
  spec?: Record<string, unknown>;
}

describe('generated Kruise CRDs on a real apiserver', () => {
  const c = cluster(1);
  const k = kube(c);
  let ns: string;

  beforeAll(async () => {
    await installCrds(k);
    ns = await testNamespace(k, 'crds');
  });

  async function create(m: Manifest, dryRun = true): Promise<unknown> {
    const kind = m.kind as KruiseKindName;
    const { group, plural } = customResource(kind);
    // The manifest's own version: the corpus holds v1alpha1 and v1beta1 manifests.
    const version = String(m.apiVersion).split('/')[1]!;
    const body = { ...m, metadata: { ...m.metadata } };
    if (!KruiseResources[kind].namespaced) {
      delete body.metadata.namespace;
      body.metadata.name = `${body.metadata.name}-${ns}`;
      return k.custom.createClusterCustomObject({ group, version, plural, body, dryRun: dryRun ? 'All' : undefined });
    }
    return k.custom.createNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      body: { ...body, metadata: { ...body.metadata, namespace: ns } },
      dryRun: dryRun ? 'All' : undefined,
    });
  }

  it('accepts every manifest of the valid corpus unchanged (server-side dry run)', async () => {
    const files = readdirSync(corpus).filter((f) => f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThanOrEqual(15);
    for (const f of files) {
      const m = parse(readFileSync(path.join(corpus, f), 'utf8')) as Manifest;
      // status is a subresource: a create ignores it, so strip it as kubectl would send it.
      delete (m as { status?: unknown }).status;
      await expect(create(m), f).resolves.toBeTruthy();
    }
  });

  it('keeps the int-or-string markers and the schemaless pod template once installed', async () => {
    const rest = createKubeRest(k.kc);
    const crd = await rest.request<{ spec: { versions: { schema: { openAPIV3Schema: Schema } }[] } }>({
      method: 'GET',
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clonesets.apps.kruise.io',
    });
    const spec = crd.spec.versions[0]!.schema.openAPIV3Schema.properties!.spec!;
    const strategy = spec.properties!.updateStrategy!.properties!;
    expect(strategy.maxUnavailable!['x-kubernetes-int-or-string']).toBe(true);
    expect(strategy.partition!['x-kubernetes-int-or-string']).toBe(true);
    expect(spec.properties!.template!['x-kubernetes-preserve-unknown-fields']).toBe(true);
  });

  it('shows OpenKruise printer columns in kubectl get clonesets', async () => {
    await create(
      {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: 'sample' },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: 'sample' } },
          template: {
            metadata: { labels: { app: 'sample' } },
            spec: { containers: [{ name: 'main', image: 'nginx:alpine' }] },
          },
        },
      },
      false,
    );
    const kubectl = toolPath('kubectl');
    const out = await run('kubectl', kubectl, ['--kubeconfig', c.kubeconfigPath, '-n', ns, 'get', 'clonesets']);
    const header = out.split('\n')[0]!.trim().split(/\s+/);
    expect(header).toEqual([
      'NAME',
      'DESIRED',
      'UPDATED',
      'UPDATED_READY',
      'UPDATED_AVAILABLE',
      'READY',
      'TOTAL',
      'AGE',
    ]);
    expect(out).toMatch(/sample\s+3\s/);
    const wide = await run('kubectl', kubectl, [
      '--kubeconfig',
      c.kubeconfigPath,
      '-n',
      ns,
      'get',
      'clone',
      '-o',
      'wide',
    ]);
    expect(wide.split('\n')[0]).toMatch(/CONTAINERS\s+IMAGES\s+SELECTOR/);
    expect(wide).toContain('nginx:alpine');
    // The scale subresource works as for a Deployment.
    await run('kubectl', kubectl, [
      '--kubeconfig',
      c.kubeconfigPath,
      '-n',
      ns,
      'scale',
      'clonesets/sample',
      '--replicas=5',
    ]);
    const scaled = (await k.custom.getNamespacedCustomObject({
      ...customResource('CloneSet'),
      namespace: ns,
      name: 'sample',
    })) as Manifest;
    expect(scaled.spec?.replicas).toBe(5);
  });

  it.each([
    ['replicas of the wrong type', { replicas: 'three' }, 'spec.replicas'],
    [
      'podsToDelete that is not a list',
      { scaleStrategy: { podsToDelete: 'pod-a' } },
      'spec.scaleStrategy.podsToDelete',
    ],
    ['a fractional revisionHistoryLimit', { revisionHistoryLimit: 1.5 }, 'spec.revisionHistoryLimit'],
    ['a boolean maxUnavailable', { updateStrategy: { maxUnavailable: true } }, 'spec.updateStrategy.maxUnavailable'],
    ['a selector that is not an object', { selector: 'app=x' }, 'spec.selector'],
  ])('the apiserver itself rejects a CloneSet with %s', async (_what, specPatch, field) => {
    const m: Manifest = {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name: 'bad' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'bad' } },
        template: { metadata: { labels: { app: 'bad' } }, spec: { containers: [{ name: 'main', image: 'nginx' }] } },
        ...specPatch,
      },
    };
    const err = await create(m).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ApiException);
    const apiErr = err as ApiException<string>;
    expect(apiErr.code).toBe(422);
    expect(String(apiErr.body)).toContain(field);
  });
});
