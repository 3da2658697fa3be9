/**
 * SidecarSets at both versions on a real apiserver, converted by the agent's conversion webhook
 * over TLS: first the run's conversion server (the one every suite's CRDs call), then an agent
 * replica that points the CRD at itself (publishConversion) and also admits v1beta1 objects.
 */
import https from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANNOTATION_SIDECARSET_V1ALPHA1_PARTS, LABEL_SIDECARSET_CUSTOM_VERSION } from '@flotilla/api';
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

const k = kube(cluster(0));
const suite = `conv-${Math.random().toString(36).slice(2, 7)}`;
const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/sidecarsets.apps.kruise.io';
type Json = Record<string, unknown>;
let rest: KubeRest;

const path = (version: string, name?: string): string =>
  `/apis/apps.kruise.io/${version}/sidecarsets${name ? `/${name}` : ''}`;
const get = (version: string, name: string): Promise<Json> =>
  rest.request<Json>({ method: 'GET', path: path(version, name) });
const create = (version: string, body: Json): Promise<Json> =>
  rest.request<Json>({ method: 'POST', path: path(version), body });

const sidecarSet = (name: string, apiVersion: string, spec: Json, labels: Record<string, string> = {}): Json => ({
  apiVersion,
  kind: 'SidecarSet',
  metadata: { name, labels: { [SUITE_LABEL]: suite, ...labels } },
  spec: {
    selector: { matchLabels: { app: name } },
    containers: [{ name: 'proxy', image: 'registry.local/proxy:v1' }],
    ...spec,
  },
});
const specOf = (o: Json): Json => o.spec as Json;
const labelsOf = (o: Json): Record<string, string> => (o.metadata as { labels?: Record<string, string> }).labels ?? {};
const annotationsOf = (o: Json): Record<string, string> =>
  (o.metadata as { annotations?: Record<string, string> }).annotations ?? {};

describe('SidecarSet served at v1alpha1 and v1beta1', () => {
  beforeAll(async () => {
    rest = createKubeRest(k.kc);
    await installCrds(k);
  });

  it('stores a v1alpha1 object as v1beta1 the way OpenKruise v1.9 maps it, and gives it back unchanged', async () => {
    const name = `${suite}-alpha`;
    await create(
      'v1alpha1',
      sidecarSet(name, 'apps.kruise.io/v1alpha1', { namespace: 'team-a' }, { [LABEL_SIDECARSET_CUSTOM_VERSION]: 'v2' }),
    );
    const beta = await get('v1beta1', name);
    expect(specOf(beta).namespaceSelector).toEqual({ matchLabels: { 'kubernetes.io/metadata.name': 'team-a' } });
    expect(specOf(beta).customVersion).toBe('v2');
    expect(specOf(beta)).not.toHaveProperty('namespace');
    expect(labelsOf(beta)).not.toHaveProperty(LABEL_SIDECARSET_CUSTOM_VERSION);
    expect(annotationsOf(beta)).toHaveProperty(ANNOTATION_SIDECARSET_V1ALPHA1_PARTS);

    const alpha = await get('v1alpha1', name);
    expect(specOf(alpha).namespace).toBe('team-a');
    expect(specOf(alpha)).not.toHaveProperty('namespaceSelector');
    expect(labelsOf(alpha)[LABEL_SIDECARSET_CUSTOM_VERSION]).toBe('v2');
    expect(annotationsOf(alpha)).toEqual({});
    expect((alpha.metadata as Json).resourceVersion).toBe((beta.metadata as Json).resourceVersion);
  });

  it('keeps a v1alpha1 read-modify-write of a v1beta1 object lossless', async () => {
    const name = `${suite}-beta`;
    await create('v1beta1', sidecarSet(name, 'apps.kruise.io/v1beta1', { customVersion: 'canary' }));
    const alpha = await get('v1alpha1', name);
    expect(labelsOf(alpha)[LABEL_SIDECARSET_CUSTOM_VERSION]).toBe('canary');
    const edited = { ...alpha, spec: { ...specOf(alpha), revisionHistoryLimit: 3 } };
    await rest.request({ method: 'PUT', path: path('v1alpha1', name), body: edited });
    const beta = await get('v1beta1', name);
    expect(specOf(beta)).toMatchObject({ customVersion: 'canary', revisionHistoryLimit: 3 });
    expect(labelsOf(beta)).not.toHaveProperty(LABEL_SIDECARSET_CUSTOM_VERSION);
    expect(annotationsOf(beta)).toEqual({});
  });

  it('lists both versions with the same objects', async () => {
    const selector = { labelSelector: `${SUITE_LABEL}=${suite}` };
    const names = async (version: string): Promise<string[]> => {
      const list = await rest.request<{ items: Json[] }>({ method: 'GET', path: path(version), query: selector });
      return list.items.map((o) => String((o.metadata as Json).name)).sort();
    };
    expect(await names('v1alpha1')).toEqual(await names('v1beta1'));
    expect((await names('v1beta1')).length).toBeGreaterThanOrEqual(2);
  });
});

describe("an agent replica's conversion and admission webhooks", () => {
  let replica: AgentReplica;
  let config: ReturnType<typeof testWebhookConfig>;

  beforeAll(async () => {
    rest ??= createKubeRest(k.kc);
    await installCrds(k);
    const agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
    config = { ...testWebhookConfig(suite, agentNs, await freePort()), publishConversion: true };
    replica = await startReplica(k, config);
  });
  afterAll(async () => {
    await replica?.stop();
    // Back to the run's conversion server at once (a stopped replica no longer re-publishes).
    await installCrds(k);
    await deleteConfigurations(k, config);
  });

  it('points the CRD at its /convert with its CA, and the apiserver converts through it over TLS', async () => {
    await eventually('CRD calls the replica', async () => {
      const crd = await rest.request<{ spec: { conversion: { webhook: { clientConfig: { url?: string } } } } }>({
        method: 'GET',
        path: CRD_PATH,
      });
      return crd.spec.conversion.webhook.clientConfig.url === `${config.url}/convert`;
    });
    const name = `${suite}-via-agent`;
    await create('v1alpha1', sidecarSet(name, 'apps.kruise.io/v1alpha1', { namespace: 'team-b' }));
    // Other suites on this cluster install the CRDs too (pointing them back at the run's
    // converter) until the replica publishes itself again: a v1alpha1 read converted by the
    // replica is what counts (its metrics reach the main thread in batches, flushMs later).
    const before = await conversionsServed(replica);
    await eventually('a v1alpha1 read converted by the replica', async () => {
      expect(specOf(await get('v1alpha1', name)).namespace).toBe('team-b');
      return (await conversionsServed(replica)) > before;
    });
  });

  it('defaults and validates v1beta1 SidecarSets at the v1.9 paths', async () => {
    const created = await eventually('defaulted by the replica', async () => {
      const name = `${suite}-adm-${Math.random().toString(36).slice(2, 6)}`;
      const obj = await rest.request<Json>({
        method: 'POST',
        path: path('v1beta1'),
        query: { dryRun: 'All' },
        body: sidecarSet(name, 'apps.kruise.io/v1beta1', { customVersion: 'v1' }),
      });
      return (specOf(obj).updateStrategy as Json | undefined)?.type === 'RollingUpdate' ? obj : undefined;
    });
    expect(specOf(created).customVersion).toBe('v1');
    expect(annotationsOf(created)).toHaveProperty('kruise.io/sidecarset-hash');
    const bad = sidecarSet(`${suite}-bad`, 'apps.kruise.io/v1beta1', {
      updateStrategy: { type: 'RollingUpdate', partition: 1, selector: { matchLabels: { a: 'b' } } },
    });
    const err = await rest.request({ method: 'POST', path: path('v1beta1'), body: bad }).catch((e: unknown) => e);
    expect(String((err as Error).message)).toMatch(/vsidecarset\.kb\.io.*spec\.updateStrategy/s);
  });

  it('fails a malformed ConversionReview naming the field, and answers garbage with 400', async () => {
    const review = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: {
        uid: 'u-1',
        desiredAPIVersion: 'apps.kruise.io/v1beta1',
        objects: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'SidecarSet', metadata: {}, spec: { namespace: [] } }],
      },
    };
    const answer = await post(config.url!, '/convert', JSON.stringify(review));
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({
      response: {
        uid: 'u-1',
        result: {
          status: 'Failure',
          message: 'request.objects[0].spec.namespace: Invalid value: array: must be of type string',
        },
      },
    });
    expect((await post(config.url!, '/convert', 'not json')).status).toBe(400);
    // Still serving.
    expect(
      (await post(config.url!, '/convert', JSON.stringify({ ...review, request: { ...review.request, objects: [] } })))
        .status,
    ).toBe(200);
  });
});

async function conversionsServed(replica: AgentReplica): Promise<number> {
  const text = await replica.registry.metrics();
  const line = text
    .split('\n')
    .find(
      (l) =>
        l.startsWith('flotilla_webhook_admission_duration_seconds_count{') &&
        l.includes('path="/convert"') &&
        l.includes('allowed="true"'),
    );
  return line ? Number(line.split(' ').pop()) : 0;
}

function post(baseUrl: string, urlPath: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      `${baseUrl}${urlPath}`,
      { method: 'POST', rejectUnauthorized: false, headers: { 'Content-Type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
