/**
 * The manifest corpus (api/src/kruise/testdata, written the way the OpenKruise v1.9 documentation
 * shows them) against a real apiserver with our CRDs and an agent replica's admission webhooks
 * over TLS, sent as kubectl sends them (strict field validation), as dry runs:
 * - every valid manifest, at both versions and of every kind, is admitted with what it says kept;
 * - every invalid v1beta1 manifest is refused, the message naming the field path it expects.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  KruiseResources,
  LABEL_SIDECARSET_CUSTOM_VERSION,
  LABEL_SIDECARSET_NAME,
  type KruiseKindName,
} from '@flotilla/api';
import { servedVersions } from '../../../agent/src/webhook/registry.js';
import { createKubeRest, type KubeRest } from '../../../agent/src/runtime/index.js';
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
} from './support.js';

const testdata = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../api/src/kruise/testdata');
const k = kube(cluster(0));
const suite = `v19-${Math.random().toString(36).slice(2, 7)}`;

type Json = Record<string, unknown>;
interface Manifest {
  file: string;
  text: string;
  object: { apiVersion: string; kind: KruiseKindName; metadata: Json; spec: Json; status?: unknown };
}

function corpus(dir: 'valid' | 'invalid'): Manifest[] {
  return readdirSync(path.join(testdata, dir))
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .map((file) => {
      const text = readFileSync(path.join(testdata, dir, file), 'utf8');
      return { file, text, object: parse(text) as Manifest['object'] };
    });
}

const valid = corpus('valid');
// A v1beta1 CloneSet is not refused by a webhook but by the apiserver (404: no such version).
const invalidV1beta1 = corpus('invalid').filter(
  (m) => m.object.apiVersion === 'apps.kruise.io/v1beta1' && servedVersions(m.object.kind).includes('v1beta1'),
);

let rest: KubeRest;
let ns: string;
let replica: AgentReplica;
let config: ReturnType<typeof testWebhookConfig>;

/** Cluster-scoped manifests get a suite-unique name. */
const nameIn = (m: Manifest): string =>
  KruiseResources[m.object.kind].namespaced
    ? String(m.object.metadata.name)
    : `${String(m.object.metadata.name)}-${suite}`;

/**
 * A SidecarSet whose injectionStrategy names a revision is only admitted when that revision
 * exists (v1.9's webhook checks it): store one in the agent's namespace as OpenKruise's
 * controller would have, labelled with the SidecarSet's name and custom version.
 */
async function storeNamedRevision(m: Manifest, agentNs: string): Promise<boolean> {
  const injection = m.object.spec.injectionStrategy as
    { revision?: { revisionName?: string; customVersion?: string } } | undefined;
  const named = injection?.revision;
  if (m.object.kind !== 'SidecarSet' || (!named?.revisionName && !named?.customVersion)) return false;
  await rest.request({
    method: 'POST',
    path: `/apis/apps/v1/namespaces/${agentNs}/controllerrevisions`,
    body: {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: {
        name: named.revisionName ?? `${nameIn(m)}-${named.customVersion}`,
        labels: {
          [LABEL_SIDECARSET_NAME]: nameIn(m),
          ...(named.customVersion ? { [LABEL_SIDECARSET_CUSTOM_VERSION]: named.customVersion } : {}),
        },
      },
      data: { spec: { containers: m.object.spec.containers ?? [] } },
      revision: 1,
    },
  });
  return true;
}

/**
 * Sends the manifest as `kubectl create --dry-run=server` would: into the suite's namespace, or
 * for cluster-scoped kinds under a suite-unique name with the suite's label (the webhooks of this
 * replica only see objects carrying it). status is a subresource, so it is left out.
 */
function dryRunCreate(m: Manifest): Promise<Json> {
  const { group, plural, namespaced } = KruiseResources[m.object.kind];
  const version = m.object.apiVersion.split('/')[1]!;
  const metadata: Json = {
    ...m.object.metadata,
    labels: { ...(m.object.metadata.labels as object), [SUITE_LABEL]: suite },
  };
  const body: Json = { ...m.object, metadata };
  delete body.status;
  let collection = `/apis/${group}/${version}/${plural}`;
  if (namespaced) {
    metadata.namespace = ns;
    collection = `/apis/${group}/${version}/namespaces/${ns}/${plural}`;
  } else {
    metadata.name = nameIn(m);
  }
  return rest.request<Json>({
    method: 'POST',
    path: collection,
    query: { dryRun: 'All', fieldValidation: 'Strict' },
    body,
  });
}

/**
 * A ContainerRecreateRequest is only admitted for a running pod that has the containers it names
 * (v1.9's webhook reads them): create that pod in the suite's namespace, on a kwok node, and wait
 * for its container ids.
 */
async function storeNamedPod(m: Manifest): Promise<boolean> {
  if (m.object.kind !== 'ContainerRecreateRequest') return false;
  const name = String(m.object.spec.podName);
  const containers = (m.object.spec.containers as { name: string }[]).map((c) => ({ name: c.name, image: 'x' }));
  await rest.request({
    method: 'POST',
    path: `/api/v1/namespaces/${ns}/pods`,
    body: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: { nodeName: cluster(0).nodeNames[0], containers },
    },
  });
  await eventually(`${m.file}: pod ${name} running with container ids`, async () => {
    const pod = await rest.request<{ status?: { containerStatuses?: { containerID?: string }[] } }>({
      method: 'GET',
      path: `/api/v1/namespaces/${ns}/pods/${name}`,
    });
    const statuses = pod.status?.containerStatuses ?? [];
    return statuses.length === containers.length && statuses.every((c) => Boolean(c.containerID));
  });
  return true;
}

/**
 * The manifest's spec as v1.9's defaults leave it: everything as written, except that a v1alpha1
 * DaemonSet's deprecated Surging becomes Standard (the only rewrite its defaults make).
 */
function specAfterDefaults(m: Manifest): Json {
  const spec = structuredClone(m.object.spec);
  const rolling = (spec.updateStrategy as Json | undefined)?.rollingUpdate as Json | undefined;
  if (m.object.kind === 'DaemonSet' && rolling?.rollingUpdateType === 'Surging') rolling.rollingUpdateType = 'Standard';
  return spec;
}

/** Validating-webhook calls this replica allowed so far. */
async function validationsAllowed(): Promise<number> {
  const text = await replica.registry.metrics();
  return text
    .split('\n')
    .filter(
      (l) =>
        l.startsWith('flotilla_webhook_admission_duration_seconds_count{') &&
        /path="\/validate-(apps|policy)-kruise-io-/.test(l) &&
        l.includes('allowed="true"'),
    )
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

const expectedPaths = (text: string): string[] =>
  [...text.matchAll(/^# expect-path: (.*)$/gm)].map((match) => (match[1] ?? '').trim());

/**
 * The apiserver's schema errors write a map key as `.key` where our validators (and OpenKruise's
 * webhook) write `[key]`: `spec.images.nginx.tags` for `spec.images[nginx].tags`.
 */
const apiserverForm = (path: string): string => path.replace(/\[([^\]]*[^\d\]][^\]]*)\]/g, '.$1');

/**
 * OpenKruise only lets a SidecarSet patch pod annotations its whitelist allows (ConfigMap
 * kruise-configuration in its namespace); a cluster using patchPodMetadata has one.
 */
async function storeWhitelist(agentNs: string): Promise<void> {
  const rules = [{ allowedAnnotationKeyExprs: ['^oom-score$', '^apps\\.kruise\\.io/container-launch-priority$'] }];
  await rest.request({
    method: 'POST',
    path: `/api/v1/namespaces/${agentNs}/configmaps`,
    body: {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: config.whitelistConfigMap },
      data: { SidecarSet_PatchPodMetadata_WhiteList: JSON.stringify({ rules }) },
    },
  });
}

describe('OpenKruise v1.9 manifests on a real apiserver with our CRDs and admission webhook', () => {
  beforeAll(async () => {
    rest = createKubeRest(k.kc);
    await installCrds(k);
    const agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
    ns = await testNamespace(k, 'v19', { [SUITE_LABEL]: suite });
    config = testWebhookConfig(suite, agentNs, await freePort());
    replica = await startReplica(k, config);
    await storeWhitelist(agentNs);
    for (const m of valid) {
      const needsCluster =
        (await storeNamedRevision(m, agentNs)) ||
        (await storeNamedPod(m)) ||
        m.object.spec.patchPodMetadata !== undefined;
      if (!needsCluster) continue;
      await eventually(`${m.file}: its revision or whitelist seen by the replica`, () =>
        dryRunCreate(m).then(
          () => true,
          () => false,
        ),
      );
    }
    // The configurations take effect asynchronously: wait until a probe is defaulted by the replica.
    const probe = valid.find((m) => m.object.kind === 'CloneSet')!;
    await eventually('admission webhook active', async () => {
      const created = await dryRunCreate(probe);
      return (created.spec as { updateStrategy?: { type?: string } }).updateStrategy?.type !== undefined;
    });
  });
  afterAll(async () => {
    await deleteConfigurations(k, config);
    await replica?.stop();
  });

  it('has at least 15 valid manifests covering every kind at both versions', () => {
    expect(valid.length).toBeGreaterThanOrEqual(15);
    const seen = new Set(valid.map((m) => `${m.object.kind} ${m.object.apiVersion}`));
    for (const kind of ['SidecarSet', 'ImagePullJob', 'NodeImage']) {
      expect(seen).toContain(`${kind} apps.kruise.io/v1alpha1`);
      expect(seen).toContain(`${kind} apps.kruise.io/v1beta1`);
    }
    // OpenKruise v1.9.0 serves CloneSet at v1alpha1 only.
    expect(seen).toContain('CloneSet apps.kruise.io/v1alpha1');
  });

  it('admits every valid manifest unchanged through the validating webhook', async () => {
    const before = await validationsAllowed();
    for (const m of valid) {
      const created = await dryRunCreate(m).catch((err: unknown) => {
        throw new Error(`${m.file} refused: ${(err as Error).message}`);
      });
      // Defaults may be added; nothing the manifest says is changed or dropped.
      expect(created.spec, m.file).toMatchObject(specAfterDefaults(m));
    }
    // The admission thread reports its metrics to the main thread periodically.
    await eventually('every manifest counted by the validating webhook', async () => {
      return (await validationsAllowed()) >= before + valid.length;
    });
  });

  it('refuses at least 10 invalid v1beta1 manifests, naming the field path', async () => {
    expect(invalidV1beta1.length).toBeGreaterThanOrEqual(10);
    for (const m of invalidV1beta1) {
      const err = await dryRunCreate(m).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err, `${m.file} was admitted`).toBeInstanceOf(Error);
      for (const field of expectedPaths(m.text)) {
        const named = err!.message.includes(field) || err!.message.includes(apiserverForm(field));
        expect(named, `${m.file}: ${field} not in ${err!.message}`).toBe(true);
      }
    }
  });
});
