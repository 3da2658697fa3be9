/**
 * The hub link's KubeApplier against a real apiserver: server-side apply under its field manager
 * with force, reads and deletes that treat a missing object as absent, the managed-object listing
 * by label, namespaced and cluster-scoped kinds.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKubeApplier, FIELD_MANAGER, type KubeApplier, type KubeObject } from '@flotilla/agent';
import { createKubeRest, PatchType, resourcePath, Resources, type KubeRestClient } from '@flotilla/agent/runtime';
import { KRUISE_API_VERSION, MANAGED_BY_HUB, MANAGED_BY_LABEL } from '@flotilla/api';
import { cluster } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { kube, testNamespace } from '../helpers/kube.js';

const k = kube(cluster(0));
const suffix = Math.random().toString(36).slice(2, 7);
const managed = { [MANAGED_BY_LABEL]: MANAGED_BY_HUB };
let rest: KubeRestClient;
let applier: KubeApplier;
let ns = '';

const cloneSet = (name: string, replicas: number, labels: Record<string, string> = managed): KubeObject => ({
  apiVersion: KRUISE_API_VERSION,
  kind: 'CloneSet',
  metadata: { name, namespace: ns, labels },
  spec: {
    replicas,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'app:v1' }] } },
  },
});

interface Managed {
  metadata: { managedFields?: { manager: string; operation: string }[] };
  spec: { replicas: number };
}

beforeAll(async () => {
  await installCrds(k);
  ns = await testNamespace(k, 'applier');
  rest = createKubeRest(k.kc);
  applier = createKubeApplier(rest);
});

afterAll(async () => {
  rest?.close();
  await k.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

describe('KubeApplier', () => {
  it('applies a namespaced kind under its field manager and reads it back', async () => {
    const ref = { kind: 'CloneSet' as const, namespace: ns, name: 'web' };
    const applied = (await applier.apply(ref, cloneSet('web', 2))) as Managed;
    expect(applied.spec.replicas).toBe(2);
    expect(applied.metadata.managedFields).toContainEqual(
      expect.objectContaining({ manager: FIELD_MANAGER, operation: 'Apply' }),
    );
    expect(((await applier.get(ref)) as Managed | undefined)?.spec.replicas).toBe(2);
  });

  it('takes over fields another manager applied (force)', async () => {
    const ref = { kind: 'CloneSet' as const, namespace: ns, name: 'contested' };
    await applier.apply(ref, cloneSet('contested', 1));
    await rest.request({
      method: 'PATCH',
      path: resourcePath(Resources.cloneSets, ns, 'contested'),
      query: { fieldManager: 'someone-else', force: true },
      contentType: PatchType.apply,
      body: {
        apiVersion: KRUISE_API_VERSION,
        kind: 'CloneSet',
        metadata: { name: 'contested' },
        spec: { replicas: 5 },
      },
    });
    const reapplied = (await applier.apply(ref, cloneSet('contested', 3))) as Managed;
    expect(reapplied.spec.replicas).toBe(3);
  });

  it('applies, lists and deletes a cluster-scoped kind', async () => {
    const name = `applier-${suffix}`;
    const ref = { kind: 'SidecarSet' as const, namespace: '', name };
    await applier.apply(ref, {
      apiVersion: KRUISE_API_VERSION,
      kind: 'SidecarSet',
      metadata: { name, labels: managed },
      spec: { selector: { matchLabels: { app: `none-${suffix}` } }, containers: [{ name: 'sc', image: 'sc:v1' }] },
    });
    try {
      expect((await applier.listManaged('SidecarSet')).map((o) => o.metadata?.name)).toContain(name);
      expect((await applier.get(ref))?.metadata?.name).toBe(name);
    } finally {
      await applier.delete(ref);
    }
    expect(await applier.get(ref)).toBeUndefined();
  });

  it('lists only objects with the managed-by label, in every namespace', async () => {
    await applier.apply({ kind: 'CloneSet', namespace: ns, name: 'mine' }, cloneSet('mine', 1));
    await applier.apply({ kind: 'CloneSet', namespace: ns, name: 'theirs' }, cloneSet('theirs', 1, { app: 'x' }));
    const names = (await applier.listManaged('CloneSet'))
      .filter((o) => o.metadata?.namespace === ns)
      .map((o) => o.metadata?.name);
    expect(names).toContain('mine');
    expect(names).not.toContain('theirs');
  });

  it('treats a missing object as absent on get and delete', async () => {
    const ref = { kind: 'ImagePullJob' as const, namespace: ns, name: 'never-created' };
    expect(await applier.get(ref)).toBeUndefined();
    await expect(applier.delete(ref)).resolves.toBeUndefined();
  });

  it('finds no namespaced object without a namespace, and refuses to apply one, naming the field', async () => {
    const ref = { kind: 'CloneSet' as const, namespace: '', name: 'web' };
    expect(await applier.get(ref)).toBeUndefined();
    await expect(applier.delete(ref)).resolves.toBeUndefined();
    await expect(applier.apply(ref, cloneSet('web', 1))).rejects.toThrow('CloneSet web: namespace is required');
  });

  it('reports the server version', async () => {
    const version = await rest.request<{ gitVersion: string }>({ method: 'GET', path: '/version' });
    expect(await applier.serverVersion()).toBe(version.gitVersion);
    expect(version.gitVersion).toMatch(/^v1\.\d+\.\d+/);
  });
});
