import { describe, expect, it } from 'vitest';
import { ANNOTATION_INPLACE_UPDATE_GRACE, ANNOTATION_INPLACE_UPDATE_STATE, cloneSetRevisionData } from '@flotilla/api';
import { createJsonPatch } from './json-diff.js';
import {
  calculateInPlaceSpec,
  graceJson,
  inPlaceUpdateIncomplete,
  patchSpecToPod,
  readGrace,
  readState,
  stateJson,
  updateNeedsUnready,
  type InPlaceUpdateState,
  type UpdateSpec,
} from './inplace.js';
import { cloneSet, NOW, pod } from './testing/fixtures.js';
import type { Pod } from '../../kube/types.js';
import type { CloneSet } from './types.js';

type Mutate = (cs: CloneSet) => void;

/** Parsed revision data of the fixture CloneSet after `mutate`. */
function data(mutate: Mutate = () => {}): unknown {
  const cs = cloneSet({
    template: {
      metadata: { labels: { app: 'web' }, annotations: { note: 'a' } },
      spec: {
        containers: [
          { name: 'main', image: 'registry.local/app:v1' },
          { name: 'side', image: 'registry.local/side:v1' },
        ],
      },
    },
  });
  mutate(cs);
  return JSON.parse(cloneSetRevisionData(cloneSet(cs.spec))) as unknown;
}

const image =
  (i: number, img: string): Mutate =>
  (cs) => {
    cs.spec.template.spec!.containers![i]!.image = img;
  };

describe('calculateInPlaceSpec: only image replaces and metadata changes are in place', () => {
  it.each<[string, Mutate, boolean]>([
    ['one image', image(0, 'registry.local/app:v2'), true],
    ['two images', (cs) => [image(0, 'a:2'), image(1, 'b:2')].forEach((m) => m(cs)), true],
    ['a template label', (cs) => (cs.spec.template.metadata!.labels!.extra = 'x'), true],
    ['an annotation removed', (cs) => delete cs.spec.template.metadata!.annotations!.note, true],
    ['an env var', (cs) => (cs.spec.template.spec!.containers![0]!.env = [{ name: 'A', value: '1' }]), false],
    ['a container added', (cs) => cs.spec.template.spec!.containers!.push({ name: 'x', image: 'x:1' }), false],
    ['containers swapped', (cs) => cs.spec.template.spec!.containers!.reverse(), false],
    ['an init container', (cs) => (cs.spec.template.spec!.initContainers = [{ name: 'i', image: 'i:1' }]), false],
    ['resources', (cs) => (cs.spec.template.spec!.containers![0]!.resources = { limits: { cpu: '1' } }), false],
  ])('%s → in place: %s', (_name, mutate, inPlace) => {
    expect(calculateInPlaceSpec(data(), data(mutate), 'cs-new') !== undefined).toBe(inPlace);
  });

  it('names images by container and turns metadata changes into a patch', () => {
    const spec = calculateInPlaceSpec(
      data(),
      data((cs) => {
        image(1, 'registry.local/side:v2')(cs);
        cs.spec.template.metadata!.labels!.extra = 'x';
        delete cs.spec.template.metadata!.annotations!.note;
      }),
      'cs-new',
      5,
    );
    expect(spec).toEqual({
      revision: 'cs-new',
      containerImages: { side: 'registry.local/side:v2' },
      metaDataPatch: { labels: { extra: 'x' }, annotations: { note: null } },
      graceSeconds: 5,
    });
  });

  it('createJsonPatch reports replace, add and remove with escaped pointers', () => {
    expect(createJsonPatch({ a: 1, 'b/c': [1, 2], d: { e: 1 } }, { a: 2, 'b/c': [1], d: {}, f: true })).toEqual([
      { op: 'replace', path: '/a', value: 2 },
      { op: 'remove', path: '/b~1c/1' },
      { op: 'remove', path: '/d/e' },
      { op: 'add', path: '/f', value: true },
    ]);
  });
});

function twoContainerPod(env?: { main?: string; side?: string }): Pod {
  const p = pod({ name: 'cs-a', revision: 'cs-old' });
  const prio = (v?: string): { env?: { name: string; value: string }[] } =>
    v === undefined ? {} : { env: [{ name: 'KRUISE_CONTAINER_PRIORITY', value: v }] };
  p.spec.containers = [
    { name: 'main', image: 'registry.local/app:v1', ...prio(env?.main) },
    { name: 'side', image: 'registry.local/side:v1', ...prio(env?.side) },
  ];
  p.status!.containerStatuses = [
    { name: 'main', image: 'registry.local/app:v1', imageID: 'app@sha256:1', ready: true },
    { name: 'side', image: 'registry.local/side:v1', imageID: 'side@sha256:1', ready: true },
  ];
  return p;
}

const both = { revision: 'cs-new', containerImages: { main: 'registry.local/app:v2', side: 'registry.local/side:v2' } };
const fresh = (): InPlaceUpdateState => ({
  revision: 'cs-new',
  updateTimestamp: '2026-01-01T00:10:00Z',
  lastContainerStatuses: null,
});

describe('patchSpecToPod: container priority batches', () => {
  it('without priorities every changed container updates in one batch', () => {
    const p = twoContainerPod();
    const state = fresh();
    patchSpecToPod(p, both, state, NOW);
    expect(p.spec.containers.map((c) => c.image)).toEqual(['registry.local/app:v2', 'registry.local/side:v2']);
    expect(state.lastContainerStatuses).toEqual({
      main: { imageID: 'app@sha256:1' },
      side: { imageID: 'side@sha256:1' },
    });
    expect(state.containerBatchesRecord?.map((b) => b.containers)).toEqual([['main', 'side']]);
    expect(readState(p)?.revision).toBe('cs-new');
    expect(readState(p)?.nextContainerImages).toBeUndefined();
  });

  it('with KRUISE_CONTAINER_PRIORITY the highest goes first, the rest wait in nextContainerImages', () => {
    const p = twoContainerPod({ side: '10' });
    const state = fresh();
    patchSpecToPod(p, both, state, NOW);
    expect(p.spec.containers.map((c) => c.image)).toEqual(['registry.local/app:v1', 'registry.local/side:v2']);
    expect(state.nextContainerImages).toEqual({ main: 'registry.local/app:v2' });
    expect(state.preCheckBeforeNext).toEqual({ containersRequiredReady: ['side'] });
    expect(inPlaceUpdateIncomplete(p)).toBe('containers left for the next batches');
  });

  it('the pod annotation container-launch-priority=Ordered updates containers in declaration order', () => {
    const p = twoContainerPod();
    p.metadata.annotations = { 'apps.kruise.io/container-launch-priority': 'Ordered' };
    const state = fresh();
    patchSpecToPod(p, both, state, NOW);
    expect(state.containerBatchesRecord?.[0]?.containers).toEqual(['main']);
  });

  it('the second batch records its batch and keeps the first one', () => {
    const p = twoContainerPod({ side: '10' });
    const state = fresh();
    patchSpecToPod(p, both, state, NOW);
    const second = readState(p)!;
    patchSpecToPod(p, { revision: 'cs-new', containerImages: second.nextContainerImages! }, second, NOW + 10_000);
    expect(second.containerBatchesRecord?.map((b) => b.containers)).toEqual([['side'], ['main']]);
    expect(second.nextContainerImages).toEqual({});
    expect(JSON.parse(p.metadata.annotations![ANNOTATION_INPLACE_UPDATE_STATE]!)).not.toHaveProperty(
      'nextContainerImages',
    );
  });
});

describe('completion detection', () => {
  function updated(statusImageId: string, statusImage: string): Pod {
    const p = twoContainerPod();
    patchSpecToPod(p, { revision: 'cs-new', containerImages: { main: 'registry.local/app:v2' } }, fresh(), NOW);
    p.status!.containerStatuses![0] = { name: 'main', image: statusImage, imageID: statusImageId, ready: true };
    return p;
  }

  it.each<[string, string, string, string | undefined]>([
    [
      'the imageID is unchanged and the image is the old one: not done',
      'app@sha256:1',
      'registry.local/app:v1',
      'container main imageID not changed',
    ],
    ['a new imageID: done', 'app@sha256:2', 'registry.local/app:v1', undefined],
    [
      'same imageID but the status shows the new image (same digest): done',
      'app@sha256:1',
      'registry.local/app:v2',
      undefined,
    ],
  ])('%s', (_name, imageID, image, expected) => {
    expect(inPlaceUpdateIncomplete(updated(imageID, image))).toBe(expected);
  });

  it('a container without status is not done', () => {
    const p = updated('app@sha256:2', 'x');
    p.status!.containerStatuses = [p.status!.containerStatuses![1]!];
    expect(inPlaceUpdateIncomplete(p)).toBe('no status yet for containers main');
  });

  it('a pod in its grace period is not done; a pod without state is', () => {
    const p = pod();
    expect(inPlaceUpdateIncomplete(p)).toBeUndefined();
    p.metadata.annotations = { [ANNOTATION_INPLACE_UPDATE_GRACE]: graceJson({ ...both, graceSeconds: 3 }) };
    expect(inPlaceUpdateIncomplete(p)).toBe('still in grace period of in-place update');
  });

  it('an image without a tag compares as :latest', () => {
    const p = updated('app@sha256:1', 'registry.local/app:latest');
    p.spec.containers[0]!.image = 'registry.local/app';
    expect(inPlaceUpdateIncomplete(p)).toBeUndefined();
  });
});

describe('annotations', () => {
  it('the state JSON has Go field order and leaves empty fields out', () => {
    const json = stateJson({ ...fresh(), lastContainerStatuses: { b: {}, a: { imageID: 'x' } }, updateImages: true });
    expect(json).toBe(
      '{"revision":"cs-new","updateTimestamp":"2026-01-01T00:10:00Z","lastContainerStatuses":{"a":{"imageID":"x"},"b":{}},"updateImages":true}',
    );
  });

  it('the grace spec round-trips, with the metadata patch as base64 bytes', () => {
    const spec = { ...both, metaDataPatch: { labels: { a: 'b', gone: null } }, graceSeconds: 30 };
    const json = graceJson(spec);
    expect(JSON.parse(json).metaDataPatch).toBe(
      Buffer.from('{"metadata":{"labels":{"a":"b","gone":null}}}').toString('base64'),
    );
    const p = pod();
    p.metadata.annotations = { [ANNOTATION_INPLACE_UPDATE_GRACE]: json };
    expect(readGrace(p)).toEqual(spec);
  });

  it('a malformed state annotation is a coded error naming the pod', () => {
    const p = pod({ name: 'cs-bad', annotations: { [ANNOTATION_INPLACE_UPDATE_STATE]: '{' } });
    expect(() => readState(p)).toThrow(
      expect.objectContaining({ code: 'CLONESET_ERR_INPLACE_STATE', message: expect.stringContaining('cs-bad') }),
    );
  });
});

describe('in-place resource resize (gate InPlaceWorkloadVerticalScaling)', () => {
  const GATE = { verticalScaling: true, resizeSubresource: true };
  const burstable = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };

  /** Revision data of a CloneSet whose containers both have `burstable` resources, after `mutate`. */
  function sized(mutate: Mutate = () => {}): unknown {
    return data((cs) => {
      for (const c of cs.spec.template.spec!.containers!) c.resources = structuredClone(burstable);
      mutate(cs);
    });
  }
  const cpuLimit =
    (i: number, v: string): Mutate =>
    (cs) => {
      cs.spec.template.spec!.containers![i]!.resources!.limits!.cpu = v;
    };

  it.each<[string, Mutate, boolean]>([
    ['a cpu limit', cpuLimit(0, '1'), true],
    ['a memory request', (cs) => (cs.spec.template.spec!.containers![1]!.resources!.requests!.memory = '96Mi'), true],
    ['a limit removed', (cs) => delete cs.spec.template.spec!.containers![0]!.resources!.limits!.memory, false],
    [
      'a resource added',
      (cs) => (cs.spec.template.spec!.containers![0]!.resources!.limits!['nvidia.com/gpu'] = '1'),
      false,
    ],
    [
      'a change making the pod Guaranteed (QoS class change)',
      (cs) => {
        for (const c of cs.spec.template.spec!.containers!)
          c.resources = { requests: burstable.limits, limits: burstable.limits };
      },
      false,
    ],
    [
      'an env var beside a resize',
      (cs) =>
        [
          cpuLimit(0, '1'),
          (x: CloneSet) => (x.spec.template.spec!.containers![0]!.env = [{ name: 'A', value: '1' }]),
        ].forEach((m) => m(cs)),
      false,
    ],
  ])('%s → in place: %s', (_name, mutate, inPlace) => {
    expect(calculateInPlaceSpec(sized(), sized(mutate), 'cs-new', 0, GATE) !== undefined).toBe(inPlace);
  });

  it('without the gate any resource change means recreate', () => {
    expect(calculateInPlaceSpec(sized(), sized(cpuLimit(0, '1')), 'cs-new')).toBeUndefined();
  });

  it('an image and resources together are one update spec', () => {
    const spec = calculateInPlaceSpec(
      sized(),
      sized((cs) => [cpuLimit(0, '1'), image(0, 'app:v2')].forEach((m) => m(cs))),
      'cs-new',
      0,
      GATE,
    );
    expect(spec).toEqual({
      revision: 'cs-new',
      containerImages: { main: 'app:v2' },
      containerResources: { main: { limits: { cpu: '1' } } },
    });
  });

  function resizedPod(env?: { side?: string }): Pod {
    const p = twoContainerPod(env);
    for (const c of p.spec.containers) c.resources = structuredClone(burstable);
    return p;
  }
  const resize = {
    revision: 'cs-new',
    containerImages: {},
    containerResources: { main: { limits: { cpu: '1' } }, side: { requests: { memory: '96Mi' } } },
  };

  it('with the resize subresource the values are resolved for it and the pod spec is left alone', () => {
    const p = resizedPod();
    const state = { ...fresh(), updateResources: true };
    expect(patchSpecToPod(p, resize, state, NOW, GATE)).toEqual(resize.containerResources);
    expect(p.spec.containers[0]!.resources).toEqual(burstable);
    expect(state.lastContainerStatuses).toBeNull();
    expect(JSON.parse(p.metadata.annotations![ANNOTATION_INPLACE_UPDATE_STATE]!)).toEqual({
      revision: 'cs-new',
      updateTimestamp: '2026-01-01T00:10:00Z',
      lastContainerStatuses: null,
      updateResources: true,
      containerBatchesRecord: [{ timestamp: '2026-01-01T00:10:00Z', containers: ['main', 'side'] }],
    });
  });

  it('without it (Kubernetes < 1.32) the values go into the pod spec of the update', () => {
    const p = resizedPod();
    expect(patchSpecToPod(p, resize, fresh(), NOW, { verticalScaling: true })).toEqual({});
    expect(p.spec.containers[0]!.resources!.limits).toEqual({ cpu: '1', memory: '128Mi' });
    expect(p.spec.containers[1]!.resources!.requests).toEqual({ cpu: '100m', memory: '96Mi' });
  });

  it('container priorities batch resources like images: the rest waits in nextContainerResources', () => {
    const p = resizedPod({ side: '10' });
    const state = fresh();
    expect(patchSpecToPod(p, resize, state, NOW, GATE)).toEqual({ side: { requests: { memory: '96Mi' } } });
    expect(state.nextContainerResources).toEqual({ main: { limits: { cpu: '1' } } });
    expect(state.preCheckBeforeNext).toEqual({ containersRequiredReady: ['side'] });
    expect(readState(p)?.nextContainerResources).toEqual({ main: { limits: { cpu: '1' } } });
    expect(inPlaceUpdateIncomplete(p, GATE)).toBe('containers left for the next batches');
  });

  it('the state and grace JSON write resources as Go does (limits, then requests, sorted keys)', () => {
    const resources = {
      b: { requests: { memory: '1Gi', cpu: '1' }, limits: { cpu: '2' } },
      a: { limits: { memory: '1Gi' } },
    };
    expect(stateJson({ ...fresh(), updateResources: true, nextContainerResources: resources })).toBe(
      '{"revision":"cs-new","updateTimestamp":"2026-01-01T00:10:00Z","lastContainerStatuses":null,"updateResources":true,' +
        '"nextContainerResources":{"a":{"limits":{"memory":"1Gi"}},"b":{"limits":{"cpu":"2"},"requests":{"cpu":"1","memory":"1Gi"}}}}',
    );
    const spec = { revision: 'cs-new', containerImages: {}, containerResources: resources, graceSeconds: 5 };
    expect(graceJson(spec)).toBe(
      '{"revision":"cs-new","containerResources":{"a":{"limits":{"memory":"1Gi"}},"b":{"limits":{"cpu":"2"},"requests":{"cpu":"1","memory":"1Gi"}}},"graceSeconds":5}',
    );
    const p = pod();
    p.metadata.annotations = { [ANNOTATION_INPLACE_UPDATE_GRACE]: graceJson(spec) };
    expect(readGrace(p)).toEqual(spec);
  });

  describe('completion: the kubelet reports the spec resources in every container status', () => {
    function afterResize(reported: Record<string, unknown> | undefined): Pod {
      const p = resizedPod();
      patchSpecToPod(p, resize, { ...fresh(), updateResources: true }, NOW, { verticalScaling: true });
      p.status!.containerStatuses = p.status!.containerStatuses!.map((s) => ({ ...s, resources: reported?.[s.name] }));
      return p;
    }
    const applied = {
      main: { requests: burstable.requests, limits: { cpu: '1', memory: '128Mi' } },
      side: { requests: { cpu: '100m', memory: '96Mi' }, limits: burstable.limits },
    };

    it.each<[string, Record<string, unknown> | undefined, string | undefined]>([
      ['nothing reported yet', undefined, 'container main resources not changed'],
      ['the old values', { main: burstable, side: burstable }, 'container main resources not changed'],
      ['one container resized', { main: applied.main, side: burstable }, 'container side resources not changed'],
      ['both resized', applied, undefined],
    ])('%s → %s', (_name, reported, expected) => {
      expect(inPlaceUpdateIncomplete(afterResize(reported), GATE)).toBe(expected);
    });

    it('without the gate the resources are not waited for', () => {
      expect(inPlaceUpdateIncomplete(afterResize(undefined))).toBeUndefined();
    });
  });

  describe('updateNeedsUnready', () => {
    const withPolicy = (policy?: string): Pod => {
      const p = resizedPod();
      if (policy) p.spec.containers[0]!.resizePolicy = [{ resourceName: 'cpu', restartPolicy: policy }];
      return p;
    };
    const cpuOnly = { revision: 'cs-new', containerImages: {}, containerResources: { main: { limits: { cpu: '1' } } } };
    it.each<[string, Pod, UpdateSpec, boolean]>([
      ['a resize that restarts nothing', withPolicy(), cpuOnly, false],
      ['a resize under resizePolicy NotRequired', withPolicy('NotRequired'), cpuOnly, false],
      ['a resize of a RestartContainer resource', withPolicy('RestartContainer'), cpuOnly, true],
      ['an image beside the resize', withPolicy(), { ...cpuOnly, containerImages: { main: 'app:v2' } }, true],
      ['an image only', withPolicy(), { revision: 'cs-new', containerImages: { main: 'app:v2' } }, true],
    ])('%s → %s', (_name, p, spec, expected) => {
      expect(updateNeedsUnready(p, spec, GATE)).toBe(expected);
    });
  });
});
