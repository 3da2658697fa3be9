/**
 * SidecarSet injection as OpenKruise v1.9 does it, through a real apiserver calling the agent's
 * webhooks over TLS: native sidecars of several SidecarSets sorted by name, resources computed
 * by resourcesPolicy, volume devices shared by shareVolumeDevicePolicy, and the refusals.
 */
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
const suite = `v19-${Math.random().toString(36).slice(2, 7)}`;
const created: string[] = [];
let ns: string;
let replica: AgentReplica;
let config: ReturnType<typeof testWebhookConfig>;

function sidecarSetBody(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: `${name}-${suite}`, labels: { [SUITE_LABEL]: suite } },
    spec: { namespace: ns, updateStrategy: { type: 'NotUpdate' }, ...spec },
  };
}

async function sidecarSet(name: string, spec: Record<string, unknown>): Promise<string> {
  await k.custom.createClusterCustomObject({ ...SIDECARSETS, body: sidecarSetBody(name, spec) });
  created.push(`${name}-${suite}`);
  return `${name}-${suite}`;
}

const injectedBy = (p: V1Pod, names: string[]): boolean => {
  const list = p.metadata?.annotations?.['kruise.io/sidecarset-injected-list']?.split(',') ?? [];
  return names.every((n) => list.includes(n));
};

/** Creates the pod (dry run) once the webhook's cache has every SidecarSet of `names`. */
const admit = (pod: V1Pod, names: string[]): Promise<V1Pod> =>
  eventually(`pod injected by ${names.join(',')}`, async () => {
    const p = await k.core.createNamespacedPod({ namespace: ns, body: pod, dryRun: 'All' });
    return injectedBy(p, names) && p;
  });

const app = (label: string, spec: Partial<V1Pod['spec']> = {}): V1Pod => ({
  metadata: { generateName: 'app-', labels: { app: label } },
  spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }], ...spec },
});

describe('SidecarSet injection as OpenKruise v1.9', () => {
  beforeAll(async () => {
    await installCrds(k);
    const agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
    ns = await testNamespace(k, 'v19', { [SUITE_LABEL]: suite });
    config = testWebhookConfig(suite, agentNs, await freePort());
    replica = await startReplica(k, config);
  });
  afterAll(async () => {
    for (const name of created)
      await k.custom.deleteClusterCustomObject({ ...SIDECARSETS, name }).catch(() => undefined);
    await deleteConfigurations(k, config);
    await replica?.stop();
  });

  it('sorts the native sidecars of two SidecarSets by name around the pod’s own init containers', async () => {
    const a = await sidecarSet('na', {
      selector: { matchLabels: { app: 'native' } },
      initContainers: [
        { name: 'zz-proxy', image: 'registry.local/p:v1', restartPolicy: 'Always' },
        {
          name: 'aa-first',
          image: 'registry.local/f:v1',
          restartPolicy: 'Always',
          podInjectPolicy: 'BeforeAppContainer',
        },
      ],
    });
    const b = await sidecarSet('nb', {
      selector: { matchLabels: { app: 'native' } },
      initContainers: [{ name: 'mm-log', image: 'registry.local/l:v1', restartPolicy: 'Always' }],
    });
    const p = await admit(app('native', { initContainers: [{ name: 'setup', image: 'registry.local/s:v1' }] }), [a, b]);
    expect(p.spec?.initContainers?.map((c) => c.name)).toEqual(['aa-first', 'setup', 'mm-log', 'zz-proxy']);
    expect(p.spec?.initContainers?.[3]).toMatchObject({ restartPolicy: 'Always' });
    expect(p.spec?.initContainers?.[3]?.env).toContainEqual({ name: 'IS_INJECTED', value: 'true' });
    const hash = JSON.parse(p.metadata!.annotations!['kruise.io/sidecarset-hash']!) as Record<
      string,
      { sidecarList: string[] }
    >;
    expect(hash[b]!.sidecarList).toEqual(['mm-log']);
  });

  it('computes sidecar resources from the app containers and shares their volume devices', async () => {
    const name = await sidecarSet('rp', {
      selector: { matchLabels: { app: 'rp' } },
      containers: [
        {
          name: 'envoy',
          image: 'registry.local/envoy:v1',
          shareVolumeDevicePolicy: { type: 'enabled' },
          resourcesPolicy: {
            targetContainersMode: 'sum',
            resourcesExpr: {
              limits: { cpu: 'cpu*50%+100m', memory: 'max(memory*20%+100Mi,200Mi)' },
              requests: { cpu: 'cpu*30%+50m', memory: 'memory*15%+50Mi' },
            },
          },
        },
      ],
    });
    const resources = (cpu: string, mem: string, rcpu: string, rmem: string) => ({
      limits: { cpu, memory: mem },
      requests: { cpu: rcpu, memory: rmem },
    });
    const p = await admit(
      app('rp', {
        containers: [
          {
            name: 'main',
            image: 'registry.local/app:v1',
            resources: resources('200m', '400Mi', '100m', '200Mi'),
            volumeDevices: [{ name: 'disk', devicePath: '/dev/xvda' }],
          },
          { name: 'web', image: 'registry.local/web:v1', resources: resources('400m', '600Mi', '200m', '300Mi') },
        ],
        volumes: [{ name: 'disk', persistentVolumeClaim: { claimName: 'disk' } }],
      }),
      [name],
    );
    const envoy = p.spec?.containers.find((c) => c.name === 'envoy');
    expect(envoy?.resources).toEqual(resources('400m', '300Mi', '140m', '125Mi'));
    expect(envoy?.volumeDevices).toEqual([{ name: 'disk', devicePath: '/dev/xvda' }]);
  });

  it('refuses a pod no container of which the regex matches, naming the pattern', async () => {
    const name = await sidecarSet('none', {
      selector: { matchLabels: { app: 'none' } },
      containers: [
        {
          name: 'agent',
          image: 'registry.local/agent:v1',
          resourcesPolicy: {
            targetContainersMode: 'max',
            targetContainersNameRegex: '^db$',
            resourcesExpr: { requests: { cpu: 'cpu' } },
          },
        },
      ],
    });
    // The webhook's cache has the SidecarSet once a matching pod with a `db` container is injected.
    await admit(app('none', { containers: [{ name: 'db', image: 'registry.local/db:v1' }] }), [name]);
    await expect(k.core.createNamespacedPod({ namespace: ns, body: app('none'), dryRun: 'All' })).rejects.toThrow(
      /denied the request: no containers match the regex pattern \\*"\^db\$/,
    );
  });

  it('rejects an invalid resourcesPolicy with the field path', async () => {
    const body = sidecarSetBody('bad', {
      selector: { matchLabels: { app: 'bad' } },
      containers: [
        {
          name: 'agent',
          image: 'registry.local/agent:v1',
          resources: { limits: { cpu: '1' } },
          resourcesPolicy: { targetContainersMode: 'sum', resourcesExpr: { limits: { cpu: 'cpu/0' } } },
        },
      ],
    });
    const err = await eventually('SidecarSet refused', async () => {
      try {
        await k.custom.createClusterCustomObject({ ...SIDECARSETS, body, dryRun: 'All' });
        return false;
      } catch (e) {
        return e as Error;
      }
    });
    expect(err.message).toContain(
      'spec.containers[0].resourcesPolicy: Forbidden: resourcesPolicy and resources cannot be configured together',
    );
    expect(err.message).toContain('spec.containers[0].resourcesPolicy.resourcesExpr.limits.cpu');
  });
});
