import { describe, expect, it } from 'vitest';
import {
  ANNOTATION_INPLACE_UPDATE_GRACE,
  ANNOTATION_INPLACE_UPDATE_STATE,
  LifecycleState,
  type CloneSetSpec,
} from '@flotilla/api';
import { graceJson, stateJson, type InPlaceOptions } from './inplace.js';
import { newRevision } from './revisions.js';
import { cloneSet, NOW, ago, pod, type PodOptions } from './testing/fixtures.js';
import { planPodUpdate, planRefresh, selectPodsToUpdate, updateStepRuns } from './update-plan.js';
import type { ControllerRevision, Pod } from '../../kube/types.js';
import type { CloneSet } from './types.js';

function revisionOf(cs: CloneSet, number: number): ControllerRevision {
  return newRevision(cs, number, 0);
}

const v1 = cloneSet();
const v2 = cloneSet({
  template: {
    metadata: { labels: { app: 'web' } },
    spec: { containers: [{ name: 'main', image: 'registry.local/app:v2' }] },
  },
});
const envChange = cloneSet({
  template: {
    metadata: { labels: { app: 'web' } },
    spec: { containers: [{ name: 'main', image: 'registry.local/app:v1', env: [{ name: 'A', value: '1' }] }] },
  },
});
const old = revisionOf(v1, 1);
const next = revisionOf(v2, 2);
const recreateOnly = revisionOf(envChange, 2);

const at = (revision: ControllerRevision, o: PodOptions = {}): Pod =>
  pod({ revision: revision.metadata.name, state: LifecycleState.Normal, ...o });
const withSpec = (spec: Partial<CloneSetSpec>): CloneSet => cloneSet({ ...v2.spec, ...spec });

describe('planPodUpdate', () => {
  const decide = (cs: CloneSet, p: Pod, target = next) =>
    planPodUpdate({ cs, pod: p, target, revisions: [old, next, recreateOnly], dataOf: (r) => r.data });

  it('ReCreate marks the pod for deletion', () => {
    expect(decide(withSpec({ updateStrategy: { type: 'ReCreate' } }), at(old))).toEqual({ kind: 'recreate' });
  });

  it('InPlaceIfPossible updates an image change in place', () => {
    const plan = decide(withSpec({ updateStrategy: { type: 'InPlaceIfPossible' } }), at(old));
    expect(plan).toEqual({
      kind: 'inPlace',
      spec: { revision: next.metadata.name, containerImages: { main: 'registry.local/app:v2' } },
    });
  });

  it('InPlaceIfPossible falls back to recreate when more than images changed', () => {
    expect(decide(withSpec({ updateStrategy: { type: 'InPlaceIfPossible' } }), at(old), recreateOnly)).toEqual({
      kind: 'recreate',
    });
  });

  it("InPlaceOnly refuses what cannot be done in place, with OpenKruise's message", () => {
    expect(() =>
      decide(withSpec({ updateStrategy: { type: 'InPlaceOnly' } }), at(old, { name: 'cs-x' }), recreateOnly),
    ).toThrow('find Pod cs-x update strategy is InPlaceOnly but can not update in-place');
  });

  it('inPlaceUpdate hook: a hooked Normal pod goes to PreparingUpdate first, then waits, then updates', () => {
    const cs = withSpec({
      updateStrategy: { type: 'InPlaceIfPossible' },
      lifecycle: { inPlaceUpdate: { labelsHandler: { hold: 'true' } } },
    });
    expect(decide(cs, at(old, { labels: { hold: 'true' } }))).toEqual({ kind: 'preparingUpdate', fromUpdated: false });
    expect(decide(cs, at(old, { labels: { hold: 'true' }, state: 'PreparingUpdate' }))).toEqual({ kind: 'wait' });
    expect(decide(cs, at(old, { state: 'PreparingUpdate' })).kind).toBe('inPlace');
    expect(decide(cs, at(old, { state: 'Updated' }))).toEqual({ kind: 'preparingUpdate', fromUpdated: true });
  });

  it('a PreparingDelete pod may not be updated in place', () => {
    const cs = withSpec({ updateStrategy: { type: 'InPlaceIfPossible' } });
    expect(() => decide(cs, at(old, { name: 'cs-d', state: 'PreparingDelete' }))).toThrow(
      'not allowed to in-place update pod cs-d in state PreparingDelete',
    );
  });
});

describe('planRefresh', () => {
  const refresh = (p: Pod, lifecycle?: CloneSetSpec['lifecycle']) =>
    planRefresh({ lifecycle, pod: p, updateRevision: next.metadata.name, now: NOW });
  const state = (o: object): string =>
    stateJson({ revision: next.metadata.name, updateTimestamp: ago(10), lastContainerStatuses: null, ...o });

  it('a fresh pod gets InPlaceUpdateReady=True and leaves PreparingNormal', () => {
    expect(refresh(at(next, { state: 'PreparingNormal' }))).toEqual({ markReady: true, lifecycle: 'Normal' });
  });

  it('grace period running: wait the rest, rounded up to seconds', () => {
    const p = at(next, {
      state: 'Updating',
      annotations: {
        [ANNOTATION_INPLACE_UPDATE_STATE]: state({}),
        [ANNOTATION_INPLACE_UPDATE_GRACE]: graceJson({
          revision: next.metadata.name,
          containerImages: { main: 'x' },
          graceSeconds: 15,
        }),
      },
    });
    expect(refresh(p)).toEqual({ delayMs: 5000 });
  });

  it('grace period over: apply the pending images', () => {
    const p = at(next, {
      state: 'Updating',
      annotations: {
        [ANNOTATION_INPLACE_UPDATE_STATE]: state({}),
        [ANNOTATION_INPLACE_UPDATE_GRACE]: graceJson({
          revision: next.metadata.name,
          containerImages: { main: 'x' },
          graceSeconds: 5,
        }),
      },
    });
    expect(refresh(p).grace).toEqual({
      kind: 'apply',
      spec: { revision: next.metadata.name, containerImages: { main: 'x' }, graceSeconds: 5 },
    });
  });

  it('grace of a revision the pod no longer has is dropped', () => {
    const p = at(old, {
      annotations: {
        [ANNOTATION_INPLACE_UPDATE_GRACE]: graceJson({
          revision: next.metadata.name,
          containerImages: {},
          graceSeconds: 5,
        }),
      },
    });
    expect(refresh(p).grace).toEqual({ kind: 'drop' });
  });

  it('containers not restarted yet: nothing, the pod stays Updating', () => {
    const p = at(next, {
      state: 'Updating',
      annotations: {
        [ANNOTATION_INPLACE_UPDATE_STATE]: state({ lastContainerStatuses: { main: { imageID: 'same' } } }),
      },
    });
    p.spec.containers[0]!.image = 'registry.local/app:v2';
    p.status!.containerStatuses![0] = { name: 'main', image: 'registry.local/app:v1', imageID: 'same', ready: true };
    expect(refresh(p)).toEqual({});
  });

  it('next batch waits for the required containers to be ready, then starts', () => {
    const annotations = {
      [ANNOTATION_INPLACE_UPDATE_STATE]: state({
        lastContainerStatuses: {},
        nextContainerImages: { side: 'side:v2' },
        preCheckBeforeNext: { containersRequiredReady: ['main'] },
      }),
    };
    const waiting = at(next, { state: 'Updating', annotations, ready: false, phase: 'Running' });
    expect(refresh(waiting)).toEqual({});
    const ready = at(next, { state: 'Updating', annotations });
    expect(refresh(ready).nextBatch).toEqual({ revision: next.metadata.name, containerImages: { side: 'side:v2' } });
  });

  it('update completed: InPlaceUpdateReady=True and Updating → Normal', () => {
    const p = at(next, {
      state: 'Updating',
      annotations: {
        [ANNOTATION_INPLACE_UPDATE_STATE]: state({ lastContainerStatuses: { main: { imageID: 'old' } } }),
      },
    });
    p.status!.containerStatuses![0] = { name: 'main', image: 'registry.local/app:v2', imageID: 'new', ready: true };
    expect(refresh(p)).toEqual({ markReady: true, lifecycle: 'Normal' });
  });
});

describe('selectPodsToUpdate', () => {
  const select = (cs: CloneSet, pods: Pod[], current = old) =>
    selectPodsToUpdate({ cs, pods, currentRevision: current, updateRevision: next, now: NOW });
  const names = (r: { pods: Pod[] }): string[] => r.pods.map((p) => p.metadata.name);

  it('partition 99% of 4 updates exactly one pod', () => {
    const cs = withSpec({ replicas: 4, updateStrategy: { partition: '99%', maxUnavailable: '100%' } });
    const pods = ['a', 'b', 'c', 'd'].map((name) => at(old, { name }));
    expect(select(cs, pods).pods).toHaveLength(1);
  });

  it('maxUnavailable 20% of 10 updates 2 pods at a time', () => {
    const cs = withSpec({ replicas: 10 });
    const pods = Array.from({ length: 10 }, (_, i) => at(old, { name: `p${i}` }));
    expect(select(cs, pods).pods).toHaveLength(2);
  });

  it('paused updates nothing', () => {
    const cs = withSpec({ replicas: 2, updateStrategy: { paused: true } });
    expect(select(cs, [at(old), at(old)]).pods).toEqual([]);
  });

  it('skips PreparingDelete pods and pods in a grace period, but takes Updated ones', () => {
    const cs = withSpec({ replicas: 4, updateStrategy: { maxUnavailable: 4 } });
    const grace = { [ANNOTATION_INPLACE_UPDATE_GRACE]: '{}' };
    const pods = [
      at(old, { name: 'deleting', state: 'PreparingDelete' }),
      at(old, { name: 'grace', annotations: grace }),
      at(old, { name: 'updated', state: 'Updated' }),
      at(old, { name: 'normal' }),
    ];
    expect(names(select(cs, pods)).sort()).toEqual(['normal', 'updated']);
  });

  it('nothing to do once every pod is at the update revision', () => {
    expect(select(withSpec({ replicas: 2 }), [at(next), at(next)]).pods).toEqual([]);
  });

  it('OnDelete (OpenKruise v1.9.0) chooses no pod, whatever partition and maxUnavailable allow', () => {
    const cs = withSpec({ replicas: 3, updateStrategy: { type: 'OnDelete', maxUnavailable: '100%' } });
    expect(select(cs, [at(old, { name: 'a' }), at(old, { name: 'b' }), at(next, { name: 'c' })]).pods).toEqual([]);
  });
});

describe('updateStepRuns', () => {
  it.each([
    ['unset (ReCreate)', undefined, true],
    ['ReCreate', 'ReCreate', true],
    ['InPlaceIfPossible', 'InPlaceIfPossible', true],
    ['InPlaceOnly', 'InPlaceOnly', true],
    ['OnDelete: no refresh and no update at all', 'OnDelete', false],
  ])('%s', (_name, type, runs) => {
    expect(updateStepRuns(withSpec({ updateStrategy: type === undefined ? {} : { type } }))).toBe(runs);
  });
});

describe('in-place resource resize (gate InPlaceWorkloadVerticalScaling)', () => {
  const GATE: InPlaceOptions = { verticalScaling: true, resizeSubresource: true };
  const sized = (cpu: string, extra: object = {}): CloneSet =>
    cloneSet({
      updateStrategy: { type: 'InPlaceIfPossible' },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: {
          containers: [
            { name: 'main', image: 'registry.local/app:v1', resources: { requests: { cpu: '100m' }, limits: { cpu } } },
          ],
        },
      },
      ...extra,
    });
  const small = revisionOf(sized('200m'), 1);
  const large = revisionOf(sized('1'), 2);
  const decide = (cs: CloneSet, inPlace: InPlaceOptions = GATE) =>
    planPodUpdate({
      cs,
      pod: at(small),
      target: large,
      revisions: [small, large],
      dataOf: (r) => r.data,
      inPlace,
    });

  it('InPlaceIfPossible resizes in place with the gate, recreates without it', () => {
    expect(decide(sized('1'))).toEqual({
      kind: 'inPlace',
      spec: {
        revision: large.metadata.name,
        containerImages: {},
        containerResources: { main: { limits: { cpu: '1' } } },
      },
    });
    expect(decide(sized('1'), {})).toEqual({ kind: 'recreate' });
  });

  const refresh = (p: Pod, inPlace: InPlaceOptions = GATE) =>
    planRefresh({ lifecycle: undefined, pod: p, updateRevision: large.metadata.name, now: NOW, inPlace });
  const resizing = (o: object, reported?: object): Pod => {
    const p = at(large, {
      state: 'Updating',
      annotations: {
        [ANNOTATION_INPLACE_UPDATE_STATE]: stateJson({
          revision: large.metadata.name,
          updateTimestamp: ago(1),
          lastContainerStatuses: null,
          updateResources: true,
          ...o,
        }),
      },
    });
    p.spec.containers[0]!.resources = { requests: { cpu: '100m' }, limits: { cpu: '1' } };
    if (reported) p.status!.containerStatuses![0]!.resources = reported;
    return p;
  };

  it('the pod stays Updating until the kubelet reports the new resources, then is Normal', () => {
    expect(refresh(resizing({}, { requests: { cpu: '100m' }, limits: { cpu: '200m' } }))).toEqual({});
    expect(refresh(resizing({}, { requests: { cpu: '100m' }, limits: { cpu: '1' } }))).toEqual({
      markReady: true,
      lifecycle: 'Normal',
    });
  });

  it('a next batch holding only resources starts once the first batch is ready', () => {
    const p = resizing(
      {
        nextContainerResources: { side: { limits: { cpu: '2' } } },
        preCheckBeforeNext: { containersRequiredReady: ['main'] },
      },
      { requests: { cpu: '100m' }, limits: { cpu: '1' } },
    );
    expect(refresh(p)).toEqual({
      nextBatch: {
        revision: large.metadata.name,
        containerImages: {},
        containerResources: { side: { limits: { cpu: '2' } } },
      },
    });
  });
});
