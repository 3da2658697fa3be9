import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { cluster } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import {
  customResource,
  eventually,
  isPodReady,
  kube,
  mergePatch,
  podCondition,
  testNamespace,
} from '../helpers/kube.js';
import {
  deleteConfigurations,
  freePort,
  startReplica,
  SUITE_LABEL,
  testWebhookConfig,
  type AgentReplica,
} from '../webhook/support.js';

const k = kube(cluster(0));
const suite = `upg-${Math.random().toString(36).slice(2, 7)}`;
const ssName = `up-${suite}`;
const group = customResource('SidecarSet');
let agentNs: string;
let ns: string;
let replica: AgentReplica;
let config: ReturnType<typeof testWebhookConfig>;

interface Status {
  matchedPods?: number;
  updatedPods?: number;
  readyPods?: number;
  updatedReadyPods?: number;
  latestRevision?: string;
  observedGeneration?: number;
}

const getStatus = async (): Promise<Status> =>
  ((await k.custom.getClusterCustomObject({ ...group, name: ssName })) as { status?: Status }).status ?? {};
const patchSpec = (spec: Record<string, unknown>) =>
  k.custom.patchClusterCustomObject({ ...group, name: ssName, body: { spec } }, mergePatch);
const pods = async (): Promise<V1Pod[]> =>
  (await k.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=up' })).items;
const sidecarImages = async (): Promise<string[]> =>
  (await pods()).map((p) => p.spec!.containers.find((c) => c.name === 'sc')!.image!).sort();
const countAt = async (image: string): Promise<number> => (await sidecarImages()).filter((i) => i === image).length;

describe('SidecarSet in-place upgrade', () => {
  beforeAll(async () => {
    await installCrds(k);
    agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
    ns = await testNamespace(k, 'upg', { [SUITE_LABEL]: suite });
    config = testWebhookConfig(suite, agentNs, await freePort());
    replica = await startReplica(k, config, 'replica-a', true);
    await k.custom.createClusterCustomObject({
      ...group,
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name: ssName, labels: { [SUITE_LABEL]: suite } },
        spec: {
          namespace: ns,
          selector: { matchLabels: { app: 'up' } },
          containers: [{ name: 'sc', image: 'registry.local/sc:v1' }],
          revisionHistoryLimit: 3,
        },
      },
    });
    await eventually('SidecarSet in the webhook cache', async () => {
      const p = await k.core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name: 'probe', labels: { app: 'up' } },
          spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] },
        },
        dryRun: 'All',
      });
      return p.spec!.containers.some((c) => c.name === 'sc');
    });
    for (const i of [0, 1, 2]) {
      await k.core.createNamespacedPod({
        namespace: ns,
        body: {
          metadata: { name: `pod-${i}`, labels: { app: 'up', rank: `r-${i}` } },
          spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] },
        },
      });
    }
    await eventually('pods ready', async () => (await pods()).every(isPodReady), 90_000);
  });
  afterAll(async () => {
    await k.custom.deleteClusterCustomObject({ ...group, name: ssName }).catch(() => undefined);
    await deleteConfigurations(k, config);
    await replica?.stop();
  });

  it('counts matched, updated and ready pods and records a revision', async () => {
    const status = await eventually('status', async () => {
      const s = await getStatus();
      return s.matchedPods === 3 && s.readyPods === 3 && s.updatedPods === 3 && s;
    });
    expect(status.latestRevision).toMatch(new RegExp(`^${ssName}-`));
    const revs = await k.apps.listNamespacedControllerRevision({
      namespace: agentNs,
      labelSelector: `kruise.io/sidecarset-name=${ssName}`,
    });
    expect(revs.items.map((r) => r.metadata!.name)).toContain(status.latestRevision);
  });

  it('upgrades only the sidecar image in place, honouring partition and paused', async () => {
    const uids = (await pods()).map((p) => p.metadata!.uid).sort();
    await patchSpec({ containers: [{ name: 'sc', image: 'registry.local/sc:v2' }], updateStrategy: { partition: 2 } });
    await eventually('one pod at v2', async () => (await countAt('registry.local/sc:v2')) === 1);
    await new Promise((r) => setTimeout(r, 3000));
    expect(await countAt('registry.local/sc:v2'), 'partition keeps two pods back').toBe(1);
    await patchSpec({ updateStrategy: { partition: 0, paused: true } });
    await new Promise((r) => setTimeout(r, 3000));
    expect(await countAt('registry.local/sc:v2'), 'paused').toBe(1);
    await patchSpec({ updateStrategy: { paused: false } });
    await eventually('all pods at v2', async () => (await countAt('registry.local/sc:v2')) === 3, 60_000);
    expect((await pods()).map((p) => p.metadata!.uid).sort()).toEqual(uids);
    for (const p of await pods()) expect(podCondition(p, 'SidecarSetUpgradable')).toBe('True');
    await eventually('status updated', async () => {
      const s = await getStatus();
      return s.updatedPods === 3 && s.updatedReadyPods === 3;
    });
  });

  it('keeps maxUnavailable pods unready at most (a broken image)', async () => {
    await patchSpec({
      containers: [{ name: 'sc', image: 'registry.local/sc:v3-broken' }],
      updateStrategy: { maxUnavailable: 1 },
    });
    await eventually('one pod at the broken image', async () => (await countAt('registry.local/sc:v3-broken')) === 1);
    await new Promise((r) => setTimeout(r, 4000));
    expect(await countAt('registry.local/sc:v3-broken')).toBe(1);
    await patchSpec({
      containers: [{ name: 'sc', image: 'registry.local/sc:v4' }],
      updateStrategy: { maxUnavailable: 3 },
    });
    await eventually('all pods at v4', async () => (await countAt('registry.local/sc:v4')) === 3, 60_000);
  });

  it('upgrades nothing for a change beyond images and marks pods not upgradable; history is truncated', async () => {
    await patchSpec({ containers: [{ name: 'sc', image: 'registry.local/sc:v5', env: [{ name: 'X', value: '1' }] }] });
    await eventually('pods marked not upgradable', async () =>
      (await pods()).every((p) => podCondition(p, 'SidecarSetUpgradable') === 'False'),
    );
    expect(await countAt('registry.local/sc:v4')).toBe(3);
    const s = await eventually('status', async () => {
      const st = await getStatus();
      return st.updatedPods === 0 && st;
    });
    expect(s.matchedPods).toBe(3);
    const revs = await k.apps.listNamespacedControllerRevision({
      namespace: agentNs,
      labelSelector: `kruise.io/sidecarset-name=${ssName}`,
    });
    expect(revs.items.length).toBeLessThanOrEqual(3);
    expect(revs.items.map((r) => r.metadata!.name)).toContain(s.latestRevision);
  });
});
