/**
 * A SidecarSet suite on a real cluster: its own agent and app namespaces, one agent replica in
 * process (webhook narrowed to the suite's namespaces and SidecarSets, optionally the SidecarSet
 * controller owning only the suite's SidecarSets), and helpers to write SidecarSets and pods.
 * stop() deletes the suite's SidecarSets and webhook configurations, so no other suite's pod
 * creation ever meets this suite's webhook.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { cluster } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { customResource, eventually, isPodReady, kube, mergePatch, testNamespace, type Kube } from '../helpers/kube.js';
import {
  deleteConfigurations,
  freePort,
  startReplica,
  SUITE_LABEL,
  testWebhookConfig,
  type AgentReplica,
} from '../webhook/support.js';

const GROUP = customResource('SidecarSet');

export interface SidecarSetStatus {
  observedGeneration?: number;
  matchedPods?: number;
  updatedPods?: number;
  readyPods?: number;
  updatedReadyPods?: number;
  latestRevision?: string;
}

export interface SidecarSetObject {
  metadata: { name: string; resourceVersion?: string; generation?: number; labels?: Record<string, string> };
  spec: Record<string, unknown>;
  status?: SidecarSetStatus;
}

export interface SidecarSetSuite {
  k: Kube;
  suite: string;
  agentNs: string;
  ns: string;
  replica: AgentReplica;
  /** Creates SidecarSet `<name>-<suite>` scoped to the suite's app namespace; returns its name. */
  create(name: string, spec: Record<string, unknown>, labels?: Record<string, string>): Promise<string>;
  /** JSON merge patch of the whole object (`null` removes a field). */
  patch(name: string, body: Record<string, unknown>): Promise<void>;
  get(name: string): Promise<SidecarSetObject>;
  /** Creates pods `names` with `labels` (plus their own `name` label) and waits until all are ready. */
  createPods(
    names: string[],
    labels: Record<string, string>,
    extra?: Record<string, Record<string, string>>,
  ): Promise<void>;
  pods(labelSelector: string): Promise<V1Pod[]>;
  /** A pod created with dryRun, as the webhook would admit it. */
  admit(labels: Record<string, string>): Promise<V1Pod>;
  /** Waits until the webhook's cache holds `name` (a dry-run pod with `labels` is injected by it). */
  waitInWebhook(name: string, labels: Record<string, string>): Promise<void>;
  stop(): Promise<void>;
}

const appPod = (name: string | undefined, labels: Record<string, string>): V1Pod => ({
  metadata: name ? { name, labels } : { generateName: 'probe-', labels },
  spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] },
});

export async function startSidecarSetSuite(prefix: string, withController: boolean): Promise<SidecarSetSuite> {
  const k = kube(cluster(0));
  const suite = `${prefix}-${Math.random().toString(36).slice(2, 7)}`;
  await installCrds(k);
  const agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
  const ns = await testNamespace(k, prefix, { [SUITE_LABEL]: suite });
  const config = testWebhookConfig(suite, agentNs, await freePort());
  const replica = await startReplica(k, config, 'replica-a', withController);
  const created: string[] = [];

  const admit = (labels: Record<string, string>): Promise<V1Pod> =>
    k.core.createNamespacedPod({ namespace: ns, body: appPod(undefined, labels), dryRun: 'All' });
  const self: SidecarSetSuite = {
    k,
    suite,
    agentNs,
    ns,
    replica,
    async create(name, spec, labels = {}) {
      const full = `${name}-${suite}`;
      await k.custom.createClusterCustomObject({
        ...GROUP,
        body: {
          apiVersion: 'apps.kruise.io/v1alpha1',
          kind: 'SidecarSet',
          metadata: { name: full, labels: { [SUITE_LABEL]: suite, ...labels } },
          spec: { namespace: ns, ...spec },
        },
      });
      created.push(full);
      return full;
    },
    async patch(name, body) {
      await k.custom.patchClusterCustomObject({ ...GROUP, name, body }, mergePatch);
    },
    async get(name) {
      return (await k.custom.getClusterCustomObject({ ...GROUP, name })) as SidecarSetObject;
    },
    async createPods(names, labels, extra = {}) {
      for (const name of names) {
        await k.core.createNamespacedPod({ namespace: ns, body: appPod(name, { ...labels, ...extra[name], name }) });
      }
      const selector = Object.entries(labels)
        .map(([key, v]) => `${key}=${v}`)
        .join(',');
      await eventually(
        `pods ${names.join(',')} ready`,
        async () => {
          const pods = await self.pods(selector);
          return names.every((n) => pods.some((p) => p.metadata?.name === n && isPodReady(p)));
        },
        90_000,
      );
    },
    async pods(labelSelector) {
      return (await k.core.listNamespacedPod({ namespace: ns, labelSelector })).items;
    },
    admit,
    async waitInWebhook(name, labels) {
      await eventually(`SidecarSet ${name} in the webhook cache`, async () => {
        const p = await admit(labels);
        return p.metadata?.annotations?.['kruise.io/sidecarset-injected-list']?.split(',').includes(name);
      });
    },
    async stop() {
      for (const name of created) await k.custom.deleteClusterCustomObject({ ...GROUP, name }).catch(() => undefined);
      await deleteConfigurations(k, config);
      await replica.stop();
    },
  };
  return self;
}

/** Image of container `name` in the pod. */
export function imageOf(pod: V1Pod, name: string): string | undefined {
  return pod.spec?.containers.find((c) => c.name === name)?.image;
}
