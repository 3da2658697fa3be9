import { describe, expect, it } from 'vitest';
import { defaultSidecarSet, sidecarSetHash, sidecarSetHashWithoutImage, type SidecarSet } from '@flotilla/api';
import { podsFinishingHotUpgrade } from './controller.js';
import { containerToHotUpgrade, formatWorkingContainers, workingContainers } from './control/hot-upgrade.js';
import { injectSidecars } from './inject.js';
import { planUpgrade } from './plan.js';
import { hasAllSidecars, isSidecarReady, sidecarNames } from './pod-state.js';
import type { Pod } from '../../kube/types.js';
import { finishHotUpgrade, upgradePod } from './upgrade.js';

const EMPTY = 'registry.local/empty:v1';
const NOW = '2026-01-01T00:00:00Z';

function hotSet(image: string, resourceVersion: string, extra: Partial<SidecarSet['spec']> = {}): SidecarSet {
  const ss = defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'mesh-set', resourceVersion },
    spec: {
      selector: { matchLabels: { app: 'a' } },
      containers: [
        {
          name: 'mesh',
          image,
          upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: EMPTY },
        },
      ],
      ...extra,
    },
  });
  ss.metadata!.annotations = {
    'kruise.io/sidecarset-hash': sidecarSetHash(ss),
    'kruise.io/sidecarset-hash-without-image': sidecarSetHashWithoutImage(ss),
  };
  return ss;
}

/** What kwok does: every container reports its spec image, a changed one a new image ID; `-broken` is never ready. */
function run(pod: Pod): Pod {
  const out = structuredClone(pod);
  const containers = out.spec.containers;
  const ready = containers.every((c) => !c.image?.endsWith('-broken'));
  out.status = {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    containerStatuses: containers.map((c) => ({
      name: c.name,
      image: c.image,
      imageID: `${c.image}@sha256:1`,
      ready: !c.image?.endsWith('-broken'),
    })),
  };
  return out;
}

const image = (pod: Pod, name: string): string | undefined => pod.spec.containers.find((c) => c.name === name)?.image;

function injectedPod(ss: SidecarSet): Pod {
  const base: Pod = {
    metadata: { name: 'p', namespace: 'ns', labels: { app: 'a' } },
    spec: { containers: [{ name: 'main', image: 'app:v1' }] },
  };
  return run(injectSidecars(base, [ss], NOW).pod as Pod);
}

describe('hot upgrade injection', () => {
  it('injects the pair, -1 working with the image and -2 on the empty image, with version annotations and env', () => {
    const pod = injectedPod(hotSet('mesh:v1', '10'));
    expect(pod.spec.containers.map((c) => c.name)).toEqual(['mesh-1', 'mesh-2', 'main']);
    expect(image(pod, 'mesh-1')).toBe('mesh:v1');
    expect(image(pod, 'mesh-2')).toBe(EMPTY);
    const a = pod.metadata.annotations!;
    expect(a['kruise.io/sidecarset-working-hotupgrade-container']).toBe('{"mesh":"mesh-1"}');
    expect([
      a['version.sidecarset.kruise.io/mesh-1'],
      a['versionalt.sidecarset.kruise.io/mesh-1'],
      a['version.sidecarset.kruise.io/mesh-2'],
      a['versionalt.sidecarset.kruise.io/mesh-2'],
    ]).toEqual(['1', '0', '0', '1']);
    const env = pod.spec.containers[1]!.env!;
    expect(env).toContainEqual({
      name: 'SIDECARSET_VERSION',
      valueFrom: { fieldRef: { fieldPath: "metadata.annotations['version.sidecarset.kruise.io/mesh-2']" } },
    });
    expect(env.map((e) => e.name)).toEqual(['IS_INJECTED', 'SIDECARSET_VERSION', 'SIDECARSET_VERSION_ALT']);
    expect(pod.spec.containers[0]).not.toHaveProperty('upgradeStrategy');
    // The hash record names the sidecar, not its two containers.
    expect(JSON.parse(a['kruise.io/sidecarset-hash']!)['mesh-set'].sidecarList).toEqual(['mesh']);
  });

  it('counts a pod with both containers and the working record as carrying the sidecar', () => {
    const ss = hotSet('mesh:v1', '10');
    const pod = injectedPod(ss);
    expect([...sidecarNames(ss)].sort()).toEqual(['mesh-1', 'mesh-2']);
    expect(hasAllSidecars(pod, ss)).toBe(true);
    delete pod.metadata.annotations!['kruise.io/sidecarset-working-hotupgrade-container'];
    expect(hasAllSidecars(pod, ss)).toBe(false);
  });

  it('reads and writes the working record as Go marshals a map', () => {
    const working = new Map([
      ['b', 'b-2'],
      ['a', 'a-1'],
    ]);
    const text = formatWorkingContainers(working);
    expect(text).toBe('{"a":"a-1","b":"b-2"}');
    expect(
      workingContainers({ metadata: { annotations: { 'kruise.io/sidecarset-working-hotupgrade-container': text } } }),
    ).toEqual(
      new Map([
        ['a', 'a-1'],
        ['b', 'b-2'],
      ]),
    );
    expect(
      workingContainers({ metadata: { annotations: { 'kruise.io/sidecarset-working-hotupgrade-container': '[' } } })
        .size,
    ).toBe(0);
  });
});

describe('hot upgrade', () => {
  it('swaps the working container -1 → -2 → -1, resetting the old one to the empty image', () => {
    let pod = injectedPod(hotSet('mesh:v1', '10'));
    const v2 = hotSet('mesh:v2', '20');
    expect(planUpgrade(v2, [pod]).upgrade).toEqual([pod]);

    // Upgrade: the idle -2 takes v2 and works; -1 still runs v1 beside it.
    pod = run(upgradePod(v2, pod, NOW));
    expect([image(pod, 'mesh-1'), image(pod, 'mesh-2')]).toEqual(['mesh:v1', 'mesh:v2']);
    const a = pod.metadata.annotations!;
    expect(a['kruise.io/sidecarset-working-hotupgrade-container']).toBe('{"mesh":"mesh-2"}');
    expect(a['version.sidecarset.kruise.io/mesh-2']).toBe('20');
    expect(a['versionalt.sidecarset.kruise.io/mesh-2']).toBe('1'); // the old container's version
    expect(a['versionalt.sidecarset.kruise.io/mesh-1']).toBe('20');
    // Not ready for the SidecarSet until the old container is back on the empty image.
    expect(isSidecarReady(pod, v2)).toBe(false);

    // Completion: -1 goes back to the empty image.
    expect(podsFinishingHotUpgrade(v2, [pod])).toEqual([pod]);
    pod = run(finishHotUpgrade(v2, pod, NOW)!);
    expect([image(pod, 'mesh-1'), image(pod, 'mesh-2')]).toEqual([EMPTY, 'mesh:v2']);
    expect(pod.metadata.annotations!['version.sidecarset.kruise.io/mesh-1']).toBe('0');
    expect(pod.metadata.annotations!['versionalt.sidecarset.kruise.io/mesh-2']).toBe('0');
    expect(isSidecarReady(pod, v2)).toBe(true);
    expect(podsFinishingHotUpgrade(v2, [pod])).toEqual([]);
    expect(finishHotUpgrade(v2, pod, NOW)).toBeUndefined();

    // The next version goes into -1 again.
    const v3 = hotSet('mesh:v3', '30');
    pod = run(upgradePod(v3, pod, NOW));
    expect([image(pod, 'mesh-1'), image(pod, 'mesh-2')]).toEqual(['mesh:v3', 'mesh:v2']);
    expect(pod.metadata.annotations!['kruise.io/sidecarset-working-hotupgrade-container']).toBe('{"mesh":"mesh-1"}');
    expect(pod.metadata.annotations!['versionalt.sidecarset.kruise.io/mesh-1']).toBe('20');
  });

  it('never completes a swap whose new container is not ready (a broken image)', () => {
    let pod = injectedPod(hotSet('mesh:v1', '10'));
    const broken = hotSet('mesh:v2-broken', '20');
    pod = run(upgradePod(broken, pod, NOW));
    expect(image(pod, 'mesh-2')).toBe('mesh:v2-broken');
    expect(podsFinishingHotUpgrade(broken, [pod])).toEqual([]);
    expect(image(pod, 'mesh-1')).toBe('mesh:v1');
  });

  it('waits for the kubelet to run the new image before completing', () => {
    let pod = injectedPod(hotSet('mesh:v1', '10'));
    const v2 = hotSet('mesh:v2', '20');
    const before = pod;
    pod = upgradePod(v2, pod, NOW);
    pod.status = before.status; // the kubelet has not restarted -2 yet
    expect(podsFinishingHotUpgrade(v2, [pod])).toEqual([]);
  });

  it('upgrades the not-ready container of the pair when neither runs the empty image', () => {
    const ss = hotSet('mesh:v3', '30');
    const pod = injectedPod(hotSet('mesh:v1', '10'));
    pod.spec.containers.find((c) => c.name === 'mesh-2')!.image = 'mesh:v2';
    const sidecar = ss.spec.containers![0]!;
    expect(containerToHotUpgrade(sidecar, pod, (c) => c === 'mesh-2')).toEqual({ upgrade: 'mesh-1', other: 'mesh-2' });
    expect(containerToHotUpgrade(sidecar, pod, (c) => c === 'mesh-1')).toEqual({ upgrade: 'mesh-2', other: 'mesh-1' });
    // Both ready: the older (not working) one.
    expect(containerToHotUpgrade(sidecar, pod, () => true)).toEqual({ upgrade: 'mesh-2', other: 'mesh-1' });
  });

  it('does not upgrade a change beyond images', () => {
    const pod = injectedPod(hotSet('mesh:v1', '10'));
    const changed = hotSet('mesh:v2', '20');
    changed.spec.containers![0]!.env = [{ name: 'X', value: '1' }];
    changed.metadata!.annotations!['kruise.io/sidecarset-hash-without-image'] = sidecarSetHashWithoutImage(changed);
    expect(planUpgrade(changed, [pod])).toMatchObject({ upgrade: [], notUpgradable: [pod] });
  });
});
