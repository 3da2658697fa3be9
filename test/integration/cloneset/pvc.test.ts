/**
 * volumeClaimTemplates: PVCs per pod, created before it, deleted with it on scale-in, reused by a
 * replacement when a pod vanished, and not reused with disablePVCReuse. Our version of
 * OpenKruise's "CloneSet Update with DisablePVCReuse=true". The test clusters have no volume
 * provisioner, so these pods stay Pending; only objects and names are checked.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/kube.js';
import {
  claims,
  cloneSet,
  createCloneSet,
  env,
  livePods,
  namespace,
  patchCloneSet,
  startController,
  type PersistentVolumeClaim,
  type Pod,
  type RunningController,
} from './harness.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';

const e = env();
const running: RunningController[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

const template = (name: string) => ({
  metadata: { name },
  spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
});
const id = (o: Pod | PersistentVolumeClaim): string => o.metadata.labels?.['apps.kruise.io/cloneset-instance-id'] ?? '';
const live = (list: PersistentVolumeClaim[]): PersistentVolumeClaim[] =>
  list.filter((c) => !c.metadata.deletionTimestamp);

async function deletePod(ns: string, name: string): Promise<void> {
  await e.rest.request({ method: 'DELETE', path: resourcePath(Resources.pods, ns, name) });
}

async function podsAndClaims(
  ns: string,
  pods: number,
  pvcs: number,
): Promise<{ pods: Pod[]; claims: PersistentVolumeClaim[] }> {
  return eventually(`${pods} pods and ${pvcs} claims`, async () => {
    const p = await livePods(e, ns, 'web');
    const c = live(await claims(e, ns));
    return p.length === pods && c.length === pvcs && { pods: p, claims: c };
  });
}

describe('CloneSet volumeClaimTemplates', () => {
  it('creates <template>-<cs>-<id> claims per pod, mounts them, and deletes them with the pod on scale-in', async () => {
    const ns = await namespace(e, 'cs-pvc');
    running.push(await startController(e, ns));
    await createCloneSet(e, ns, cloneSet('web', { replicas: 2, volumeClaimTemplates: [template('data')] }));
    const { pods, claims: pvcs } = await podsAndClaims(ns, 2, 2);
    for (const p of pods) {
      expect(p.spec.volumes).toContainEqual({
        name: 'data',
        persistentVolumeClaim: { claimName: `data-web-${id(p)}` },
      });
      const claim = pvcs.find((c) => c.metadata.name === `data-web-${id(p)}`);
      expect(claim?.metadata.labels).toMatchObject({ app: 'web', 'apps.kruise.io/cloneset-instance-id': id(p) });
      expect(claim?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'CloneSet', name: 'web', controller: true });
    }
    await patchCloneSet(e, ns, 'web', { spec: { replicas: 1 } });
    const after = await podsAndClaims(ns, 1, 1);
    expect(after.claims[0]!.metadata.name).toBe(`data-web-${id(after.pods[0]!)}`);
  });

  it('a deleted pod is replaced under the same id with its claims; with disablePVCReuse the replacement gets new ones', async () => {
    const ns = await namespace(e, 'cs-pvcreuse');
    running.push(await startController(e, ns));
    await createCloneSet(
      e,
      ns,
      cloneSet('web', { replicas: 2, volumeClaimTemplates: [template('data'), template('logs')] }),
    );
    const first = await podsAndClaims(ns, 2, 4);
    const claimNames = first.claims.map((c) => c.metadata.name).sort();
    const [a, b] = first.pods;

    await deletePod(ns, a!.metadata.name);
    const reused = await eventually('a replaced with a new uid', async () => {
      const p = (await livePods(e, ns, 'web')).find((x) => x.metadata.name === a!.metadata.name);
      return p && p.metadata.uid !== a!.metadata.uid && p;
    });
    expect(id(reused)).toBe(id(a!));
    expect(
      live(await claims(e, ns))
        .map((c) => c.metadata.name)
        .sort(),
    ).toEqual(claimNames);

    await patchCloneSet(e, ns, 'web', { spec: { scaleStrategy: { disablePVCReuse: true } } });
    await deletePod(ns, b!.metadata.name);
    const fresh = await eventually('b replaced under a new id', async () => {
      const pods = await livePods(e, ns, 'web');
      return (
        pods.length === 2 &&
        !pods.some((p) => id(p) === id(b!)) &&
        pods.find((p) => p.metadata.name !== a!.metadata.name)
      );
    });
    const { claims: now } = await podsAndClaims(ns, 2, 4);
    const names = now.map((c) => c.metadata.name);
    expect(names).toContain(`data-web-${id(fresh)}`);
    expect(names).toContain(`logs-web-${id(fresh)}`);
    expect(names.some((n) => n.endsWith(id(b!)))).toBe(false);
  });
});
