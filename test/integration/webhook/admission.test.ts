import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cluster } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { customResource, eventually, kube, mergePatch, simplePod, testNamespace } from '../helpers/kube.js';
import {
  deleteConfigurations,
  freePort,
  startReplica,
  SUITE_LABEL,
  testWebhookConfig,
  type AgentReplica,
} from './support.js';

const k = kube(cluster(0));
const CLONESETS = customResource('CloneSet');
const SIDECARSETS = customResource('SidecarSet');
const suite = `adm-${Math.random().toString(36).slice(2, 7)}`;
let agentNs: string;
let ns: string;
let replica: AgentReplica;
let config: ReturnType<typeof testWebhookConfig>;

const cloneSet = (name: string, extra: Record<string, unknown> = {}) => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name },
  spec: {
    replicas: 0,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] },
    },
    ...extra,
  },
});

/** Waits until the webhook answers for `namespace` (configurations become effective asynchronously). */
async function waitForWebhook(namespace: string): Promise<void> {
  await eventually('mutating webhook active', async () => {
    const cs = await k.custom.createNamespacedCustomObject({
      ...CLONESETS,
      namespace,
      body: cloneSet('probe'),
      dryRun: 'All',
    });
    return (cs as { spec: { updateStrategy?: { type?: string } } }).spec.updateStrategy?.type === 'ReCreate';
  });
}

describe('agent admission webhook', () => {
  beforeAll(async () => {
    await installCrds(k);
    agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
    ns = await testNamespace(k, 'wh', { [SUITE_LABEL]: suite });
    config = testWebhookConfig(suite, agentNs, await freePort());
    replica = await startReplica(k, config);
    await waitForWebhook(ns);
  });
  afterAll(async () => {
    await deleteConfigurations(k, config);
    await replica?.stop();
  });

  it('applies CloneSet defaults on create (as a JSON patch)', async () => {
    const created = (await k.custom.createNamespacedCustomObject({
      ...CLONESETS,
      namespace: ns,
      body: cloneSet('defaults'),
    })) as { spec: Record<string, unknown> };
    expect(created.spec.updateStrategy).toMatchObject({ type: 'ReCreate', maxUnavailable: '20%', partition: 0 });
    expect(created.spec.revisionHistoryLimit).toBe(10);
  });

  it('denies an invalid CloneSet through the validating webhook, naming the field', async () => {
    const bad = cloneSet('invalid');
    bad.spec.template.metadata.labels = { app: 'other' };
    const err = await k.custom
      .createNamespacedCustomObject({
        ...CLONESETS,
        namespace: ns,
        body: bad,
      })
      .then(
        () => undefined,
        (e: unknown) => e as { code?: number; body?: string },
      );
    expect(err, 'the create must be refused').toBeDefined();
    const body = JSON.parse(err!.body ?? '{}') as { message?: string };
    expect(body.message).toContain('vcloneset.kb.io');
    expect(body.message).toContain('spec.template.metadata.labels');
  });

  it('denies an invalid update and sets SidecarSet hash annotations', async () => {
    const name = `ss-${suite}`;
    const created = (await k.custom.createClusterCustomObject({
      ...SIDECARSETS,
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'SidecarSet',
        metadata: { name, labels: { [SUITE_LABEL]: suite } },
        spec: {
          selector: { matchLabels: { app: 'none' } },
          containers: [{ name: 'sc', image: 'registry.local/sc:v1' }],
        },
      },
    })) as { metadata: { annotations: Record<string, string> }; spec: Record<string, unknown> };
    try {
      expect(created.metadata.annotations['kruise.io/sidecarset-hash']).toMatch(/^[a-z0-9]+$/);
      expect(created.metadata.annotations['kruise.io/sidecarset-hash-without-image']).toMatch(/^[a-z0-9]+$/);
      expect(created.spec.updateStrategy).toMatchObject({ type: 'RollingUpdate', maxUnavailable: 1 });
      const err = await k.custom
        .patchClusterCustomObject(
          {
            ...SIDECARSETS,
            name,
            body: { spec: { updateStrategy: { partition: 1, selector: { matchLabels: { a: 'b' } } } } },
          },
          mergePatch,
        )
        .then(
          () => undefined,
          (e: unknown) => e as { body?: string },
        );
      expect(JSON.parse(err?.body ?? '{}').message).toContain('spec.updateStrategy.selector');
    } finally {
      await k.custom.deleteClusterCustomObject({
        ...SIDECARSETS,
        name,
      });
    }
  });

  it('injects the KruisePodReady gate into Kruise-owned pods only, never in the agent namespace or kube-system', async () => {
    const cs = (await k.custom.createNamespacedCustomObject({
      ...CLONESETS,
      namespace: ns,
      body: cloneSet('owner'),
    })) as { metadata: { uid: string } };
    const owned = (name: string) => ({
      ...simplePod(name, 'registry.local/app:v1'),
      metadata: {
        name,
        labels: { app: 'not-owner' },
        ownerReferences: [
          {
            apiVersion: 'apps.kruise.io/v1alpha1',
            kind: 'CloneSet',
            name: 'owner',
            uid: cs.metadata.uid,
            controller: true,
          },
        ],
      },
    });
    const gated = await k.core.createNamespacedPod({ namespace: ns, body: owned('owned'), dryRun: 'All' });
    expect(gated.spec?.readinessGates).toEqual([{ conditionType: 'KruisePodReady' }]);
    const plain = await k.core.createNamespacedPod({
      namespace: ns,
      body: simplePod('plain', 'registry.local/app:v1'),
      dryRun: 'All',
    });
    expect(plain.spec?.readinessGates ?? []).toEqual([]);
    // The agent namespace carries the suite label too; only the exclusion keeps it out.
    const inAgentNs = await k.core.createNamespacedPod({ namespace: agentNs, body: owned('owned'), dryRun: 'All' });
    expect(inAgentNs.spec?.readinessGates ?? []).toEqual([]);
    // kube-system, labelled for this suite for a moment: still excluded.
    await k.core.patchNamespace(
      { name: 'kube-system', body: { metadata: { labels: { [SUITE_LABEL]: suite } } } },
      mergePatch,
    );
    try {
      const sys = await k.core.createNamespacedPod({
        namespace: 'kube-system',
        body: owned(`owned-${suite}`),
        dryRun: 'All',
      });
      expect(sys.spec?.readinessGates ?? []).toEqual([]);
    } finally {
      await k.core.patchNamespace(
        { name: 'kube-system', body: { metadata: { labels: { [SUITE_LABEL]: null } } } },
        mergePatch,
      );
    }
  });

  it('answers a malformed AdmissionReview with HTTP 400 and keeps serving', async () => {
    const post = (body: string) =>
      new Promise<number>((resolve, reject) => {
        const req = https.request(
          { host: '127.0.0.1', port: config.port, path: '/mutate-pod', method: 'POST', rejectUnauthorized: false },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    expect(await post('{not json')).toBe(400);
    expect(await post(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }))).toBe(400);
    expect(await post(JSON.stringify({ kind: 'Pod' }))).toBe(400);
    const pod = await k.core.createNamespacedPod({
      namespace: ns,
      body: simplePod('after-400', 'registry.local/app:v1'),
      dryRun: 'All',
    });
    expect(pod.metadata?.name).toBe('after-400');
  });

  it('refuses pods in covered namespaces with a clear message while the webhook is down; excluded ones are unaffected', async () => {
    await replica.webhook.server.close();
    try {
      const err = await k.core
        .createNamespacedPod({ namespace: ns, body: simplePod('while-down', 'registry.local/app:v1') })
        .then(
          () => undefined,
          (e: unknown) => e as { body?: string },
        );
      expect(err, 'pod creation must fail closed').toBeDefined();
      expect(JSON.parse(err!.body ?? '{}').message).toMatch(/failed calling webhook "mpod.kb.io"/);
      const ok = await k.core.createNamespacedPod({
        namespace: agentNs,
        body: simplePod('agent-pod', 'registry.local/app:v1'),
      });
      expect(ok.metadata?.name).toBe('agent-pod');
    } finally {
      await replica.webhook.server.listen();
    }
  });
});
