import { describe, expect, it } from 'vitest';
import { defaultSidecarSet, sidecarSetHash, sidecarSetHashWithoutImage, type SidecarSet } from '@flotilla/api';
import { readUpgradeSpecs, writeUpgradeSpecs } from './control/annotations.js';
import { injectSidecars } from './inject.js';
import { missingInjectionRevision, sidecarSetForNewPod } from './inject-revision.js';
import { newSidecarSetRevision } from './revision.js';
import { partitionCount, planUpgrade } from './plan.js';
import { upgradableCondition } from './pod-state.js';
import type { Pod } from '../../kube/types.js';
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

describe('upgrade order', () => {
  const v1 = sidecarSet('s', { containers: [{ name: 'sc', image: 'sc:v1' }] });
  const pod = (name: string, labels: Record<string, string>): Pod => {
    const p = injectSidecars(
      { ...appPod(name), metadata: { name, namespace: 'ns', labels: { app: 'a', ...labels } } },
      [v1],
      '2026-01-01T00:00:00Z',
    ).pod as Pod;
    p.status = {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True' }],
      containerStatuses: p.spec.containers.map((c) => ({
        name: c.name,
        image: c.image,
        imageID: `${c.image}@x`,
        ready: true,
      })),
    };
    return p;
  };
  const names = (pods: Pod[]): string[] => pods.map((p) => p.metadata.name);

  it('takes pods by weightPriority, then orderPriority (lowest level first, higher suffix first)', () => {
    const pods = [pod('a', { tier: 'low' }), pod('b', { tier: 'high' }), pod('c', {})];
    const weighted = sidecarSet('s', {
      containers: [{ name: 'sc', image: 'sc:v2' }],
      updateStrategy: {
        maxUnavailable: 3,
        priorityStrategy: { weightPriority: [{ weight: 50, matchSelector: { matchLabels: { tier: 'high' } } }] },
      },
    });
    expect(names(planUpgrade(weighted, pods).upgrade)[0]).toBe('b');
    const ordered = sidecarSet('s', {
      containers: [{ name: 'sc', image: 'sc:v2' }],
      updateStrategy: { maxUnavailable: 1, priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }] } },
    });
    const ranked = [pod('r1', { rank: 'r-1' }), pod('r7', { rank: 'r-7' }), pod('r3', { rank: 'r-3' })];
    expect(names(planUpgrade(ordered, ranked).upgrade)).toEqual(['r7']);
  });

  it('spreads pods of each scattered label value over the order (key=* expands to every value)', () => {
    const pods = ['z1', 'z2', 'z3', 'z4'].map((n, i) => pod(n, { zone: i < 2 ? 'x' : 'y' }));
    const scattered = sidecarSet('s', {
      containers: [{ name: 'sc', image: 'sc:v2' }],
      updateStrategy: { maxUnavailable: 4, scatterStrategy: [{ key: 'zone', value: '*' }] },
    });
    const order = planUpgrade(scattered, pods).upgrade.map((p) => p.metadata.labels!.zone);
    expect(order).toHaveLength(4);
    // Never both pods of one zone first.
    expect(order[0]).not.toBe(order[1]);
  });

  it('upgrades only pods the update selector picks', () => {
    const pods = [pod('canary', { canary: 'true' }), pod('rest', {})];
    const selected = sidecarSet('s', {
      containers: [{ name: 'sc', image: 'sc:v2' }],
      updateStrategy: { maxUnavailable: 2, selector: { matchLabels: { canary: 'true' } } },
    });
    expect(names(planUpgrade(selected, pods).upgrade)).toEqual(['canary']);
  });
});

describe('injection revision', () => {
  const v1 = sidecarSet('s', { containers: [{ name: 'sc', image: 'sc:v1' }] });
  const rev1 = newSidecarSetRevision(
    { ...v1, metadata: { ...v1.metadata, labels: { 'apps.kruise.io/sidecarset-custom-version': 'stable' } } },
    'agent',
    1,
    0,
  );
  const latest = (
    revision: NonNullable<SidecarSet['spec']['injectionStrategy']>['revision'],
    update = {},
  ): SidecarSet =>
    sidecarSet('s', {
      containers: [{ name: 'sc', image: 'sc:v2' }],
      injectionStrategy: { revision },
      updateStrategy: update,
    });
  const imageOf = (ss: SidecarSet): string | undefined => ss.spec.containers![0]!.image;

  it('injects the named revision (by name or custom version) under Always', () => {
    expect(imageOf(sidecarSetForNewPod(latest({ revisionName: rev1.metadata.name }), {}, [rev1], Math.random))).toBe(
      'sc:v1',
    );
    const byVersion = sidecarSetForNewPod(latest({ customVersion: 'stable' }), {}, [rev1], Math.random);
    expect(imageOf(byVersion)).toBe('sc:v1');
    expect(byVersion.status?.latestRevision).toBe(rev1.metadata.name);
  });

  it('under Partial: pods outside the update selector get the named revision, selected ones the latest with 1 − partition%', () => {
    const partial = latest(
      { revisionName: rev1.metadata.name, policy: 'Partial' },
      { selector: { matchLabels: { canary: 'true' } } },
    );
    expect(imageOf(sidecarSetForNewPod(partial, {}, [rev1], () => 0.99))).toBe('sc:v1');
    expect(imageOf(sidecarSetForNewPod(partial, { canary: 'true' }, [rev1], () => 0.99))).toBe('sc:v2');
    const percent = latest({ revisionName: rev1.metadata.name, policy: 'Partial' }, { partition: '30%' });
    expect(imageOf(sidecarSetForNewPod(percent, {}, [rev1], () => 0.2))).toBe('sc:v1');
    expect(imageOf(sidecarSetForNewPod(percent, {}, [rev1], () => 0.5))).toBe('sc:v2');
  });

  it('refuses a missing revisionName naming the field, and falls back to the latest for an unknown customVersion', () => {
    expect(() => sidecarSetForNewPod(latest({ revisionName: 'gone' }), {}, [rev1], Math.random)).toThrow(
      /spec\.injectionStrategy\.revision\.revisionName: ControllerRevision gone not found/,
    );
    expect(imageOf(sidecarSetForNewPod(latest({ customVersion: 'nope' }), {}, [rev1], Math.random))).toBe('sc:v2');
    expect(missingInjectionRevision(latest({ customVersion: 'nope' }), [rev1])?.path).toBe(
      'spec.injectionStrategy.revision.customVersion',
    );
    expect(missingInjectionRevision(latest({ customVersion: 'stable' }), [rev1])).toBeUndefined();
  });
});

describe('init containers', () => {
  it('a changed init container (not a native sidecar) changes no hash, so no pod is upgraded', () => {
    const v1 = sidecarSet('s', {
      containers: [{ name: 'sc', image: 'sc:v1' }],
      initContainers: [{ name: 'init', image: 'init:v1' }],
    });
    const v2 = sidecarSet('s', {
      containers: [{ name: 'sc', image: 'sc:v1' }],
      initContainers: [{ name: 'init', image: 'init:v2' }],
    });
    expect(sidecarSetHash(v2)).toBe(sidecarSetHash(v1));
    const pod = injectSidecars(appPod('p'), [v1], '2026-01-01T00:00:00Z').pod as Pod;
    pod.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] };
    expect(planUpgrade(v2, [pod])).toEqual({ upgrade: [], notUpgradable: [] });
  });
});

describe('SidecarSetUpgradable condition', () => {
  const T0 = '2026-01-01T00:00:00Z';
  const T1 = '2026-01-01T00:01:00Z';
  const withCondition = (c: ReturnType<typeof upgradableCondition>): Pod => ({
    ...appPod('p'),
    status: { conditions: c ? [c] : [] },
  });

  it('stays False while any SidecarSet cannot upgrade the pod, as OpenKruise keeps one verdict per SidecarSet', () => {
    const first = upgradableCondition(appPod('p'), 'ss-1', false, T0);
    expect(first).toEqual({
      type: 'SidecarSetUpgradable',
      status: 'False',
      reason: 'UpdateImmutableField',
      message: '{"ss-1":false}',
      lastTransitionTime: T0,
    });
    // Another SidecarSet upgrades the pod: still False, its verdict recorded, the transition time kept.
    const second = upgradableCondition(withCondition(first), 'ss-2', true, T1);
    expect(second).toMatchObject({ status: 'False', message: '{"ss-1":false,"ss-2":true}', lastTransitionTime: T0 });
    // Once the first can upgrade it too, the pod is upgradable.
    const third = upgradableCondition(withCondition(second), 'ss-1', true, T1);
    expect(third).toMatchObject({
      status: 'True',
      reason: 'AllSidecarsetUpgradable',
      message: '{"ss-1":true,"ss-2":true}',
      lastTransitionTime: T1,
    });
    expect(upgradableCondition(withCondition(third), 'ss-2', true, T1), 'nothing to write').toBeUndefined();
  });

  it('reads a message written by an older agent (plain text) as no verdicts', () => {
    const old = withCondition({
      type: 'SidecarSetUpgradable',
      status: 'False',
      message: "Pod's sidecar set is not upgradable due to changes out of image field",
      lastTransitionTime: T0,
    });
    expect(upgradableCondition(old, 'ss-1', true, T1)).toMatchObject({ status: 'True', message: '{"ss-1":true}' });
  });
});
