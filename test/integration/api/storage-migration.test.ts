/**
 * Our CRDs applied over a cluster whose Kruise objects were stored at v1alpha1 (Flotilla's earlier
 * CRDs; OpenKruise v1.9 upgraded from v1.8 is the same state: storedVersions [v1alpha1, v1beta1]
 * once v1beta1 became the storage version), then the agent's storage migration. Runs on a cluster
 * of its own: storedVersions and the CRDs' versions are cluster-wide. The SidecarSet CRD converts
 * through the run's conversion server (helpers/conversion-server.ts) over TLS.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { startCluster, type Cluster } from '@flotilla/test';
import { CRD_DEFINITIONS, LABEL_SIDECARSET_CUSTOM_VERSION, storageVersionOf } from '@flotilla/api';
import {
  createKubeRest,
  EventRecorder,
  HealthServer,
  kubeEventSink,
  kubeListWatcher,
  Manager,
  PatchType,
  Resources,
  RuntimeMetrics,
  type KubeRest,
} from '../../../agent/src/runtime/index.js';
import { sidecarSetInformer } from '../../../agent/src/kube/sidecarset-informer.js';
import { migrateStorage, promMigrationMetrics } from '../../../agent/src/runtime/storage-migration/migrate.js';
import { loadCrds } from '../helpers/crds.js';
import { eventually } from '../helpers/kube.js';
import { freePort } from '../webhook/support.js';

type Json = Record<string, unknown>;
type Crd = ReturnType<typeof loadCrds>[number];
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const ALPHA = 'apps.kruise.io/v1alpha1';

let own: Cluster;
let rest: KubeRest;

/** Flotilla's CRDs before v1beta1: v1alpha1 only, stored as v1alpha1, no conversion. */
function earlierCrd(crd: Crd): Crd {
  const copy = structuredClone(crd);
  copy.spec.versions = copy.spec.versions.filter((v) => v.name === 'v1alpha1').map((v) => ({ ...v, storage: true }));
  delete copy.spec.conversion;
  return copy;
}

async function apply(crd: Crd): Promise<void> {
  await rest.request({
    method: 'PATCH',
    path: `${CRDS}/${crd.metadata!.name!}`,
    query: { fieldManager: 'flotilla-tests', force: true },
    body: crd,
    contentType: PatchType.apply,
  });
  await eventually(`CRD ${crd.metadata!.name} established`, async () => {
    const got = await rest.request<{ status?: { conditions?: { type: string; status: string }[] } }>({
      method: 'GET',
      path: `${CRDS}/${crd.metadata!.name!}`,
    });
    return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
}

const storedVersions = async (name: string): Promise<string[]> =>
  (await rest.request<{ status: { storedVersions: string[] } }>({ method: 'GET', path: `${CRDS}/${name}` })).status
    .storedVersions;

const objects: Record<string, Json> = {
  sidecarsets: {
    apiVersion: ALPHA,
    kind: 'SidecarSet',
    metadata: { name: 'mesh', labels: { [LABEL_SIDECARSET_CUSTOM_VERSION]: 'v7' } },
    spec: {
      namespace: 'team-a',
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'proxy', image: 'registry.local/proxy:v1' }],
    },
  },
  imagepulljobs: {
    apiVersion: ALPHA,
    kind: 'ImagePullJob',
    metadata: { name: 'warm', namespace: 'default' },
    spec: { image: 'registry.local/app:v1' },
  },
  nodeimages: {
    apiVersion: ALPHA,
    kind: 'NodeImage',
    metadata: { name: 'node-x' },
    spec: { images: { 'registry.local/app': { tags: [{ tag: 'v1', version: 0 }] } } },
  },
};
const objectPath = (version: string, plural: string, o: Json): string => {
  const meta = o.metadata as { name: string; namespace?: string };
  const ns = meta.namespace ? `/namespaces/${meta.namespace}` : '';
  return `/apis/apps.kruise.io/${version}${ns}/${plural}/${meta.name}`;
};

describe('storage migration after our CRDs are applied over v1alpha1-stored objects', () => {
  const registry = new Registry();
  const logger = pino({ level: process.env.FLOTILLA_TEST_LOG ?? 'silent' });
  const resourceVersions: Record<string, string> = {};

  beforeAll(async () => {
    own = await startCluster({ name: 'migrate', nodes: 1 });
    rest = createKubeRest(own.kubeConfig());
    for (const crd of loadCrds()) await apply(earlierCrd(crd));
    for (const [plural, o] of Object.entries(objects)) {
      const created = await rest.request<Json>({
        method: 'POST',
        path: objectPath('v1alpha1', plural, o).replace(/\/[^/]+$/, ''),
        body: o,
      });
      resourceVersions[plural] = (created.metadata as { resourceVersion: string }).resourceVersion;
    }
    for (const crd of loadCrds()) await apply(crd);
  });
  afterAll(async () => {
    await own?.stop();
  });

  const metrics = promMigrationMetrics(registry);
  const deps = () => ({
    rest,
    events: new EventRecorder({
      sink: kubeEventSink(rest),
      component: 'flotilla-agent/storagemigration',
      instance: 'test',
      logger,
    }),
    logger,
    metrics,
    definitions: CRD_DEFINITIONS,
  });

  it('finds the CRDs applied cleanly, listing both stored versions', async () => {
    for (const plural of Object.keys(objects)) {
      expect(await storedVersions(`${plural}.apps.kruise.io`)).toEqual(['v1alpha1', 'v1beta1']);
    }
    expect(await storedVersions('clonesets.apps.kruise.io')).toEqual(['v1alpha1']);
  });

  it('an unreachable conversion webhook fails SidecarSet reads only; readiness names the kind', async () => {
    const sidecarSets = loadCrds().find((c) => c.spec.names.plural === 'sidecarsets')!;
    const broken = structuredClone(sidecarSets);
    broken.spec.conversion!.webhook!.clientConfig!.url = `https://127.0.0.1:${await freePort()}/convert`;
    await apply(broken);
    const health = new HealthServer({ port: 0, host: '127.0.0.1', registry: new Registry(), logger });
    const manager = new Manager({
      logger,
      metrics: new RuntimeMetrics(new Registry()),
      listWatcherFor: (resource, options) => kubeListWatcher(own.kubeConfig(), rest, resource, options),
      health,
    });
    const ss = sidecarSetInformer(manager);
    const jobs = manager.informer({ resource: Resources.imagePullJobs });
    const running = manager.start().catch(() => undefined);
    try {
      const readyz = async (): Promise<string> => {
        const res = await fetch(`http://127.0.0.1:${manager.healthPort()}/readyz?verbose`);
        return `${res.status} ${await res.text()}`;
      };
      // SidecarSets stored at v1alpha1 are read at v1beta1: the apiserver must call the webhook.
      const failing = await eventually('readiness naming SidecarSet', async () => {
        const body = await readyz();
        return body.includes('[-]conversion failed: cannot read SidecarSet (its conversion webhook failed:') && body;
      });
      expect(failing).toMatch(/^503 /);
      expect(failing).toContain('connection refused');
      // Other kinds still read, ImagePullJobs (stored at v1alpha1 too, converted without a webhook) among them.
      await eventually('ImagePullJobs read', () =>
        Promise.resolve(jobs.hasSynced() && jobs.get('default', 'warm') !== undefined),
      );
      expect(ss.hasSynced()).toBe(false);
      // The webhook answers again: SidecarSets read and the check passes.
      await apply(sidecarSets);
      await eventually('SidecarSets read', () => Promise.resolve(ss.hasSynced()), 60_000);
      expect(ss.list().map((o) => o.metadata?.name)).toEqual(['mesh']);
      expect(await readyz()).toContain('[+]conversion ok');
    } finally {
      await manager.stop('test done');
      await running;
    }
  });

  it('rewrites every object at v1beta1, trims storedVersions, and leaves an event and counts per kind', async () => {
    const d = deps();
    expect(await migrateStorage(d)).toBe(true);
    for (const plural of Object.keys(objects)) {
      expect(await storedVersions(`${plural}.apps.kruise.io`)).toEqual(['v1beta1']);
      const now = await rest.request<Json>({ method: 'GET', path: objectPath('v1beta1', plural, objects[plural]!) });
      expect(Number((now.metadata as { resourceVersion: string }).resourceVersion)).toBeGreaterThan(
        Number(resourceVersions[plural]),
      );
    }
    expect(await storedVersions('clonesets.apps.kruise.io')).toEqual(['v1alpha1']);
    const metrics = await registry.metrics();
    expect(metrics).toContain(
      'flotilla_storage_migration_objects_total{crd="sidecarsets.apps.kruise.io",result="migrated"} 1',
    );
    expect(metrics).toContain('flotilla_storage_migration_pending_versions{crd="sidecarsets.apps.kruise.io"} 0');
    await eventually('migration events', async () => {
      const events = await rest.request<{ items: { reason: string; involvedObject: { name: string } }[] }>({
        method: 'GET',
        path: '/api/v1/events',
        query: { fieldSelector: 'reason=StorageVersionMigrated' },
      });
      const names = events.items.map((e) => e.involvedObject.name).sort();
      // One per CRD stored at v1beta1 (earlierCrd stored every one at v1alpha1), objects or not.
      const migrated = CRD_DEFINITIONS.filter((d) => storageVersionOf(d) !== 'v1alpha1').length;
      return names.length === migrated ? names : undefined;
    });
  });

  it('keeps every object as it was written, at both versions', async () => {
    const alpha = await rest.request<Json>({
      method: 'GET',
      path: objectPath('v1alpha1', 'sidecarsets', objects.sidecarsets!),
    });
    expect((alpha.spec as Json).namespace).toBe('team-a');
    expect((alpha.metadata as { labels: Record<string, string> }).labels[LABEL_SIDECARSET_CUSTOM_VERSION]).toBe('v7');
    const beta = await rest.request<Json>({
      method: 'GET',
      path: objectPath('v1beta1', 'sidecarsets', objects.sidecarsets!),
    });
    expect((beta.spec as Json).customVersion).toBe('v7');
  });

  it('stored nothing at v1alpha1 any more: a CRD without v1alpha1 still reads every object', async () => {
    const onlyBeta = (crd: Crd): Crd => {
      const copy = structuredClone(crd);
      copy.spec.versions = copy.spec.versions.filter((v) => v.name === 'v1beta1');
      return copy;
    };
    const crds = loadCrds().filter((c) => Object.keys(objects).includes(c.spec.names.plural));
    for (const crd of crds) await apply(onlyBeta(crd));
    for (const [plural, o] of Object.entries(objects)) {
      await expect(rest.request({ method: 'GET', path: objectPath('v1beta1', plural, o) })).resolves.toBeTruthy();
    }
    for (const crd of crds) await apply(crd);
  });

  it('is safe to repeat: a second pass changes nothing', async () => {
    const before = await registry.metrics();
    expect(await migrateStorage(deps())).toBe(true);
    expect(await registry.metrics()).toBe(before);
  });
});
