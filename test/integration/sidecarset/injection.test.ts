import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { cluster } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { eventually, kube, testNamespace } from '../helpers/kube.js';
import {
  deleteConfigurations,
  freePort,
  startReplica,
  SUITE_LABEL,
  testWebhookConfig,
  type AgentReplica,
} from '../webhook/support.js';

const k = kube(cluster(0));
const suite = `inj-${Math.random().toString(36).slice(2, 7)}`;
const created: string[] = [];
let ns: string;
let replica: AgentReplica;
let config: ReturnType<typeof testWebhookConfig>;

async function sidecarSet(name: string, spec: Record<string, unknown>): Promise<string> {
  const full = `${name}-${suite}`;
  await k.custom.createClusterCustomObject({
    group: 'apps.kruise.io',
    version: 'v1alpha1',
    plural: 'sidecarsets',
    body: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name: full, labels: { [SUITE_LABEL]: suite } },
      spec: { namespace: ns, ...spec },
    },
  });
  created.push(full);
  return full;
}

/** Creates the pod (dry run) once the webhook's cache has the SidecarSet `name`. */
async function admit(pod: V1Pod, expectInjected: string): Promise<V1Pod> {
  return eventually(`pod injected by ${expectInjected}`, async () => {
    const p = await k.core.createNamespacedPod({ namespace: ns, body: pod, dryRun: 'All' });
    return p.metadata?.annotations?.['kruise.io/sidecarset-injected-list']?.split(',').includes(expectInjected) && p;
  });
}

const app = (labels: Record<string, string>, extra: Partial<V1Pod['spec']> = {}, annotations = {}): V1Pod => ({
  metadata: { generateName: 'app-', labels, annotations },
  spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }], ...extra },
});

describe('SidecarSet injection', () => {
  beforeAll(async () => {
    await installCrds(k);
    const agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
    ns = await testNamespace(k, 'inj', { [SUITE_LABEL]: suite });
    await k.core.createNamespacedConfigMap({
      namespace: agentNs,
      body: {
        metadata: { name: 'kruise-configuration' },
        data: {
          SidecarSet_PatchPodMetadata_WhiteList: JSON.stringify({
            rules: [{ allowedAnnotationKeyExprs: ['^oom-score$', '^cfg/.*'] }],
          }),
        },
      },
    });
    config = testWebhookConfig(suite, agentNs, await freePort());
    replica = await startReplica(k, config);
  });
  afterAll(async () => {
    for (const name of created) {
      await k.custom
        .deleteClusterCustomObject({ group: 'apps.kruise.io', version: 'v1alpha1', plural: 'sidecarsets', name })
        .catch(() => undefined);
    }
    await deleteConfigurations(k, config);
    await replica?.stop();
  });

  it('leaves pods no SidecarSet matches alone', async () => {
    const name = await sidecarSet('nomatch', {
      selector: { matchLabels: { app: 'other' } },
      containers: [{ name: 'sc', image: 'registry.local/sc:v1' }],
    });
    await admit(app({ app: 'other' }), name); // the cache has it now
    const p = await k.core.createNamespacedPod({ namespace: ns, body: app({ app: 'plain' }), dryRun: 'All' });
    expect(p.spec?.containers.map((c) => c.name)).toEqual(['main']);
    expect(p.metadata?.annotations?.['kruise.io/sidecarset-injected-list']).toBeUndefined();
  });

  it('injects containers before and after the app container, init containers, volumes and hash annotations', async () => {
    const name = await sidecarSet('order', {
      selector: { matchLabels: { app: 'order' } },
      initContainers: [{ name: 'init-sc', image: 'registry.local/init:v1' }],
      containers: [
        { name: 'sidecar0', image: 'registry.local/sc:v1', volumeMounts: [{ name: 'logs', mountPath: '/logs' }] },
        { name: 'sidecar1', image: 'registry.local/sc:v1', podInjectPolicy: 'AfterAppContainer' },
      ],
      volumes: [
        { name: 'logs', emptyDir: {} },
        { name: 'unused', emptyDir: {} },
      ],
    });
    const p = await admit(app({ app: 'order' }), name);
    expect(p.spec?.containers.map((c) => c.name)).toEqual(['sidecar0', 'main', 'sidecar1']);
    expect(p.spec?.initContainers?.map((c) => c.name)).toEqual(['init-sc']);
    expect(p.spec?.volumes?.map((v) => v.name)).toContain('logs');
    expect(p.spec?.volumes?.map((v) => v.name)).not.toContain('unused');
    expect(p.spec?.containers[0]?.env).toContainEqual({ name: 'IS_INJECTED', value: 'true' });
    const hash = JSON.parse(p.metadata!.annotations!['kruise.io/sidecarset-hash']!) as Record<
      string,
      Record<string, unknown>
    >;
    expect(hash[name]).toMatchObject({ sidecarSetName: name, sidecarList: ['sidecar0', 'sidecar1'] });
    expect(hash[name]!.hash).toMatch(/^[a-z0-9]+$/);
    expect(JSON.parse(p.metadata!.annotations!['kruise.io/sidecarset-hash-without-image']!)).toHaveProperty(name);
  });

  it('shares the app volume mounts (with subPathExpr env) when shareVolumePolicy is enabled', async () => {
    const name = await sidecarSet('share', {
      selector: { matchLabels: { app: 'share' } },
      containers: [{ name: 'sc', image: 'registry.local/sc:v1', shareVolumePolicy: { type: 'enabled' } }],
    });
    const p = await admit(
      app(
        { app: 'share' },
        {
          containers: [
            {
              name: 'main',
              image: 'registry.local/app:v1',
              env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
              volumeMounts: [{ name: 'data', mountPath: '/data', subPathExpr: '$(POD_NAME)' }],
            },
          ],
          volumes: [{ name: 'data', emptyDir: {} }],
        },
      ),
      name,
    );
    const sc = p.spec!.containers.find((c) => c.name === 'sc')!;
    expect(sc.volumeMounts).toContainEqual({ name: 'data', mountPath: '/data', subPathExpr: '$(POD_NAME)' });
    expect(sc.env?.map((e) => e.name)).toContain('POD_NAME');
  });

  it('transfers env vars from a named container and from one named by a pod label (downward API)', async () => {
    const name = await sidecarSet('env', {
      selector: { matchLabels: { app: 'env' } },
      containers: [
        {
          name: 'sc',
          image: 'registry.local/sc:v1',
          transferEnv: [
            { sourceContainerName: 'main', envName: 'A' },
            { sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.labels['source']" } }, envNames: ['B'] },
          ],
        },
      ],
    });
    const p = await admit(
      app(
        { app: 'env', source: 'other' },
        {
          containers: [
            { name: 'main', image: 'registry.local/app:v1', env: [{ name: 'A', value: 'from-main' }] },
            { name: 'other', image: 'registry.local/app:v1', env: [{ name: 'B', value: 'from-other' }] },
          ],
        },
      ),
      name,
    );
    const env = p.spec!.containers.find((c) => c.name === 'sc')!.env;
    expect(env).toContainEqual({ name: 'A', value: 'from-main' });
    expect(env).toContainEqual({ name: 'B', value: 'from-other' });
  });

  it('patches pod annotations within the whitelist, and refuses keys outside it', async () => {
    const name = await sidecarSet('meta', {
      selector: { matchLabels: { app: 'meta' } },
      containers: [{ name: 'sc', image: 'registry.local/sc:v1' }],
      patchPodMetadata: [
        { annotations: { 'oom-score': '1' } },
        { annotations: { 'cfg/json': '{"a":1}' }, patchPolicy: 'MergePatchJson' },
      ],
    });
    const p = await admit(app({ app: 'meta' }, {}, { 'oom-score': 'mine', 'cfg/json': '{"b":2}' }), name);
    expect(p.metadata?.annotations?.['oom-score']).toBe('mine'); // Retain
    expect(JSON.parse(p.metadata!.annotations!['cfg/json']!)).toEqual({ a: 1, b: 2 });
    const err = await sidecarSet('meta-bad', {
      selector: { matchLabels: { app: 'meta-bad' } },
      containers: [{ name: 'sc2', image: 'registry.local/sc:v1' }],
      patchPodMetadata: [{ annotations: { forbidden: 'x' } }],
    }).then(
      () => undefined,
      (e: unknown) => e as { body?: string },
    );
    expect(JSON.parse(err?.body ?? '{}').message).toContain('spec.patchPodMetadata');
  });

  it('does not inject while injectionStrategy.paused', async () => {
    const name = await sidecarSet('paused', {
      selector: { matchLabels: { app: 'paused' } },
      containers: [{ name: 'sc', image: 'registry.local/sc:v1' }],
      injectionStrategy: { paused: true },
    });
    const other = await sidecarSet('paused-probe', {
      selector: { matchLabels: { app: 'paused' } },
      containers: [{ name: 'probe-sc', image: 'registry.local/sc:v1' }],
    });
    const p = await admit(app({ app: 'paused' }), other);
    expect(p.metadata?.annotations?.['kruise.io/sidecarset-injected-list']).toBe(other);
    expect(p.spec?.containers.map((c) => c.name)).not.toContain('sc');
    expect(name).toBeTruthy();
  });
});
