import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { cluster } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { customResource, eventually, kube, testNamespace } from '../helpers/kube.js';
import {
  deleteConfigurations,
  freePort,
  startReplica,
  SUITE_LABEL,
  testWebhookConfig,
  type AgentReplica,
} from '../webhook/support.js';

const k = kube(cluster(0));
const SIDECARSETS = customResource('SidecarSet');
const suite = `inj-${Math.random().toString(36).slice(2, 7)}`;
const created: string[] = [];
/** SidecarSets created outside the suite's webhook scope (no suite label), deleted at the end too. */
const unlabelled: string[] = [];
let ns: string;
let replica: AgentReplica;
let config: ReturnType<typeof testWebhookConfig>;

async function sidecarSet(name: string, spec: Record<string, unknown>): Promise<string> {
  const full = `${name}-${suite}`;
  await k.custom.createClusterCustomObject({
    ...SIDECARSETS,
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
    for (const name of [...created, ...unlabelled]) {
      await k.custom.deleteClusterCustomObject({ ...SIDECARSETS, name }).catch(() => undefined);
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

  it('selects namespaces by namespaceSelector instead of a namespace', async () => {
    const name = await sidecarSet('nssel', {
      namespace: undefined,
      namespaceSelector: { matchLabels: { [SUITE_LABEL]: suite } },
      selector: { matchLabels: { app: 'nssel' } },
      containers: [{ name: 'nssel-sc', image: 'registry.local/sc:v1' }],
    });
    const p = await admit(app({ app: 'nssel' }), name);
    expect(p.spec?.containers.map((c) => c.name)).toEqual(['nssel-sc', 'main']);
  });

  it('injects a downwardAPI volume and env transferred from a container named by a pod annotation', async () => {
    const name = await sidecarSet('dapi', {
      selector: { matchLabels: { app: 'dapi' } },
      containers: [
        {
          name: 'dapi-sc',
          image: 'registry.local/sc:v1',
          volumeMounts: [{ name: 'podinfo', mountPath: '/etc/podinfo' }],
          transferEnv: [
            { sourceContainerNameFrom: { fieldRef: { fieldPath: "metadata.annotations['env-from']" } }, envName: 'C' },
          ],
        },
      ],
      volumes: [
        {
          name: 'podinfo',
          downwardAPI: { items: [{ path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } }] },
        },
      ],
    });
    const p = await admit(
      app(
        { app: 'dapi' },
        {
          containers: [
            { name: 'main', image: 'registry.local/app:v1' },
            { name: 'source', image: 'registry.local/app:v1', env: [{ name: 'C', value: 'from-annotation' }] },
          ],
        },
        { 'env-from': 'source' },
      ),
      name,
    );
    const volume = p.spec?.volumes?.find((v) => v.name === 'podinfo');
    expect(volume?.downwardAPI?.items?.[0]?.fieldRef?.fieldPath).toBe('metadata.labels');
    const sc = p.spec!.containers.find((c) => c.name === 'dapi-sc')!;
    expect(sc.volumeMounts).toContainEqual({ name: 'podinfo', mountPath: '/etc/podinfo' });
    expect(sc.env).toContainEqual({ name: 'C', value: 'from-annotation' });
  });

  it('resolves two SidecarSets injecting one container name deterministically (first by name) and records an event', async () => {
    const first = await sidecarSet('dup-a', {
      selector: { matchLabels: { app: 'dup' } },
      containers: [{ name: 'dup-sc', image: 'registry.local/first:v1' }],
    });
    // Our validating webhook refuses the clash; a SidecarSet outside its scope (no suite label),
    // as one applied before the agent was installed, still reaches the cluster.
    const second = `dup-b-${suite}`;
    await k.custom.createClusterCustomObject({
      ...SIDECARSETS,
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: second },
        spec: {
          namespace: ns,
          selector: { matchLabels: { app: 'dup' } },
          containers: [{ name: 'dup-sc', image: 'registry.local/second:v1' }],
        },
      },
    });
    unlabelled.push(second);
    const p = await admit(app({ app: 'dup' }), second);
    expect(p.spec?.containers.map((c) => c.name)).toEqual(['dup-sc', 'main']);
    expect(p.spec?.containers[0]?.image).toBe('registry.local/first:v1');
    expect(p.metadata?.annotations?.['kruise.io/sidecarset-injected-list']).toBe([first, second].sort().join(','));
    const event = await eventually('a SidecarContainerConflict event on the second SidecarSet', async () => {
      const events = await k.core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: `involvedObject.name=${second}`,
      });
      return events.items.find((e) => e.reason === 'SidecarContainerConflict');
    });
    expect(event.type).toBe('Warning');
    expect(event.message).toContain(`SidecarSet ${first} injects a container of that name`);
  });
});
