/**
 * Deletion protection on a real apiserver calling the agent's webhook over TLS (both
 * ResourcesDeletionProtection and DeletionProtectionForCRDCascadingGate on): the label
 * `policy.kruise.io/delete-protection` refuses or allows deleting Namespaces (with pods, with a
 * Bound PVC, empty), a CRD, a Service, a CloneSet, a Deployment and an Ingress as OpenKruise v1.9
 * decides, with its messages; the counts (pods and PVCs of a namespace, custom resources of a CRD)
 * are read live by the agent's main thread for the admission thread. Then the gates: without DeletionProtectionForCRDCascadingGate a Cascading
 * CRD is refused outright; without ResourcesDeletionProtection nothing is protected (no deletion
 * webhook is registered, a labelled namespace goes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeRest, PatchType, type KubeRest } from '../../../agent/src/runtime/index.js';
import { cluster } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { customResource, eventually, kube, simplePod, testNamespace } from '../helpers/kube.js';
import {
  deleteConfigurations,
  freePort,
  startReplica,
  SUITE_LABEL,
  testWebhookConfig,
  type AgentReplica,
} from './support.js';

const k = kube(cluster(0));
const rest: KubeRest = createKubeRest(k.kc);
const suite = `delp-${Math.random().toString(36).slice(2, 7)}`;
const LABEL = 'policy.kruise.io/delete-protection';
const FORBIDDEN = `denied the request: forbidden by ResourcesProtectionDeletion for ${LABEL}=`;
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const group = `${suite}.flotilla-test.io`;
const crdName = `widgets.${group}`;
const INGRESSES = (ns: string): string => `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`;
let replica: AgentReplica;
let config: ReturnType<typeof testWebhookConfig>;
/** Everything labelled here, to unlabel and delete at the end. */
const made: string[] = [];

/** The message of the refusal, or undefined when the deletion went through (or would, with dryRun). */
async function refusal(path: string, dryRun = false): Promise<string | undefined> {
  try {
    await rest.request({ method: 'DELETE', path, discardBody: true, ...(dryRun ? { query: { dryRun: 'All' } } : {}) });
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

async function protectedNamespace(value: string, suiteName = suite): Promise<string> {
  const ns = await testNamespace(k, 'delp', { [SUITE_LABEL]: suiteName, [LABEL]: value });
  made.push(`/api/v1/namespaces/${ns}`);
  return ns;
}

/** A CRD of `group` labelled `value`, with one version serving anything. */
async function createCrd(group: string, value: string, suiteName = suite): Promise<string> {
  const name = `widgets.${group}`;
  await rest.request({
    method: 'POST',
    path: CRDS,
    body: {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name, labels: { [SUITE_LABEL]: suiteName, [LABEL]: value } },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    },
  });
  made.push(`${CRDS}/${name}`);
  return name;
}

const unlabel = (path: string): Promise<unknown> =>
  rest.request({
    method: 'PATCH',
    path,
    body: { metadata: { labels: { [LABEL]: null } } },
    contentType: PatchType.merge,
  });

// After every suite of the file: what they labelled, unlabelled and deleted.
afterAll(async () => {
  for (const path of made.reverse()) {
    await unlabel(path).catch(() => undefined);
    await rest.request({ method: 'DELETE', path, discardBody: true }).catch(() => undefined);
  }
});

describe('deletion protection', () => {
  beforeAll(async () => {
    await installCrds(k);
    const agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
    config = {
      ...testWebhookConfig(suite, agentNs, await freePort()),
      resourcesDeletionProtection: true,
      crdCascadingDeletionProtection: true,
    };
    replica = await startReplica(k, config);
    // The configuration takes effect asynchronously: wait until a dry-run deletion is refused.
    const probe = await protectedNamespace('Always');
    await eventually('the namespace webhook refusing', () => refusal(`/api/v1/namespaces/${probe}`, true));
  });
  afterAll(async () => {
    await deleteConfigurations(k, config);
    await replica?.stop();
  });

  it('Namespaces: Cascading refuses one with an active pod and allows an empty one; Always refuses', async () => {
    const busy = await protectedNamespace('Cascading');
    await k.core.createNamespacedPod({ namespace: busy, body: simplePod('app', 'registry.local/app:v1') });
    const message = await refusal(`/api/v1/namespaces/${busy}`);
    expect(message).toContain(`admission webhook "vnamespace.kb.io" ${FORBIDDEN}Cascading and active pods 1>0`);
    expect(message).toContain('403');

    const always = await protectedNamespace('Always');
    expect(await refusal(`/api/v1/namespaces/${always}`)).toContain(`${FORBIDDEN}Always`);

    const empty = await protectedNamespace('Cascading');
    expect(await refusal(`/api/v1/namespaces/${empty}`)).toBeUndefined();
    // A value OpenKruise does not know protects nothing (the values are case-sensitive).
    const unknown = await protectedNamespace('always');
    expect(await refusal(`/api/v1/namespaces/${unknown}`)).toBeUndefined();
  });

  it('a namespace under Cascading with a Bound PVC (no pods) is refused', async () => {
    const ns = await protectedNamespace('Cascading');
    const pv = `pv-${ns}`;
    await k.core.createPersistentVolume({
      body: {
        metadata: { name: pv, labels: { [SUITE_LABEL]: suite } },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'manual',
          hostPath: { path: `/tmp/${pv}` },
        },
      },
    });
    made.push(`/api/v1/persistentvolumes/${pv}`);
    await k.core.createNamespacedPersistentVolumeClaim({
      namespace: ns,
      body: {
        metadata: { name: 'data' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'manual',
          volumeName: pv,
          resources: { requests: { storage: '1Gi' } },
        },
      },
    });
    // kube-controller-manager's binder binds the claim to the volume it names.
    await eventually('the claim Bound', async () => {
      const pvc = await k.core.readNamespacedPersistentVolumeClaim({ namespace: ns, name: 'data' });
      return pvc.status?.phase === 'Bound';
    });
    expect(await refusal(`/api/v1/namespaces/${ns}`)).toContain(
      `admission webhook "vnamespace.kb.io" ${FORBIDDEN}Cascading and "Bound" status pvc 1>0`,
    );
  });

  it('a CRD under Cascading is refused while it has custom resources', async () => {
    await createCrd(group, 'Cascading');
    const ns = await protectedNamespace('Never');
    const widget = `/apis/${group}/v1/namespaces/${ns}/widgets`;
    await eventually('the Widget kind served', async () =>
      rest.request({
        method: 'POST',
        path: widget,
        body: { apiVersion: `${group}/v1`, kind: 'Widget', metadata: { name: 'w' } },
      }),
    );
    expect(await refusal(`${CRDS}/${crdName}`)).toContain(
      `admission webhook "vcustomresourcedefinition.kb.io" ${FORBIDDEN}Cascading and active CRs 1>0`,
    );
    await rest.request({ method: 'DELETE', path: `${widget}/w`, discardBody: true });
    expect(await refusal(`${CRDS}/${crdName}`)).toBeUndefined();
  });

  it('a Service under Always is refused, under Cascading allowed; a CloneSet with replicas under Cascading refused', async () => {
    const ns = await protectedNamespace('Never');
    const service = (name: string, value: string) => ({
      metadata: { name, labels: { [LABEL]: value } },
      spec: { ports: [{ port: 80 }] },
    });
    await k.core.createNamespacedService({ namespace: ns, body: service('always', 'Always') });
    await k.core.createNamespacedService({ namespace: ns, body: service('cascading', 'Cascading') });
    made.push(`/api/v1/namespaces/${ns}/services/always`);
    expect(await refusal(`/api/v1/namespaces/${ns}/services/always`)).toContain(
      `admission webhook "vservice.kb.io" ${FORBIDDEN}Always`,
    );
    expect(await refusal(`/api/v1/namespaces/${ns}/services/cascading`)).toBeUndefined();

    const { group: g, version, plural } = customResource('CloneSet');
    const path = `/apis/${g}/${version}/namespaces/${ns}/${plural}/web`;
    await k.custom.createNamespacedCustomObject({
      group: g,
      version,
      plural,
      namespace: ns,
      body: {
        apiVersion: `${g}/${version}`,
        kind: 'CloneSet',
        metadata: { name: 'web', labels: { [LABEL]: 'Cascading' } },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] },
          },
        },
      },
    });
    made.push(path);
    expect(await refusal(path)).toContain(`admission webhook "vcloneset.kb.io" ${FORBIDDEN}Cascading and replicas 2>0`);
    await rest.request({ method: 'PATCH', path, body: { spec: { replicas: 0 } }, contentType: PatchType.merge });
    expect(await refusal(path)).toBeUndefined();
  });

  it('a Deployment with replicas under Cascading is refused until scaled to 0; an Ingress under Always refused', async () => {
    const ns = await protectedNamespace('Never');
    const deployment = `/apis/apps/v1/namespaces/${ns}/deployments/api`;
    await k.apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: 'api', labels: { [LABEL]: 'Cascading' } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'api' } },
          template: {
            metadata: { labels: { app: 'api' } },
            spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] },
          },
        },
      },
    });
    made.push(deployment);
    expect(await refusal(deployment)).toContain(
      `admission webhook "vbuiltindeployment.kb.io" ${FORBIDDEN}Cascading and replicas 1>0`,
    );
    await rest.request({
      method: 'PATCH',
      path: deployment,
      body: { spec: { replicas: 0 } },
      contentType: PatchType.merge,
    });
    expect(await refusal(deployment)).toBeUndefined();

    await rest.request({
      method: 'POST',
      path: INGRESSES(ns),
      body: {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'web', labels: { [LABEL]: 'Always' } },
        spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } },
      },
    });
    made.push(`${INGRESSES(ns)}/web`);
    expect(await refusal(`${INGRESSES(ns)}/web`)).toContain(`admission webhook "vingress.kb.io" ${FORBIDDEN}Always`);
  });
});

describe.each([
  { gate: 'DeletionProtectionForCRDCascadingGate', protection: true },
  { gate: 'ResourcesDeletionProtection', protection: false },
])('deletion protection without $gate', ({ gate, protection }) => {
  const offSuite = `delg-${Math.random().toString(36).slice(2, 7)}`;
  let offReplica: AgentReplica;
  let offConfig: ReturnType<typeof testWebhookConfig>;
  beforeAll(async () => {
    const agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: offSuite });
    offConfig = {
      ...testWebhookConfig(offSuite, agentNs, await freePort()),
      resourcesDeletionProtection: protection,
      crdCascadingDeletionProtection: false,
    };
    offReplica = await startReplica(k, offConfig, `replica-${offSuite}`);
  });
  afterAll(async () => {
    await deleteConfigurations(k, offConfig);
    await offReplica?.stop();
  });

  it(protection ? 'refuses a Cascading CRD outright, custom resources or not' : 'protects nothing', async () => {
    const crd = await createCrd(`${offSuite}.flotilla-test.io`, protection ? 'Cascading' : 'Always', offSuite);
    if (protection) {
      const message = await eventually('the CRD webhook refusing', () => refusal(`${CRDS}/${crd}`, true));
      expect(message).toContain(
        `admission webhook "vcustomresourcedefinition.kb.io" ${FORBIDDEN}Cascading and feature-gate ${gate} is not enabled`,
      );
      return;
    }
    // The configuration exists (the replica is ready) and has no deletion webhook at all.
    const configuration = await k.admission.readValidatingWebhookConfiguration({
      name: offConfig.validatingConfigurationName,
    });
    const names = (configuration.webhooks ?? []).map((w) => w.name);
    expect(names).toContain('vcloneset.kb.io');
    expect(names.filter((n) => /^v(namespace|customresourcedefinition|service|ingress|builtin)/.test(n))).toEqual([]);
    expect(await refusal(`${CRDS}/${crd}`)).toBeUndefined();
    const ns = await protectedNamespace('Always', offSuite);
    expect(await refusal(`/api/v1/namespaces/${ns}`)).toBeUndefined();
  });
});
