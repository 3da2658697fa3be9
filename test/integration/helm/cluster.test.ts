/**
 * The agent chart on a real control plane (kube-apiserver with RBAC, kwok nodes; images are never
 * pulled, kwok plays the pods): install, upgrade, uninstall; then the agent run with the chart's
 * own ServiceAccount identities through a CloneSet, a SidecarSet and an ImagePullJob, and refused
 * what the chart does not grant.
 *
 * The suite brings its own cluster instead of sharing the run's: it installs cluster-wide
 * failurePolicy Fail webhooks and Helm-managed CRDs (and deletes them), and runs every controller
 * in all namespaces, which would act on the objects of the suites sharing those clusters.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiException,
  ApiextensionsV1Api,
  CoordinationV1Api,
  KubeConfig,
  KubernetesObjectApi,
  type KubernetesObject,
  type V1DaemonSet,
  type V1Deployment,
  type V1Pod,
} from '@kubernetes/client-node';
import {
  freePort,
  pushTinyImage,
  startCluster,
  startContainerd,
  startRegistry,
  type Cluster,
  type Containerd,
  type ManagedProcess,
  type Registry,
} from '@flotilla/test';
import { KruiseResources } from '@flotilla/api';
import { secretCredentialStore } from '../../../agent/src/hublink/secret-store.js';
import { injectCaBundle } from '../../../agent/src/webhook/ca-bundle.js';
import { isKubeStatus } from '../../../agent/src/errors.js';
import { createKubeRest, type KubeRest } from '../../../agent/src/runtime/index.js';
import { eventually, kube, type Kube } from '../helpers/kube.js';
import { chartDir, helm, helmOk, parseManifests, type Manifest } from './chart.js';
import { containerEnv, serviceAccountIdentity, startAgent, waitReady, type Identity } from './identity.js';

const NS = 'flotilla-system';
const RELEASE = 'flotilla-agent';
const KRUISE = '/apis/apps.kruise.io/v1alpha1';
const CRDS = Object.values(KruiseResources).map((r) => `${r.plural}.${r.group}`);

let cluster: Cluster;
let k: Kube;
let rest: KubeRest;
let objects: KubernetesObjectApi;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-helm-'));
  cluster = await startCluster({ name: 'helm', nodes: 3 });
  k = kube({ ...cluster, nodeNames: cluster.nodeNames });
  rest = createKubeRest(k.kc);
  objects = KubernetesObjectApi.makeApiClient(k.kc);
}, 240_000);

afterAll(async () => {
  await cluster?.stop();
  // FLOTILLA_KEEP_ENV keeps the agent's and the daemon's logs, as it keeps the run's.
  if (process.env.FLOTILLA_KEEP_ENV) console.log(`[helm] logs in ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
});

/** helm against the suite's cluster. */
const helmHere = (args: string[], timeoutMs?: number): Promise<string> =>
  helmOk([...args, '--kubeconfig', cluster.kubeconfigPath], {}, timeoutMs);

/** helm install|upgrade of the release, waiting until its workloads are ready. */
const release = (verb: 'install' | 'upgrade', flags: string[]): Promise<string> =>
  helmHere([verb, RELEASE, chartDir, '--namespace', NS, ...flags, '--wait', '--timeout', '3m'], 240_000);

const set = (...pairs: string[]): string[] => pairs.flatMap((p) => ['--set', p]);

async function exists(m: KubernetesObject): Promise<boolean> {
  try {
    await objects.read({
      apiVersion: m.apiVersion!,
      kind: m.kind!,
      metadata: { name: m.metadata!.name!, ...(m.metadata?.namespace ? { namespace: m.metadata.namespace } : {}) },
    });
    return true;
  } catch (err) {
    if (err instanceof ApiException && err.code === 404) return false;
    throw err;
  }
}

/** The release's objects, with the release namespace filled in where the manifest leaves it out. */
async function releaseObjects(): Promise<Manifest[]> {
  return parseManifests(await helmHere(['get', 'manifest', RELEASE, '-n', NS]));
}

async function releasePods(component: string): Promise<V1Pod[]> {
  const list = await k.core.listNamespacedPod({
    namespace: NS,
    labelSelector: `app.kubernetes.io/instance=${RELEASE},app.kubernetes.io/component=${component}`,
  });
  return list.items;
}

interface Observed {
  metadata: { generation: number };
  status?: Record<string, unknown>;
}

/** Waits until the controller observed `generation` of the object at `at` and its status shows `want`. */
function settled(at: string, generation: number, want: Record<string, number>): Promise<Observed> {
  return eventually(
    `${at}: generation ${generation} observed with ${JSON.stringify(want)}`,
    async () => {
      const o = await rest.request<Observed>({ method: 'GET', path: at });
      const s = o.status ?? {};
      const done =
        o.metadata.generation === generation &&
        s.observedGeneration === generation &&
        Object.entries(want).every(([key, v]) => s[key] === v);
      return done && o;
    },
    90_000,
  );
}

/** Deletes the object at `at` and waits until it is gone (finalizers included). */
async function deleteAndWait(at: string): Promise<void> {
  await rest.request({ method: 'DELETE', path: at });
  await eventually(`${at} deleted`, async () => {
    try {
      await rest.request({ method: 'GET', path: at });
      return false;
    } catch (err) {
      return isKubeStatus(err, 404);
    }
  });
}

const mergePatch = (at: string, body: unknown): Promise<unknown> =>
  rest.request({ method: 'PATCH', path: at, contentType: 'application/merge-patch+json', body });

const running = (p: V1Pod): boolean => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp;

describe('helm install, upgrade and uninstall', () => {
  let installed: Manifest[];

  it('refuses bad values at install time, before creating anything', async () => {
    const r = await helm([
      'install',
      RELEASE,
      chartDir,
      '--namespace',
      NS,
      '--create-namespace',
      '--kubeconfig',
      cluster.kubeconfigPath,
      ...set('clusterName=helm', 'manager.replicas=-2', 'featureGates.TurboMode=true'),
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("at '/hub/url': minLength: got 0, want 1");
    expect(r.stderr).toContain("at '/manager/replicas': minimum: got -2, want 0");
    expect(r.stderr).toContain("at '/featureGates': additional properties 'TurboMode' not allowed");
    expect((await helmHere(['list', '--all-namespaces', '--all', '-q'])).trim()).toBe('');
  });

  it('creates every object, and the manager and daemon pods run on the kwok nodes', async () => {
    const out = await release('install', [
      '--create-namespace',
      ...set('clusterName=helm', 'hub.url=https://hub.example.com'),
    ]);
    expect(out).toContain('kubectl -n flotilla-system rollout status deployment/flotilla-agent-manager');
    installed = await releaseObjects();
    expect(installed.length).toBeGreaterThan(20);
    for (const m of installed) expect(await exists(m), `${m.kind}/${m.metadata.name}`).toBe(true);

    const managers = await eventually('2 manager pods running', async () => {
      const pods = (await releasePods('manager')).filter(running);
      return pods.length === 2 && pods;
    });
    const zones = new Map<string, string>();
    for (const n of (await k.core.listNode()).items) {
      zones.set(n.metadata!.name!, n.metadata!.labels!['topology.kubernetes.io/zone']!);
    }
    for (const p of managers) expect(cluster.nodeNames).toContain(p.spec?.nodeName);
    // Spread over zones (ScheduleAnyway still scores for it).
    expect(new Set(managers.map((p) => zones.get(p.spec!.nodeName!))).size).toBe(2);
    const daemons = await eventually('a daemon pod on every node', async () => {
      const pods = (await releasePods('daemon')).filter(running);
      return pods.length === cluster.nodeNames.length && pods;
    });
    expect(daemons.map((p) => p.spec?.nodeName).sort()).toEqual([...cluster.nodeNames].sort());
    // The CRDs are served: the apiserver accepts the kinds.
    for (const group of new Set(Object.values(KruiseResources).map((r) => r.group))) {
      const discovery = await rest.request<{ resources: { name: string }[] }>({
        method: 'GET',
        path: `/apis/${group}/v1alpha1`,
      });
      const plurals = Object.values(KruiseResources)
        .filter((r) => r.group === group)
        .map((r) => r.plural);
      expect(discovery.resources.map((r) => r.name)).toEqual(expect.arrayContaining(plurals));
    }
  });

  it('upgrades to changed values and keeps the CA bundle the agent injected', async () => {
    // What the agent does at start: write its CA into the chart's configurations.
    const ca = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const mutating = {
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      plural: 'mutatingwebhookconfigurations',
      kind: 'MutatingWebhookConfiguration',
      namespaced: false,
    };
    await injectCaBundle(rest, mutating, 'flotilla-agent-mutating', ['mpod.kb.io'], ca);

    await release('upgrade', [
      '--reuse-values',
      ...set(
        'manager.replicas=3',
        'webhook.timeoutSeconds=10',
        'webhook.failurePolicy=Ignore',
        'featureGates.KruiseDaemon=false',
      ),
    ]);
    const d = await k.apps.readNamespacedDeployment({ name: 'flotilla-agent-manager', namespace: NS });
    expect(d.spec?.replicas).toBe(3);
    await eventually('3 manager pods running', async () => (await releasePods('manager')).filter(running).length === 3);
    const cfg = await k.admission.readMutatingWebhookConfiguration({ name: 'flotilla-agent-mutating' });
    for (const w of cfg.webhooks ?? []) {
      expect(w.timeoutSeconds).toBe(10);
      expect(w.failurePolicy).toBe('Ignore');
    }
    expect(cfg.webhooks?.find((w) => w.name === 'mpod.kb.io')?.clientConfig.caBundle).toBe(
      Buffer.from(ca).toString('base64'),
    );
    // The daemon and what only it needed are gone.
    for (const gone of [
      { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'flotilla-agent-daemon', namespace: NS } },
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kruise-daemon-config' } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'flotilla-agent-daemon', namespace: NS } },
    ]) {
      await eventually(`${gone.kind} ${gone.metadata.name} deleted`, async () => !(await exists(gone)));
    }
    await eventually('daemon pods gone', async () => (await releasePods('daemon')).length === 0);
  });

  it('uninstalls everything but the CRDs', async () => {
    const before = await releaseObjects();
    await helmHere(['uninstall', RELEASE, '--namespace', NS, '--wait', '--timeout', '2m'], 180_000);
    for (const m of [...installed, ...before]) {
      const kept = m.kind === 'CustomResourceDefinition';
      await eventually(
        `${m.kind}/${m.metadata.name} ${kept ? 'kept' : 'deleted'}`,
        async () => (await exists(m)) === kept,
      );
    }
    await eventually('manager pods gone', async () => (await releasePods('manager')).length === 0);
    const extensions = k.kc.makeApiClient(ApiextensionsV1Api);
    for (const crd of CRDS) {
      const kept = await extensions.readCustomResourceDefinition({ name: crd });
      expect(kept.metadata?.annotations?.['helm.sh/resource-policy']).toBe('keep');
    }
  });
});

describe("RBAC: the agent with the chart's ServiceAccounts", () => {
  const webhookPort = { value: 0 };
  const healthPort = { value: 0 };
  let appNs: string;
  let pullNs: string;
  let otherNs: string;
  let registry: Registry;
  let containerd: Containerd;
  let manager: Identity;
  let daemon: Identity;
  let agentProc: ManagedProcess;
  let standby: ManagedProcess;
  let daemonProc: ManagedProcess;
  const auth = { username: 'puller', password: 'pw-helm-rbac' };

  beforeAll(async () => {
    const suffix = Math.random().toString(36).slice(2, 7);
    [appNs, pullNs, otherNs] = [`app-${suffix}`, `pull-${suffix}`, `other-${suffix}`];
    for (const name of [appNs, pullNs, otherNs]) await k.core.createNamespace({ body: { metadata: { name } } });
    await k.core.createNamespacedSecret({
      namespace: otherNs,
      body: { metadata: { name: 'not-yours' }, stringData: { password: 'x' } },
    });
    webhookPort.value = await freePort();
    healthPort.value = await freePort();
    // Reinstalled under the same release name: the CRDs kept by the uninstall above are adopted.
    // The agent runs outside the cluster, so the apiserver calls its webhook by URL.
    await release('install', [
      ...set(
        'clusterName=rbac',
        'hub.enabled=false',
        `webhook.url=https://127.0.0.1:${webhookPort.value}`,
        `webhook.port=${webhookPort.value}`,
        `manager.healthPort=${healthPort.value}`,
        `imagePullJob.pullSecretNamespaces={${pullNs}}`,
      ),
    ]);
    manager = await serviceAccountIdentity(k, cluster.server, cluster.caPem, NS, 'flotilla-agent-manager', dir);
    daemon = await serviceAccountIdentity(k, cluster.server, cluster.caPem, NS, 'flotilla-agent-daemon', dir);

    const deployment: V1Deployment = await k.apps.readNamespacedDeployment({
      name: 'flotilla-agent-manager',
      namespace: NS,
    });
    const mc = deployment.spec!.template.spec!.containers[0]!;
    agentProc = startAgent(
      'agent-manager (chart identity)',
      [...mc.args!, '--health-host=127.0.0.1', '--log-level=debug'],
      { ...containerEnv(mc, { name: 'rbac-manager-0', namespace: NS }), KUBECONFIG: manager.kubeconfigPath },
      path.join(dir, 'manager.log'),
    );

    registry = await startRegistry({ dir: path.join(dir, 'registry'), name: 'registry-helm', auth });
    containerd = await startContainerd({ name: 'containerd-helm', registries: [registry.host] });
    const ds: V1DaemonSet = await k.apps.readNamespacedDaemonSet({ name: 'flotilla-agent-daemon', namespace: NS });
    const dc = ds.spec!.template.spec!.containers[0]!;
    const node = cluster.nodeNames[0]!;
    const daemonHealth = await freePort();
    // The DaemonSet's arguments, with the CRI socket and health port of this test's containerd.
    const daemonArgs = dc.args!.map((a) =>
      a.startsWith('--run-dir=')
        ? `--socket-file=${containerd.socket}`
        : a.startsWith('--health-port=')
          ? `--health-port=${daemonHealth}`
          : a.replace('$(NODE_NAME)', node),
    );
    daemonProc = startAgent(
      'agent-daemon (chart identity)',
      [...daemonArgs, '--health-host=127.0.0.1', '--log-level=debug'],
      { ...containerEnv(dc, { name: 'rbac-daemon-0', namespace: NS, node }), KUBECONFIG: daemon.kubeconfigPath },
      path.join(dir, 'daemon.log'),
    );
    await Promise.all([waitReady(agentProc, healthPort.value), waitReady(daemonProc, daemonHealth)]);
  }, 300_000);

  afterAll(async () => {
    await agentProc?.stop();
    await standby?.stop();
    await daemonProc?.stop();
    await containerd?.stop();
    await registry?.stop();
  });

  it("injected its CA bundle into the chart's webhook configurations", async () => {
    const cfg = await k.admission.readValidatingWebhookConfiguration({ name: 'flotilla-agent-validating' });
    for (const w of cfg.webhooks ?? []) expect(w.clientConfig.caBundle, w.name).toBeTruthy();
  });

  it('completes a CloneSet: created through the webhook, scaled, updated', async () => {
    const path = `${KRUISE}/namespaces/${appNs}/clonesets`;
    const template = (image: string) => ({
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'main', image }] },
    });
    const created = await rest.request<{ spec: { updateStrategy?: { type?: string } } }>({
      method: 'POST',
      path,
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: 'web', namespace: appNs },
        spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: template('registry.local/web:v1') },
      },
    });
    // Defaulted by the agent's mutating webhook, reached through the chart's configuration.
    expect(created.spec.updateStrategy?.type).toBe('ReCreate');
    await settled(`${path}/web`, 1, { readyReplicas: 2, updatedReadyReplicas: 2 });
    await mergePatch(`${path}/web`, { spec: { template: template('registry.local/web:v2') } });
    await settled(`${path}/web`, 2, { readyReplicas: 2, updatedReadyReplicas: 2 });
    const pods = await k.core.listNamespacedPod({ namespace: appNs, labelSelector: 'app=web' });
    expect(pods.items.filter(running).map((p) => p.spec?.containers[0]?.image)).toEqual([
      'registry.local/web:v2',
      'registry.local/web:v2',
    ]);
  });

  it('completes a SidecarSet: injects a sidecar through the pod webhook and upgrades it in place', async () => {
    const name = `sc-${appNs}`;
    const sidecarSet = (image: string) => ({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'SidecarSet',
      metadata: { name },
      spec: {
        namespace: appNs,
        selector: { matchLabels: { app: 'with-sidecar' } },
        containers: [{ name: 'sidecar', image }],
      },
    });
    await rest.request({
      method: 'POST',
      path: `${KRUISE}/sidecarsets`,
      body: sidecarSet('registry.local/sidecar:v1'),
    });
    // The webhook's cache must hold the SidecarSet before a pod is admitted with it.
    const pod = await eventually('pod created with the sidecar', async () => {
      const created = await k.core.createNamespacedPod({
        namespace: appNs,
        body: {
          metadata: { generateName: 'with-sidecar-', labels: { app: 'with-sidecar' } },
          spec: { containers: [{ name: 'main', image: 'registry.local/app:v1' }] },
        },
      });
      if (created.spec?.containers.some((c) => c.name === 'sidecar')) return created;
      await k.core.deleteNamespacedPod({ name: created.metadata!.name!, namespace: appNs });
      return undefined;
    });
    const at = `${KRUISE}/sidecarsets/${name}`;
    await settled(at, 1, { matchedPods: 1, updatedPods: 1 });
    await mergePatch(at, { spec: { containers: [{ name: 'sidecar', image: 'registry.local/sidecar:v2' }] } });
    await settled(at, 2, { matchedPods: 1, updatedPods: 1 });
    const upgraded = await k.core.readNamespacedPod({ name: pod.metadata!.name!, namespace: appNs });
    expect(upgraded.metadata?.uid).toBe(pod.metadata?.uid);
    expect(upgraded.spec?.containers.find((c) => c.name === 'sidecar')?.image).toBe('registry.local/sidecar:v2');
    await rest.request({ method: 'DELETE', path: `${KRUISE}/sidecarsets/${name}` });
  });

  it('completes an ImagePullJob with a pull secret from a granted namespace, through the daemon', async () => {
    const img = await pushTinyImage(registry, { repository: 'helm/tiny', tag: 'v1', files: { 'hello.txt': 'rbac' } });
    const config = {
      auths: { [registry.host]: { auth: Buffer.from(`${auth.username}:${auth.password}`).toString('base64') } },
    };
    await k.core.createNamespacedSecret({
      namespace: pullNs,
      body: {
        metadata: { name: 'registry-auth' },
        type: 'kubernetes.io/dockerconfigjson',
        data: { '.dockerconfigjson': Buffer.from(JSON.stringify(config)).toString('base64') },
      },
    });
    const node = cluster.nodeNames[0]!;
    // The agent makes each node's NodeImage once it sees the node; a job created before that
    // selects no NodeImage and completes at once with nothing to pull (as in OpenKruise).
    await eventually('the NodeImage of the node exists', async () => {
      const res = await rest
        .request({ method: 'GET', path: `${KRUISE}/nodeimages/${node}` })
        .then(() => true)
        .catch((err: { status?: number }) => (err.status === 404 ? false : Promise.reject(err as Error)));
      return res;
    });
    const jobPath = `${KRUISE}/namespaces/${pullNs}/imagepulljobs/tiny`;
    await rest.request({
      method: 'POST',
      path: `${KRUISE}/namespaces/${pullNs}/imagepulljobs`,
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ImagePullJob',
        metadata: { name: 'tiny', namespace: pullNs },
        spec: { image: img.ref, selector: { names: [node] }, pullSecrets: ['registry-auth'] },
      },
    });
    type JobJson = { status?: { completionTime?: string; succeeded?: number; failed?: number; message?: string } };
    const job = await eventually(
      'ImagePullJob completed',
      async () => {
        const j = await rest.request<JobJson>({ method: 'GET', path: jobPath });
        return j.status?.completionTime ? j : undefined;
      },
      90_000,
    );
    expect(job.status).toMatchObject({ succeeded: 1, failed: 0 });
    // Completion releases the deletion protection (a finalizer only the agent removes).
    await eventually('protection finalizer released', async () => {
      const j = await rest.request<{ metadata: { finalizers?: string[] } }>({ method: 'GET', path: jobPath });
      return (j.metadata.finalizers ?? []).length === 0;
    });
    // The registry wants the password: the pull worked only through the copied secret.
    expect(await containerd.listImages()).toContain(img.ref);
  });

  it('tells a job outside the granted namespaces why its pull secret is not read', async () => {
    const at = `${KRUISE}/namespaces/${appNs}/imagepulljobs`;
    await rest.request({
      method: 'POST',
      path: at,
      body: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'ImagePullJob',
        metadata: { name: 'elsewhere', namespace: appNs },
        spec: { image: 'registry.local/app:v1', selector: { names: [cluster.nodeNames[1]!] }, pullSecrets: ['creds'] },
      },
    });
    const event = await eventually('PullSecretNotFound event', async () => {
      const list = await k.core.listNamespacedEvent({
        namespace: appNs,
        fieldSelector: 'involvedObject.name=elsewhere',
      });
      return list.items.find((e) => e.reason === 'PullSecretNotFound');
    });
    expect(event.message).toBe(
      `pull secret ${appNs}/creds not readable: the agent reads pull secrets only in namespaces kruise-daemon-config, ${pullNs} (FLOTILLA_IMAGEPULLJOB_SECRET_NAMESPACES, the chart's imagePullJob.pullSecretNamespaces)`,
    );
    // Deleted while the agent runs, which releases its deletion protection.
    await deleteAndWait(`${at}/elsewhere`);
  });

  it('is refused what the chart does not grant', async () => {
    const as = (id: Identity): KubeRest => {
      const kc = new KubeConfig();
      kc.loadFromFile(id.kubeconfigPath);
      return createKubeRest(kc);
    };
    const status = async (
      client: KubeRest,
      method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
      p: string,
      body?: unknown,
    ): Promise<number> => {
      try {
        await client.request({
          method,
          path: p,
          body,
          ...(method === 'PATCH' ? { contentType: 'application/merge-patch+json' } : {}),
        });
        return 200;
      } catch (err) {
        return (err as { status?: number }).status ?? -1;
      }
    };
    const m = as(manager);
    expect(await status(m, 'GET', `/api/v1/namespaces/${otherNs}/secrets/not-yours`)).toBe(403);
    expect(await status(m, 'GET', '/api/v1/secrets')).toBe(403);
    expect(await status(m, 'GET', `/api/v1/namespaces/${otherNs}/secrets`)).toBe(403);
    expect(await status(m, 'GET', `/api/v1/namespaces/${NS}/secrets`)).toBe(403);
    expect(await status(m, 'GET', `/api/v1/namespaces/${NS}/secrets/flotilla-agent-webhook-certs`)).toBe(200);
    expect(await status(m, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions')).toBe(403);
    expect(
      await status(m, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
        metadata: { name: 'escalate' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
        subjects: [{ kind: 'ServiceAccount', name: 'flotilla-agent-manager', namespace: NS }],
      }),
    ).toBe(403);
    expect(
      await status(m, 'POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
        metadata: { name: 'sneaky' },
        webhooks: [],
      }),
    ).toBe(403);
    expect(
      await status(
        m,
        'DELETE',
        '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/flotilla-agent-validating',
      ),
    ).toBe(403);
    expect(await status(m, 'GET', '/api/v1/namespaces/kube-system/configmaps')).toBe(403);
    const d = as(daemon);
    expect(await status(d, 'GET', `/api/v1/namespaces/${pullNs}/secrets/registry-auth`)).toBe(403);
    expect(await status(d, 'GET', '/api/v1/pods')).toBe(403);
    expect(await status(d, 'DELETE', `${KRUISE}/nodeimages/${cluster.nodeNames[0]}`)).toBe(403);
    expect(
      await status(d, 'PATCH', `${KRUISE}/nodeimages/${cluster.nodeNames[0]}`, { metadata: { labels: { x: 'y' } } }),
    ).toBe(403);
  });

  it("keeps the hub link's join state in the one Secret the chart names", async () => {
    // The hub link's own store, with the manager's identity: create, read back, update.
    const kc = new KubeConfig();
    kc.loadFromFile(manager.kubeconfigPath);
    const store = secretCredentialStore(createKubeRest(kc), NS, 'flotilla-agent-join');
    await store.save({ registrationSecret: 'first' });
    await store.save({ registrationSecret: 'second' });
    expect(await store.load()).toEqual({ registrationSecret: 'second' });
    await expect(secretCredentialStore(createKubeRest(kc), NS, 'another-name').load()).rejects.toThrow();
  });

  it('runs a second replica that serves the webhook and waits for the Lease', async () => {
    const deployment = await k.apps.readNamespacedDeployment({ name: 'flotilla-agent-manager', namespace: NS });
    const mc = deployment.spec!.template.spec!.containers[0]!;
    const health = await freePort();
    // Its own ports on this one host (in pods each replica has its own network namespace).
    standby = startAgent(
      'agent-manager replica 2 (chart identity)',
      [...mc.args!, '--health-host=127.0.0.1'],
      {
        ...containerEnv(mc, { name: 'rbac-manager-1', namespace: NS }),
        KUBECONFIG: manager.kubeconfigPath,
        FLOTILLA_HEALTH_PORT: String(health),
        FLOTILLA_WEBHOOK_PORT: String(await freePort()),
      },
      path.join(dir, 'manager-2.log'),
    );
    await waitReady(standby, health);
    const lease = await k.kc
      .makeApiClient(CoordinationV1Api)
      .readNamespacedLease({ name: 'flotilla-agent', namespace: NS });
    expect(lease.spec?.holderIdentity).toBe('rbac-manager-0');
    const metrics = await (await fetch(`http://127.0.0.1:${health}/metrics`)).text();
    expect(metrics).toContain(`flotilla_agent_leader_election_is_leader{lease="${NS}/flotilla-agent"} 0`);
  }, 240_000);

  it('never hit a refusal while doing its work', () => {
    for (const proc of [agentProc, standby, daemonProc]) {
      const log = proc.logTail(100_000);
      expect(log, proc.name).not.toMatch(/forbidden/i);
    }
  });

  it('uninstalls with crds.keep=false: the CRDs go too', async () => {
    await standby.stop();
    // Objects go while the agent still runs: objects with finalizers (an ImagePullJob's deletion
    // protection) would otherwise hold their CRD in deletion after the agent is gone.
    for (const at of [
      `${KRUISE}/namespaces/${appNs}/clonesets/web`,
      `${KRUISE}/namespaces/${pullNs}/imagepulljobs/tiny`,
    ]) {
      await deleteAndWait(at);
    }
    await agentProc.stop();
    await daemonProc.stop();
    await helmHere(
      ['upgrade', RELEASE, chartDir, '--namespace', NS, '--reuse-values', ...set('crds.keep=false')],
      180_000,
    );
    await helmHere(['uninstall', RELEASE, '--namespace', NS, '--wait', '--timeout', '2m'], 180_000);
    for (const name of CRDS) {
      await eventually(
        `CRD ${name} deleted`,
        async () =>
          !(await exists({
            apiVersion: 'apiextensions.k8s.io/v1',
            kind: 'CustomResourceDefinition',
            metadata: { name },
          })),
        60_000,
      );
    }
    expect((await k.admission.listMutatingWebhookConfiguration()).items.map((c) => c.metadata?.name)).not.toContain(
      'flotilla-agent-mutating',
    );
  }, 300_000);
});
