/**
 * Our version of OpenKruise's SidecarSet hot upgrade e2e scenarios (sidecarset_hotupgrade.go):
 * injection of the pair with its version annotations, upgrades that swap the working container
 * -1 → -2 → -1 with the old one back on the empty image, and a failed image that leaves the old
 * sidecar working.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { eventually } from '../helpers/kube.js';
import { imageOf, startSidecarSetSuite, type SidecarSetSuite } from './support.js';

const EMPTY = 'registry.local/empty:v1';
const WORKING = 'kruise.io/sidecarset-working-hotupgrade-container';
const version = (pod: V1Pod, container: string): string | undefined =>
  pod.metadata?.annotations?.[`version.sidecarset.kruise.io/${container}`];
const versionAlt = (pod: V1Pod, container: string): string | undefined =>
  pod.metadata?.annotations?.[`versionalt.sidecarset.kruise.io/${container}`];
const pair = (pod: V1Pod): [string | undefined, string | undefined] => [imageOf(pod, 'mesh-1'), imageOf(pod, 'mesh-2')];
const mesh = (image: string): Record<string, unknown> => ({
  containers: [{ name: 'mesh', image, upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: EMPTY } }],
});

let s: SidecarSetSuite;
let name: string;
const pods = (): Promise<V1Pod[]> => s.pods('app=hot');

describe('SidecarSet hot upgrade', () => {
  beforeAll(async () => {
    s = await startSidecarSetSuite('hot', true);
    name = await s.create('hot', { selector: { matchLabels: { app: 'hot' } }, ...mesh('registry.local/mesh:v1') });
    await s.waitInWebhook(name, { app: 'hot' });
    await s.createPods(['hot-0', 'hot-1'], { app: 'hot' });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('injects the working container -1 and the empty container -2 with version annotations and env', async () => {
    for (const pod of await pods()) {
      expect(pod.spec!.containers.map((c) => c.name)).toEqual(['mesh-1', 'mesh-2', 'main']);
      expect(pair(pod)).toEqual(['registry.local/mesh:v1', EMPTY]);
      expect(pod.metadata!.annotations![WORKING]).toBe('{"mesh":"mesh-1"}');
      expect([
        version(pod, 'mesh-1'),
        versionAlt(pod, 'mesh-1'),
        version(pod, 'mesh-2'),
        versionAlt(pod, 'mesh-2'),
      ]).toEqual(['1', '0', '0', '1']);
      expect(pod.spec!.containers[1]!.env).toContainEqual({
        name: 'SIDECARSET_VERSION',
        valueFrom: {
          fieldRef: { apiVersion: 'v1', fieldPath: "metadata.annotations['version.sidecarset.kruise.io/mesh-2']" },
        },
      });
    }
    const status = await eventually('status counts the pods', async () => {
      const st = (await s.get(name)).status;
      return st?.matchedPods === 2 && st.readyPods === 2 && st;
    });
    expect(status.updatedPods).toBe(2);
  });

  it('upgrades by swapping the working container, -1 → -2 → -1, and resets the old one to the empty image', async () => {
    const uids = (await pods()).map((p) => p.metadata!.uid).sort();
    await s.patch(name, { spec: mesh('registry.local/mesh:v2') });
    const v2 = await eventually(
      'both pods work on mesh-2 at v2 with mesh-1 empty',
      async () => {
        const all = await pods();
        return all.every((p) => pair(p)[0] === EMPTY && pair(p)[1] === 'registry.local/mesh:v2') && all;
      },
      90_000,
    );
    const rv = (await s.get(name)).metadata.resourceVersion;
    for (const pod of v2) {
      expect(pod.metadata!.annotations![WORKING]).toBe('{"mesh":"mesh-2"}');
      expect(version(pod, 'mesh-1')).toBe('0');
      expect(version(pod, 'mesh-2')).toMatch(/^[1-9]\d*$/);
      expect(Number(version(pod, 'mesh-2'))).toBeLessThanOrEqual(Number(rv));
      expect(versionAlt(pod, 'mesh-2')).toBe('0');
    }
    await s.patch(name, { spec: mesh('registry.local/mesh:v3') });
    const v3 = await eventually(
      'both pods work on mesh-1 at v3 with mesh-2 empty',
      async () => {
        const all = await pods();
        return all.every((p) => pair(p)[0] === 'registry.local/mesh:v3' && pair(p)[1] === EMPTY) && all;
      },
      90_000,
    );
    for (const pod of v3) expect(pod.metadata!.annotations![WORKING]).toBe('{"mesh":"mesh-1"}');
    expect(v3.map((p) => p.metadata!.uid).sort(), 'upgraded in place').toEqual(uids);
    await eventually('status: all updated and ready', async () => {
      const st = (await s.get(name)).status;
      return st?.updatedPods === 2 && st.updatedReadyPods === 2 && st.readyPods === 2;
    });
  });

  it('keeps the old sidecar working beside a new one that never becomes ready, on one pod only', async () => {
    await s.patch(name, { spec: mesh('registry.local/mesh:v4-broken') });
    await eventually('one pod runs the broken image in mesh-2', async () => {
      const all = await pods();
      return all.filter((p) => pair(p)[1] === 'registry.local/mesh:v4-broken').length === 1;
    });
    // Give the controller time to act wrongly (reset the old container, or take the second pod).
    await new Promise((r) => setTimeout(r, 4000));
    const all = await pods();
    const broken = all.filter((p) => pair(p)[1] === 'registry.local/mesh:v4-broken');
    expect(broken).toHaveLength(1);
    expect(pair(broken[0]!)[0], 'the old sidecar still runs').toBe('registry.local/mesh:v3');
    expect(broken[0]!.metadata!.annotations![WORKING]).toBe('{"mesh":"mesh-2"}');
    const other = all.find((p) => p !== broken[0])!;
    expect(pair(other)).toEqual(['registry.local/mesh:v3', EMPTY]);
    const st = (await s.get(name)).status;
    expect(st).toMatchObject({ matchedPods: 2, updatedPods: 1, updatedReadyPods: 0 });
  });
});
