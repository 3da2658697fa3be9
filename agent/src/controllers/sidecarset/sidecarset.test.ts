import { describe, expect, it } from 'vitest';
import { defaultSidecarSet, sidecarSetHash, sidecarSetHashWithoutImage, type SidecarSet } from '@flotilla/api';
import { readUpgradeSpecs, writeUpgradeSpecs } from './control/annotations.js';
import { injectSidecars } from './inject.js';
import { partitionCount, planUpgrade } from './plan.js';
import type { Pod } from './types.js';
import { upgradePod } from './upgrade.js';

function sidecarSet(name: string, spec: Partial<SidecarSet['spec']>): SidecarSet {
  const ss = defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: { selector: { matchLabels: { app: 'a' } }, ...spec },
  });
  ss.metadata!.annotations = {
    'kruise.io/sidecarset-hash': sidecarSetHash(ss),
    'kruise.io/sidecarset-hash-without-image': sidecarSetHashWithoutImage(ss),
  };
  return ss;
}

const appPod = (name: string, extra: Partial<Pod['spec']> = {}): Pod => ({
  metadata: { name, namespace: 'ns', labels: { app: 'a' } },
  spec: { containers: [{ name: 'main', image: 'app:v1' }], ...extra },
});

describe('hash annotations', () => {
  it('are written as Go marshals them and read back, including the older map form', () => {
    const specs = new Map([
      ['b', { updateTimestamp: '2026-01-01T00:00:00Z', hash: 'h', sidecarSetName: 'b', sidecarList: ['x'] }],
    ]);
    expect(writeUpgradeSpecs(specs)).toBe(
      '{"b":{"updateTimestamp":"2026-01-01T00:00:00Z","hash":"h","sidecarSetName":"b","sidecarList":["x"]}}',
    );
    const old = { metadata: { annotations: { 'kruise.io/sidecarset-hash': '{"a":"abc"}' } } };
    expect(readUpgradeSpecs(old, 'kruise.io/sidecarset-hash').get('a')?.hash).toBe('abc');
  });
});

describe('injection', () => {
  it('orders containers by policy and resolves a name clash deterministically (first SidecarSet by name wins)', () => {
    const a = sidecarSet('a-set', {
      containers: [
        { name: 'before', image: 'sc:v1' },
        { name: 'after', image: 'sc:v1', podInjectPolicy: 'AfterAppContainer' },
      ],
    });
    const b = sidecarSet('b-set', { containers: [{ name: 'before', image: 'other:v1' }] });
    const result = injectSidecars(appPod('p'), [b, a], '2026-01-01T00:00:00Z');
    expect(result.pod.spec!.containers!.map((c) => c.name)).toEqual(['before', 'main', 'after']);
    expect(result.pod.spec!.containers![0]!.image).toBe('sc:v1');
    expect(result.conflicts).toEqual([{ container: 'before', keptFrom: 'a-set', skippedFrom: 'b-set' }]);
    expect(result.pod.metadata!.annotations!['kruise.io/sidecarset-injected-list']).toBe('a-set,b-set');
  });
});

describe('upgrade planning', () => {
  const injected = (ss: SidecarSet, name: string, ready = true): Pod => {
    const pod = injectSidecars(appPod(name), [ss], '2026-01-01T00:00:00Z').pod as Pod;
    pod.status = {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: pod.spec.containers.map((c) => ({ name: c.name, image: c.image, imageID: `${c.image}@x` })),
    };
    return pod;
  };

  it('rounds partitions like OpenKruise', () => {
    expect(partitionCount('50%', 3)).toBe(2);
    expect(partitionCount('99%', 4)).toBe(3);
    expect(partitionCount(5, 3)).toBe(3);
    expect(partitionCount(undefined, 3)).toBe(0);
  });

  it('upgrades image-only changes within partition and maxUnavailable, and flags other changes', () => {
    const v1 = sidecarSet('s', { containers: [{ name: 'sc', image: 'sc:v1' }] });
    const pods = ['p0', 'p1', 'p2'].map((n) => injected(v1, n));
    const v2 = sidecarSet('s', { containers: [{ name: 'sc', image: 'sc:v2' }], updateStrategy: { partition: 1 } });
    const plan = planUpgrade(v2, pods);
    expect(plan.upgrade).toHaveLength(1); // maxUnavailable 1
    const upgraded = upgradePod(v2, plan.upgrade[0]!, '2026-01-01T00:00:01Z');
    expect(upgraded.spec.containers.find((c) => c.name === 'sc')!.image).toBe('sc:v2');
    const wide = sidecarSet('s', {
      containers: [{ name: 'sc', image: 'sc:v2' }],
      updateStrategy: { partition: 1, maxUnavailable: 3 },
    });
    expect(planUpgrade(wide, pods).upgrade).toHaveLength(2); // partition keeps one back
    const envChange = sidecarSet('s', {
      containers: [{ name: 'sc', image: 'sc:v2', env: [{ name: 'X', value: '1' }] }],
    });
    expect(planUpgrade(envChange, pods)).toMatchObject({ upgrade: [], notUpgradable: pods });
  });
});
