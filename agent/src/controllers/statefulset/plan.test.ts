import { defaultStatefulSet, type StatefulSet } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import type { PersistentVolumeClaim, Pod } from '../../kube/types.js';
import { newPod } from './identity.js';
import { planStatefulSet, wantedOrdinals, type PlanInput } from './plan.js';
import { computeStatus, withCondition } from './status.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const OLD = 'web-old';
const NEW = 'web-new';
const template = (image: string): StatefulSet['spec']['template'] => ({
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'main', image }], readinessGates: [{ conditionType: 'InPlaceUpdateReady' }] },
});

function set(spec: Partial<StatefulSet['spec']> = {}): StatefulSet {
  return defaultStatefulSet({
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'StatefulSet',
    metadata: { name: 'web', namespace: 'ns', uid: 'uid-1', generation: 2 },
    spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: template('nginx:2'), ...spec },
  });
}

/** A running, ready pod of `ordinal` at `revision`. */
function pod(s: StatefulSet, ordinal: number, revision = NEW, ready = true): Pod {
  const p = newPod(s, template(revision === NEW ? 'nginx:2' : 'nginx:1'), revision, ordinal);
  p.metadata.uid = `pod-${ordinal}`;
  p.status = {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
  };
  return p;
}

const claims = (...names: string[]): PersistentVolumeClaim[] =>
  names.map((name) => ({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name, namespace: 'ns' } }));

function input(s: StatefulSet, pods: Pod[], extra: Partial<PlanInput> = {}): PlanInput {
  const data: Record<string, unknown> = {
    [OLD]: { spec: { template: template('nginx:1') } },
    [NEW]: { spec: { template: template('nginx:2') } },
  };
  return {
    set: s,
    pods,
    claims: [],
    currentRevision: OLD,
    updateRevision: NEW,
    revisionData: (name) => data[name],
    now: NOW,
    ...extra,
  };
}

describe('scaling', () => {
  it('OrderedReady creates the lowest missing ordinal only once every lower pod is ready', () => {
    const s = set();
    expect(planStatefulSet(input(s, [])).create).toEqual([{ ordinal: 0, revision: NEW }]);
    expect(planStatefulSet(input(s, [pod(s, 0, NEW, false)])).create).toEqual([]);
    expect(planStatefulSet(input(s, [pod(s, 0)])).create).toEqual([{ ordinal: 1, revision: NEW }]);
  });

  it('Parallel creates every missing pod, within scaleStrategy.maxUnavailable', () => {
    const s = set({ podManagementPolicy: 'Parallel', replicas: 4 });
    expect(planStatefulSet(input(s, [])).create.map((c) => c.ordinal)).toEqual([0, 1, 2, 3]);
    const limited = set({ podManagementPolicy: 'Parallel', replicas: 4, scaleStrategy: { maxUnavailable: 2 } });
    expect(planStatefulSet(input(limited, [pod(limited, 0, NEW, false)])).create.map((c) => c.ordinal)).toEqual([1]);
  });

  it('skips reserved ordinals and condemns pods on them, highest first one at a time when ordered', () => {
    const s = set({ reserveOrdinals: [1, '3-4'] });
    expect(wantedOrdinals(s)).toEqual([0, 2, 5]);
    const pods = [pod(s, 0), pod(s, 1), pod(s, 2), pod(s, 3), pod(s, 5)];
    const plan = planStatefulSet(input(s, pods));
    expect(plan.create).toEqual([]);
    expect(plan.delete.map((p) => p.metadata.name)).toEqual(['web-3']);
  });

  it('gives new pods below the partition the current revision', () => {
    const s = set({ podManagementPolicy: 'Parallel', updateStrategy: { rollingUpdate: { partition: 2 } } });
    expect(planStatefulSet(input(s, [])).create).toEqual([
      { ordinal: 0, revision: OLD },
      { ordinal: 1, revision: OLD },
      { ordinal: 2, revision: NEW },
    ]);
  });

  it('creates the claims of new pods and, with whenScaled Delete, removes those of scaled-away ordinals', () => {
    const s = set({
      replicas: 1,
      volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }],
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
    });
    const plan = planStatefulSet(input(s, [], { claims: claims('data-web-1', 'data-web-2', 'other-web-1') }));
    expect(plan.createClaims.map((c) => [c.metadata.name, c.metadata.ownerReferences?.[0]?.kind])).toEqual([
      ['data-web-0', 'StatefulSet'],
    ]);
    expect(plan.deleteClaims).toEqual(['data-web-1', 'data-web-2']);
    const retain = set({ replicas: 1, volumeClaimTemplates: s.spec.volumeClaimTemplates });
    expect(planStatefulSet(input(retain, [], { claims: claims('data-web-1') })).deleteClaims).toEqual([]);
  });
});

describe('rolling update', () => {
  it('recreates the highest outdated pod first, down to the partition', () => {
    const s = set({ updateStrategy: { rollingUpdate: { partition: 1 } } });
    const pods = [pod(s, 0, OLD), pod(s, 1, OLD), pod(s, 2, OLD)];
    expect(planStatefulSet(input(s, pods)).delete.map((p) => p.metadata.name)).toEqual(['web-2']);
    const done = [pod(s, 0, OLD), pod(s, 1, OLD), pod(s, 2)];
    expect(planStatefulSet(input(s, done)).delete.map((p) => p.metadata.name)).toEqual(['web-1']);
    const atPartition = [pod(s, 0, OLD), pod(s, 1), pod(s, 2)];
    expect(planStatefulSet(input(s, atPartition)).delete).toEqual([]);
  });

  it('updates up to maxUnavailable pods at once with Parallel, counting pods already unavailable', () => {
    const s = set({
      podManagementPolicy: 'Parallel',
      replicas: 5,
      updateStrategy: { rollingUpdate: { maxUnavailable: 2 } },
    });
    const pods = [0, 1, 2, 3, 4].map((o) => pod(s, o, OLD));
    expect(planStatefulSet(input(s, pods)).delete.map((p) => p.metadata.name)).toEqual(['web-4', 'web-3']);
    pods[4] = pod(s, 4, NEW, false);
    expect(planStatefulSet(input(s, pods)).delete.map((p) => p.metadata.name)).toEqual(['web-3']);
  });

  it('updates in place when only images changed, with the grace period, and pauses', () => {
    const s = set({
      updateStrategy: {
        rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible', inPlaceUpdateStrategy: { gracePeriodSeconds: 5 } },
      },
    });
    const plan = planStatefulSet(input(s, [pod(s, 0, OLD), pod(s, 1, OLD), pod(s, 2, OLD)]));
    expect(plan.delete).toEqual([]);
    expect(plan.inPlace.map((u) => [u.pod.metadata.name, u.spec.containerImages, u.spec.graceSeconds])).toEqual([
      ['web-2', { main: 'nginx:2' }, 5],
    ]);
    const paused = set({ updateStrategy: { rollingUpdate: { paused: true } } });
    expect(planStatefulSet(input(paused, [pod(paused, 0, OLD)], {})).delete).toEqual([]);
  });

  it('InPlaceOnly never recreates; OnDelete never updates', () => {
    const s = set({ replicas: 1, updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceOnly' } } });
    const changed = {
      spec: { template: { ...template('nginx:2'), spec: { containers: [{ name: 'x', image: 'y' }] } } },
    };
    const plan = planStatefulSet(
      input(s, [pod(s, 0, OLD)], { revisionData: (n) => (n === NEW ? changed : undefined) }),
    );
    expect([plan.delete, plan.inPlace]).toEqual([[], []]);
    const onDelete = set({ replicas: 1, updateStrategy: { type: 'OnDelete' } });
    expect(planStatefulSet(input(onDelete, [pod(onDelete, 0, OLD)])).delete).toEqual([]);
  });
});

describe('status', () => {
  it('counts pods and moves the current revision once every pod runs the update revision and is ready', () => {
    const s = set();
    const mixed = computeStatus({
      set: s,
      pods: [pod(s, 0, OLD), pod(s, 1), pod(s, 2, NEW, false)],
      currentRevision: OLD,
      updateRevision: NEW,
      collisionCount: 0,
      now: NOW,
    });
    expect(mixed).toMatchObject({
      observedGeneration: 2,
      replicas: 3,
      readyReplicas: 2,
      availableReplicas: 2,
      currentReplicas: 1,
      updatedReplicas: 2,
      updatedReadyReplicas: 1,
      currentRevision: OLD,
      updateRevision: NEW,
      labelSelector: 'app=web',
    });
    const done = computeStatus({
      set: s,
      pods: [pod(s, 0), pod(s, 1), pod(s, 2)],
      currentRevision: OLD,
      updateRevision: NEW,
      collisionCount: 0,
      now: NOW,
    });
    expect([done.currentRevision, done.currentReplicas]).toEqual([NEW, 3]);
  });
});

describe('lifecycle hooks', () => {
  it('hold a pod the preDelete hook names in PreparingDelete, and delete it once released', () => {
    const s = set({ replicas: 1, lifecycle: { preDelete: { labelsHandler: { hold: 'true' } } } });
    const hooked = pod(s, 1);
    hooked.metadata.labels!.hold = 'true';
    const plan = planStatefulSet(input(s, [pod(s, 0), hooked]));
    expect([plan.delete, plan.prepare.map((p) => [p.pod.metadata.name, p.state])]).toEqual([
      [],
      [['web-1', 'PreparingDelete']],
    ]);
    hooked.metadata.labels!['lifecycle.apps.kruise.io/state'] = 'PreparingDelete';
    expect(planStatefulSet(input(s, [pod(s, 0), hooked])).prepare).toEqual([]);
    delete hooked.metadata.labels!.hold;
    expect(planStatefulSet(input(s, [pod(s, 0), hooked])).delete.map((p) => p.metadata.name)).toEqual(['web-1']);
  });

  it('hold an in-place update the inPlaceUpdate hook names in PreparingUpdate', () => {
    const s = set({
      replicas: 1,
      lifecycle: { inPlaceUpdate: { finalizersHandler: ['example.com/drain'] } },
      updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
    });
    const hooked = pod(s, 0, OLD);
    hooked.metadata.finalizers = ['example.com/drain'];
    const plan = planStatefulSet(input(s, [hooked]));
    expect([plan.inPlace, plan.prepare.map((p) => p.state)]).toEqual([[], ['PreparingUpdate']]);
    hooked.metadata.labels!['lifecycle.apps.kruise.io/state'] = 'PreparingUpdate';
    expect(planStatefulSet(input(s, [hooked])).inPlace).toEqual([]);
    hooked.metadata.finalizers = [];
    expect(planStatefulSet(input(s, [hooked])).inPlace.map((u) => u.pod.metadata.name)).toEqual(['web-0']);
  });
});

describe('claim owner references', () => {
  const data = [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }];

  it('follow the retention policy: the set with whenDeleted Delete, a condemned pod with whenScaled Delete', () => {
    const s = set({
      replicas: 1,
      volumeClaimTemplates: data,
      persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Delete' },
    });
    const plan = planStatefulSet(input(s, [pod(s, 0), pod(s, 1)], { claims: claims('data-web-0', 'data-web-1') }));
    expect(plan.claimOwners.map((u) => [u.claim.metadata.name, u.ownerReferences.map((r) => r.kind)])).toEqual([
      ['data-web-0', ['StatefulSet']],
      ['data-web-1', ['StatefulSet', 'Pod']],
    ]);
  });

  it('take our references away when the policy goes back to Retain, keeping others', () => {
    const s = set({ replicas: 1, volumeClaimTemplates: data });
    const [claim] = claims('data-web-0');
    claim!.metadata.ownerReferences = [
      { apiVersion: 'apps.kruise.io/v1beta1', kind: 'StatefulSet', name: 'web', uid: 'uid-1' },
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'keep', uid: 'other' },
    ];
    const plan = planStatefulSet(input(s, [pod(s, 0)], { claims: [claim!] }));
    expect(plan.claimOwners.map((u) => u.ownerReferences.map((r) => r.uid))).toEqual([['other']]);
    expect(planStatefulSet(input(s, [pod(s, 0)], { claims: claims('data-web-0') })).claimOwners).toEqual([]);
  });
});

describe('failure conditions', () => {
  it('are set by type with the first failure’s message, and kept', () => {
    const status = computeStatus({
      set: set(),
      pods: [],
      currentRevision: NEW,
      updateRevision: NEW,
      collisionCount: 0,
      now: NOW,
    });
    const failed = withCondition(status, 'FailedCreatePod', 'create Pod web-0 failed: quota', NOW);
    expect(failed.conditions).toEqual([
      {
        type: 'FailedCreatePod',
        status: 'True',
        message: 'create Pod web-0 failed: quota',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ]);
    expect(withCondition(failed, 'FailedCreatePod', 'another', NOW + 1000)).toBe(failed);
  });
});

describe('unorderedUpdate', () => {
  const labelled = (p: Pod, labels: Record<string, string>): Pod => {
    Object.assign(p.metadata.labels!, labels);
    return p;
  };
  const parallel = (rollingUpdate: NonNullable<StatefulSet['spec']['updateStrategy']>['rollingUpdate']): StatefulSet =>
    set({ podManagementPolicy: 'Parallel', replicas: 4, updateStrategy: { rollingUpdate } });
  const deleted = (s: StatefulSet, pods: Pod[]): string[] =>
    planStatefulSet(input(s, pods)).delete.map((p) => p.metadata.name);

  it('weightPriority: the pod with the highest sum of matching weights first, ties by the higher ordinal', () => {
    const s = parallel({
      maxUnavailable: 2,
      unorderedUpdate: {
        priorityStrategy: {
          weightPriority: [
            { weight: 50, matchSelector: { matchLabels: { tier: 'canary' } } },
            { weight: 10, matchSelector: { matchLabels: { zone: 'a' } } },
          ],
        },
      },
    });
    const pods = [
      labelled(pod(s, 0, OLD), { tier: 'canary' }),
      labelled(pod(s, 1, OLD), { zone: 'a' }),
      pod(s, 2, OLD),
      pod(s, 3, OLD),
    ];
    expect(deleted(s, pods)).toEqual(['web-0', 'web-1']);
    pods[0] = pod(s, 0);
    pods[1] = pod(s, 1);
    expect(deleted(s, pods)).toEqual(['web-3', 'web-2']);
  });

  it('orderPriority: pods without the key first, then the higher integer suffix of the first key a pod has', () => {
    const s = parallel({
      unorderedUpdate: { priorityStrategy: { orderPriority: [{ orderedKey: 'rank' }, { orderedKey: 'other' }] } },
    });
    const pods = [
      labelled(pod(s, 0, OLD), { rank: 'r-1' }),
      labelled(pod(s, 1, OLD), { rank: 'r-12' }),
      labelled(pod(s, 2, OLD), { other: 'o-99' }),
      labelled(pod(s, 3, OLD), { rank: 'r-3' }),
    ];
    expect(deleted(s, pods)).toEqual(['web-1']);
    const none = [...pods.slice(0, 3), pod(s, 3, OLD)];
    expect(deleted(s, none)).toEqual(['web-3']);
  });

  it('partition counts pods kept at the current revision, updated pods at any ordinal included', () => {
    const s = parallel({ partition: 2, maxUnavailable: 4, unorderedUpdate: {} });
    const pods = [pod(s, 0), pod(s, 1, OLD), pod(s, 2, OLD), pod(s, 3, OLD)];
    expect(deleted(s, pods)).toEqual(['web-3']);
    const ordered = parallel({ partition: 2, maxUnavailable: 4 });
    expect(deleted(ordered, [pod(s, 0), pod(s, 1, OLD), pod(s, 2, OLD), pod(s, 3, OLD)])).toEqual(['web-3', 'web-2']);
  });

  it('gives a new pod the current revision while fewer than partition pods are outdated', () => {
    const s = parallel({ partition: 2, unorderedUpdate: {} });
    const plan = planStatefulSet(input(s, [pod(s, 0, OLD), pod(s, 3)]));
    expect(plan.create).toEqual([
      { ordinal: 1, revision: OLD },
      { ordinal: 2, revision: NEW },
    ]);
  });
});

describe('minReadySeconds', () => {
  /** A running pod ready since `secondsAgo`. */
  const readyFor = (s: StatefulSet, ordinal: number, secondsAgo: number, revision = NEW): Pod => {
    const p = pod(s, ordinal, revision);
    p.status!.conditions = [
      { type: 'Ready', status: 'True', lastTransitionTime: new Date(NOW - secondsAgo * 1000).toISOString() },
    ];
    return p;
  };

  it('OrderedReady creates the next pod only once the one before is ready for minReadySeconds', () => {
    const s = set({ updateStrategy: { rollingUpdate: { minReadySeconds: 10 } } });
    const early = planStatefulSet(input(s, [readyFor(s, 0, 4)]));
    expect([early.create, early.availableAfterMs]).toEqual([[], 6000]);
    const late = planStatefulSet(input(s, [readyFor(s, 0, 10)]));
    expect([late.create, late.availableAfterMs]).toEqual([[{ ordinal: 1, revision: NEW }], undefined]);
  });

  it('OrderedReady scale-in waits for the highest condemned pod to be available, unless it is the lowest unhealthy', () => {
    const s = set({ replicas: 1, updateStrategy: { rollingUpdate: { minReadySeconds: 10 } } });
    const victims = (pods: Pod[]): string[] => planStatefulSet(input(s, pods)).delete.map((p) => p.metadata.name);
    expect(victims([readyFor(s, 0, 60), readyFor(s, 1, 60), readyFor(s, 2, 3)])).toEqual([]);
    expect(victims([readyFor(s, 0, 60), readyFor(s, 1, 60), readyFor(s, 2, 30)])).toEqual(['web-2']);
    expect(victims([readyFor(s, 0, 60), readyFor(s, 1, 60), pod(s, 2, NEW, false)])).toEqual(['web-2']);
    expect(victims([readyFor(s, 0, 60), pod(s, 1, NEW, false), pod(s, 2, NEW, false)])).toEqual([]);
  });

  it('the rolling update counts a pod not ready for minReadySeconds as unavailable', () => {
    const s = set({ updateStrategy: { rollingUpdate: { minReadySeconds: 10 } } });
    const pods = [readyFor(s, 0, 60, OLD), readyFor(s, 1, 60, OLD), readyFor(s, 2, 5)];
    expect(planStatefulSet(input(s, pods)).delete).toEqual([]);
    pods[2] = readyFor(s, 2, 11);
    expect(planStatefulSet(input(s, pods)).delete.map((p) => p.metadata.name)).toEqual(['web-1']);
  });
});

describe('markPodNotReady', () => {
  const gated = (p: Pod, state?: string): Pod => {
    p.spec.readinessGates = [...(p.spec.readinessGates ?? []), { conditionType: 'KruisePodReady' }];
    if (state) p.metadata.labels!['lifecycle.apps.kruise.io/state'] = state;
    return p;
  };
  const prepared = (plan: ReturnType<typeof planStatefulSet>): unknown[] =>
    plan.prepare.map((p) => [p.pod.metadata.name, p.state, p.markPodNotReady, p.hook !== undefined]);

  it('asks for the preDelete key while the pod waits in PreparingDelete without it', () => {
    const s = set({
      replicas: 1,
      lifecycle: { preDelete: { labelsHandler: { hold: 'true' }, markPodNotReady: true } },
    });
    const hooked = gated(pod(s, 1), 'PreparingDelete');
    hooked.metadata.labels!.hold = 'true';
    expect(prepared(planStatefulSet(input(s, [pod(s, 0), hooked])))).toEqual([
      ['web-1', 'PreparingDelete', true, false],
    ]);
    hooked.status!.conditions!.push({
      type: 'KruisePodReady',
      status: 'False',
      message: '[{"userAgent":"Lifecycle","key":"preDeleteHook"}]',
    });
    expect(prepared(planStatefulSet(input(s, [pod(s, 0), hooked])))).toEqual([]);
  });

  it('moves a hooked pod to PreparingUpdate marked not ready, and an Updated one back with its hook', () => {
    const inPlaceUpdate = { labelsHandler: { drain: 'wait' }, markPodNotReady: true };
    const s = set({
      replicas: 1,
      lifecycle: { inPlaceUpdate },
      updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
    });
    const hooked = gated(pod(s, 0, OLD), 'Normal');
    hooked.metadata.labels!.drain = 'wait';
    expect(prepared(planStatefulSet(input(s, [hooked])))).toEqual([['web-0', 'PreparingUpdate', true, false]]);
    const updated = gated(pod(s, 0, OLD), 'Updated');
    const plan = planStatefulSet(input(s, [updated]));
    expect([prepared(plan), plan.inPlace]).toEqual([[['web-0', 'PreparingUpdate', true, true]], []]);
    expect(plan.prepare[0]!.hook).toEqual(inPlaceUpdate);
  });
});

describe('specified-delete', () => {
  const marked = (p: Pod): Pod => {
    p.metadata.labels!['apps.kruise.io/specified-delete'] = 'true';
    return p;
  };

  it('deletes a labelled pod whatever the partition, within maxUnavailable, before the update order', () => {
    const s = set({ updateStrategy: { rollingUpdate: { partition: 3 } } });
    const pods = [marked(pod(s, 0)), pod(s, 1), pod(s, 2)];
    expect(planStatefulSet(input(s, pods)).delete.map((p) => p.metadata.name)).toEqual(['web-0']);
    const busy = [marked(pod(s, 0)), pod(s, 1, NEW, false), pod(s, 2)];
    expect(planStatefulSet(input(s, busy)).delete).toEqual([]);
    const unready = [pod(s, 0), pod(s, 1), marked(pod(s, 2, NEW, false))];
    expect(planStatefulSet(input(s, unready)).delete.map((p) => p.metadata.name)).toEqual(['web-2']);
  });

  it('uses up the budget the rolling update would take, and goes through the preDelete hook', () => {
    const s = set({ replicas: 3, lifecycle: { preDelete: { labelsHandler: { hold: 'true' } } } });
    const pods = [pod(s, 0, OLD), marked(pod(s, 1, OLD)), pod(s, 2, OLD)];
    expect(planStatefulSet(input(s, pods)).delete.map((p) => p.metadata.name)).toEqual(['web-1']);
    pods[1]!.metadata.labels!.hold = 'true';
    const held = planStatefulSet(input(s, pods));
    expect([held.delete, held.prepare.map((p) => [p.pod.metadata.name, p.state])]).toEqual([
      [],
      [['web-1', 'PreparingDelete']],
    ]);
  });
});

describe('in-place updates by lifecycle state', () => {
  const s = set({
    replicas: 1,
    lifecycle: { inPlaceUpdate: { labelsHandler: { drain: 'wait' } } },
    updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } },
  });
  const inState = (state: string): Pod => {
    const p = pod(s, 0, OLD);
    p.metadata.labels!['lifecycle.apps.kruise.io/state'] = state;
    return p;
  };
  const step = (p: Pod): [string[], string[]] => {
    const plan = planStatefulSet(input(s, [p]));
    return [plan.inPlace.map((u) => u.pod.metadata.name), plan.prepare.map((x) => x.state)];
  };

  it('goes on for Updating, waits in PreparingDelete, and updates an unhooked Normal pod at once', () => {
    expect(step(inState('Updating'))).toEqual([['web-0'], []]);
    expect(step(inState('PreparingDelete'))).toEqual([[], []]);
    expect(step(inState('Normal'))).toEqual([['web-0'], []]);
  });

  it('waits with an Updated pod when the set has no inPlaceUpdate hook', () => {
    const bare = set({ replicas: 1, updateStrategy: { rollingUpdate: { podUpdatePolicy: 'InPlaceIfPossible' } } });
    const p = pod(bare, 0, OLD);
    p.metadata.labels!['lifecycle.apps.kruise.io/state'] = 'Updated';
    const plan = planStatefulSet(input(bare, [p]));
    expect([plan.inPlace, plan.prepare]).toEqual([[], []]);
  });
});
