/**
 * Taking over SidecarSet-injected pods from OpenKruise v1.9, on a real apiserver with kwok nodes:
 * the SidecarSet stored at v1beta1 (as v1.9 stores it, hashes annotated by its webhook), its
 * ControllerRevision, its status and two pods carrying the sidecar and the annotations v1.9's
 * injection writes are created with no Flotilla component running. Then an agent replica (webhook
 * and SidecarSet controller) starts: no pod is written (resourceVersions unchanged), no
 * ControllerRevision is added; a new sidecar image then upgrades both pods in place, as
 * OpenKruise would.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import {
  ANNOTATION_SIDECARSET_HASH,
  ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE,
  ANNOTATION_SIDECARSET_INJECTED_LIST,
  defaultSidecarSet,
  sidecarSetHash,
  sidecarSetHashWithoutImage,
  type SidecarSet,
} from '@flotilla/api';
import { newSidecarSetRevision } from '../../../agent/src/controllers/sidecarset/revision.js';
import { createKubeRest, resourcePath, Resources } from '../../../agent/src/runtime/index.js';
import { cluster } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { customResource, eventually, isPodReady, kube, mergePatch, testNamespace } from '../helpers/kube.js';
import {
  deleteConfigurations,
  freePort,
  startReplica,
  SUITE_LABEL,
  testWebhookConfig,
  type AgentReplica,
} from '../webhook/support.js';
import { imageOf } from './support.js';

const k = kube(cluster(0));
const suite = `sstake-${Math.random().toString(36).slice(2, 7)}`;
const name = `mesh-${suite}`;
const BETA = { ...customResource('SidecarSet'), version: 'v1beta1' };
const SC_V1 = 'registry.local/sc:v1';
const SC_V2 = 'registry.local/sc:v2';
const INJECTED_AT = '2026-06-22T08:00:00Z';
let replica: AgentReplica | undefined;
let config: ReturnType<typeof testWebhookConfig> | undefined;

afterAll(async () => {
  await k.custom.deleteClusterCustomObject({ ...BETA, name }).catch(() => undefined);
  if (config) await deleteConfigurations(k, config);
  await replica?.stop();
});

/** The SidecarSet's spec as v1.9's webhook stores it (defaulted), in its v1alpha1 shape. */
function defaulted(): SidecarSet {
  return defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name, labels: { [SUITE_LABEL]: suite } },
    spec: { selector: { matchLabels: { app: 'take' } }, containers: [{ name: 'sc', image: SC_V1 }] },
  });
}

/** Go's json.Marshal of v1.9's per-SidecarSet upgrade spec, as its injection writes it. */
const upgradeSpec = (hash: string, revision: string): string =>
  JSON.stringify({
    [name]: {
      updateTimestamp: INJECTED_AT,
      hash,
      sidecarSetName: name,
      sidecarList: ['sc'],
      controllerRevision: revision,
    },
  });

/** A pod as v1.9's /mutate-pod leaves it: the sidecar before the app container, and its annotations. */
function injectedPod(pod: string, ss: SidecarSet, revision: string): V1Pod {
  return {
    metadata: {
      name: pod,
      labels: { app: 'take' },
      annotations: {
        [ANNOTATION_SIDECARSET_HASH]: upgradeSpec(sidecarSetHash(ss), revision),
        [ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE]: upgradeSpec(sidecarSetHashWithoutImage(ss), revision),
        [ANNOTATION_SIDECARSET_INJECTED_LIST]: name,
      },
    },
    spec: {
      containers: [
        { name: 'sc', image: SC_V1, env: [{ name: 'IS_INJECTED', value: 'true' }], imagePullPolicy: 'IfNotPresent' },
        { name: 'main', image: 'registry.local/app:v1' },
      ],
    },
  };
}

describe('taking over SidecarSet-injected pods OpenKruise v1.9 left', () => {
  it('writes no pod at start, then upgrades the sidecar in place on a new image', async () => {
    await installCrds(k);
    const agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
    const ns = await testNamespace(k, 'sstake', { [SUITE_LABEL]: suite });

    // 1. What OpenKruise v1.9 left: the SidecarSet at v1beta1 storage ...
    const alpha = defaulted();
    const annotations = {
      [ANNOTATION_SIDECARSET_HASH]: sidecarSetHash(alpha),
      [ANNOTATION_SIDECARSET_HASH_WITHOUT_IMAGE]: sidecarSetHashWithoutImage(alpha),
    };
    const created = (await k.custom.createClusterCustomObject({
      ...BETA,
      body: {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'SidecarSet',
        metadata: { ...alpha.metadata, annotations },
        spec: { ...alpha.spec, namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } } },
      },
    })) as SidecarSet;
    const ss = { ...alpha, metadata: { ...alpha.metadata, annotations, uid: created.metadata!.uid } };
    // ... its revision (in the agent's namespace, as v1.9 keeps them in kruise-system) ...
    const revision = newSidecarSetRevision(ss, agentNs, 1, 0);
    await createKubeRest(k.kc).request({
      method: 'POST',
      path: resourcePath(Resources.controllerRevisions, agentNs),
      body: revision,
    });
    const revisionName = revision.metadata.name;
    // ... two injected pods, and the status v1.9 computed for them.
    for (const pod of ['take-0', 'take-1']) {
      await k.core.createNamespacedPod({ namespace: ns, body: injectedPod(pod, ss, revisionName) });
    }
    const pods = async (): Promise<V1Pod[]> =>
      (await k.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=take' })).items;
    await eventually('the injected pods ready', async () => (await pods()).filter(isPodReady).length === 2, 90_000);
    await k.custom.patchClusterCustomObjectStatus(
      {
        ...BETA,
        name,
        body: {
          status: {
            observedGeneration: created.metadata!.generation,
            matchedPods: 2,
            updatedPods: 2,
            readyPods: 2,
            updatedReadyPods: 2,
            latestRevision: revisionName,
            collisionCount: 0,
          },
        },
      },
      mergePatch,
    );
    // kwok's status writes settle first: from here on any new resourceVersion is the agent's.
    await new Promise((r) => setTimeout(r, 2000));
    const versions = Object.fromEntries((await pods()).map((p) => [p.metadata!.uid!, p.metadata!.resourceVersion]));

    // 2. The agent starts: webhook and SidecarSet controller, and reconciles a few times.
    config = testWebhookConfig(suite, agentNs, await freePort());
    replica = await startReplica(k, config, 'replica-a', true);
    await k.custom.patchClusterCustomObject(
      { ...BETA, name, body: { metadata: { annotations: { 'example.com/taken-over': 'true' } } } },
      mergePatch,
    );
    await new Promise((r) => setTimeout(r, 4000));
    const adopted = (await k.custom.getClusterCustomObject({ ...BETA, name })) as SidecarSet & {
      status?: Record<string, unknown>;
    };
    expect(adopted.status).toMatchObject({
      matchedPods: 2,
      updatedPods: 2,
      readyPods: 2,
      latestRevision: revisionName,
    });
    expect(Object.fromEntries((await pods()).map((p) => [p.metadata!.uid!, p.metadata!.resourceVersion]))).toEqual(
      versions,
    );
    const revisionNames = async (): Promise<string[]> =>
      (
        await k.apps.listNamespacedControllerRevision({
          namespace: agentNs,
          labelSelector: `kruise.io/sidecarset-name=${name}`,
        })
      ).items.map((r) => r.metadata!.name!);
    expect(await revisionNames()).toEqual([revisionName]);

    // 3. A new sidecar image (through the agent's webhook) upgrades both pods in place.
    await k.custom.patchClusterCustomObject(
      { ...BETA, name, body: { spec: { containers: [{ ...alpha.spec.containers![0], image: SC_V2 }] } } },
      mergePatch,
    );
    const upgraded = await eventually(
      'both sidecars at v2 and ready',
      async () => {
        const ps = await pods();
        return ps.length === 2 && ps.every((p) => imageOf(p, 'sc') === SC_V2 && isPodReady(p)) && ps;
      },
      90_000,
    );
    expect(upgraded.map((p) => p.metadata!.uid).sort()).toEqual(Object.keys(versions).sort());
    const latest = await eventually('a second revision', async () => {
      const names = await revisionNames();
      return names.length === 2 && names.find((n) => n !== revisionName);
    });
    for (const p of upgraded) {
      expect(imageOf(p, 'main')).toBe('registry.local/app:v1');
      const spec = (JSON.parse(p.metadata!.annotations![ANNOTATION_SIDECARSET_HASH]!) as Record<string, unknown>)[
        name
      ] as { hash: string; controllerRevision: string };
      expect(spec.hash).toBe(
        sidecarSetHash({ spec: { containers: [{ ...alpha.spec.containers![0], image: SC_V2 }] } }),
      );
      expect(spec.controllerRevision).toBe(latest);
    }
  });
});
