/**
 * The hub's REST API takes SidecarSet and ImagePullJob templates written at
 * apps.kruise.io/v1beta1 (OpenKruise v1.9) and stores them as v1alpha1, the version it sends;
 * against a real Postgres.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, insertToken, migratedDatabase, restApp, type HubDb, type TestApp } from './fixtures.js';

let hub: HubDb;
let t: TestApp;
let token = '';

beforeAll(async () => {
  hub = await migratedDatabase('flotilla_hub_v1beta1');
  token = await insertToken(hub.pool, 'test-operator', 'operator');
  t = await restApp(hub.db);
});

afterAll(async () => {
  await t?.app.close();
  await hub?.close();
});

const placement = { clusterSelector: { matchLabels: { nothing: 'matches' } } };
const sidecarSpec = {
  selector: { matchLabels: { app: 'web' } },
  // The workload policy wants a SidecarSet kept out of the system namespaces.
  namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'apps' } },
  containers: [{ name: 'proxy', image: 'registry.local/proxy:v1' }],
};
type Problem = { path: string; message: string };
const problems = (body: string): Problem[] => (JSON.parse(body) as { error: { details: Problem[] } }).error.details;

describe('REST workloads at v1beta1', () => {
  it('stores a v1beta1 SidecarSet as v1alpha1: customVersion becomes the custom-version label', async () => {
    const created = await call(t.app, 'POST', '/api/v1/workloads', token, {
      kind: 'SidecarSet',
      name: 'mesh',
      apiVersion: 'apps.kruise.io/v1beta1',
      metadata: { labels: { team: 'net' } },
      spec: { ...sidecarSpec, customVersion: 'v2' },
      placement,
    });
    expect(created.statusCode, created.body).toBe(201);
    const w = created.json<{ metadata: { labels: Record<string, string> }; spec: Record<string, unknown> }>();
    expect(w.metadata.labels).toEqual({ team: 'net', 'apps.kruise.io/sidecarset-custom-version': 'v2' });
    expect(w.spec).not.toHaveProperty('customVersion');
  });

  it('stores a v1beta1 ImagePullJob as it is', async () => {
    const created = await call(t.app, 'POST', '/api/v1/workloads', token, {
      kind: 'ImagePullJob',
      name: 'warm',
      namespace: 'apps',
      apiVersion: 'apps.kruise.io/v1beta1',
      spec: { image: 'registry.local/app:v1' },
      placement,
    });
    expect(created.statusCode, created.body).toBe(201);
  });

  it('refuses what v1beta1 cannot say, naming the field', async () => {
    const cloneSet = await call(t.app, 'POST', '/api/v1/workloads', token, {
      kind: 'CloneSet',
      name: 'web',
      namespace: 'apps',
      apiVersion: 'apps.kruise.io/v1beta1',
      spec: {},
      placement,
    });
    expect(cloneSet.statusCode).toBe(400);
    expect(problems(cloneSet.body).map((p) => p.path)).toEqual(['apiVersion']);

    const namespaced = await call(t.app, 'POST', '/api/v1/workloads', token, {
      kind: 'SidecarSet',
      name: 'mesh-ns',
      apiVersion: 'apps.kruise.io/v1beta1',
      spec: { ...sidecarSpec, namespace: 'apps' },
      placement,
    });
    expect(namespaced.statusCode).toBe(400);
    expect(problems(namespaced.body)).toContainEqual(expect.objectContaining({ path: 'spec.namespace' }));

    const override = await call(t.app, 'POST', '/api/v1/workloads', token, {
      kind: 'SidecarSet',
      name: 'mesh-override',
      apiVersion: 'apps.kruise.io/v1beta1',
      spec: sidecarSpec,
      overrides: { c1: { customVersion: 'v3' } },
      placement,
    });
    expect(override.statusCode).toBe(400);
    expect(problems(override.body).map((p) => p.path)).toEqual(['overrides.c1.customVersion']);
  });
});
