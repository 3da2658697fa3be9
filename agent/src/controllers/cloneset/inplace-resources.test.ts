import { describe, expect, it } from 'vitest';
import type { Container } from '@flotilla/api';
import {
  addResourceChange,
  qosClass,
  quantityEqual,
  resizePatch,
  resizeRestartsContainer,
  resourcesNotApplied,
  servesResizeSubresource,
  writeResources,
  type ContainerResources,
} from './inplace-resources.js';
import type { JsonPatchOp } from './json-diff.js';
import { pod } from './testing/fixtures.js';
import type { Pod } from '../../kube/types.js';

const containers: Container[] = [
  { name: 'main', image: 'a:1', resources: { requests: { cpu: '100m' }, limits: { cpu: '200m' } } },
  { name: 'side', image: 'b:1' },
];

describe('addResourceChange: only replacing a cpu or memory value is in place', () => {
  it.each<[string, JsonPatchOp, boolean]>([
    ['a cpu limit replaced', { op: 'replace', path: '/spec/containers/0/resources/limits/cpu', value: '1' }, true],
    ['a memory request', { op: 'replace', path: '/spec/containers/1/resources/requests/memory', value: '1Gi' }, true],
    ['a limit added', { op: 'add', path: '/spec/containers/0/resources/limits/memory', value: '1Gi' }, false],
    ['a request removed', { op: 'remove', path: '/spec/containers/0/resources/requests/cpu' }, false],
    ['limits appearing at once', { op: 'add', path: '/spec/containers/1/resources/limits', value: {} }, false],
    [
      'another resource',
      { op: 'replace', path: '/spec/containers/0/resources/limits/nvidia.com~1gpu', value: '1' },
      false,
    ],
    [
      'ephemeral storage',
      { op: 'replace', path: '/spec/containers/0/resources/limits/ephemeral-storage', value: '1' },
      false,
    ],
    ['claims', { op: 'replace', path: '/spec/containers/0/resources/claims/0/name', value: 'x' }, false],
    ['a container out of range', { op: 'replace', path: '/spec/containers/5/resources/limits/cpu', value: '1' }, false],
  ])('%s → %s', (_name, op, ok) => {
    const into: ContainerResources = {};
    expect(addResourceChange(op, containers, into)).toBe(ok);
    if (ok) expect(Object.keys(into)).toHaveLength(1);
  });

  it('collects values by container name, limits and requests apart', () => {
    const into: ContainerResources = {};
    addResourceChange({ op: 'replace', path: '/spec/containers/0/resources/limits/cpu', value: '1' }, containers, into);
    addResourceChange(
      { op: 'replace', path: '/spec/containers/0/resources/requests/cpu', value: '500m' },
      containers,
      into,
    );
    expect(into).toEqual({ main: { limits: { cpu: '1' }, requests: { cpu: '500m' } } });
  });
});

describe('qosClass (ComputePodQOS over cpu and memory)', () => {
  const c = (requests?: Record<string, string>, limits?: Record<string, string>): Container => ({
    name: 'c',
    resources: { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) },
  });
  const both = { cpu: '1', memory: '1Gi' };
  it.each<[string, Container[], Container[] | undefined, string]>([
    ['nothing', [c()], undefined, 'BestEffort'],
    ['only zero values', [c({ cpu: '0' }, { memory: '0' })], undefined, 'BestEffort'],
    ['only other resources', [c({ 'ephemeral-storage': '1Gi' })], undefined, 'BestEffort'],
    ['requests equal limits for cpu and memory', [c(both, both)], undefined, 'Guaranteed'],
    ['equal values written differently', [c({ cpu: '1000m', memory: '1024Mi' }, both)], undefined, 'Guaranteed'],
    ['limits only (templates are not defaulted)', [c(undefined, both)], undefined, 'Burstable'],
    ['a request below its limit', [c({ cpu: '500m', memory: '1Gi' }, both)], undefined, 'Burstable'],
    ['one container without memory limit', [c(both, both), c({ cpu: '1' }, { cpu: '1' })], undefined, 'Burstable'],
    ['an init container without limits', [c(both, both)], [c({ cpu: '1' })], 'Burstable'],
  ])('%s → %s', (_name, regular, init, expected) => {
    expect(qosClass({ containers: regular, ...(init ? { initContainers: init } : {}) })).toBe(expected);
  });
});

function podWith(resources: Container['resources'], extra: Partial<Container> = {}): Pod {
  const p = pod();
  p.spec.containers = [{ name: 'main', image: 'a:1', resources, ...extra }];
  return p;
}

describe('resizePatch and writeResources', () => {
  const current = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '1', memory: '128Mi' } };

  it('sends only the cpu and memory values that differ, per container', () => {
    const p = podWith(current);
    const wanted = { main: { requests: { cpu: '0.1', memory: '96Mi' }, limits: { cpu: '2', memory: '128Mi' } } };
    expect(resizePatch(p, wanted)).toEqual({
      spec: { containers: [{ name: 'main', resources: { limits: { cpu: '2' }, requests: { memory: '96Mi' } } }] },
    });
  });

  it('is undefined when the pod already has the values (a retried update after the resize)', () => {
    expect(resizePatch(podWith(current), { main: { limits: { cpu: '1000m' } } })).toBeUndefined();
    expect(resizePatch(podWith(current), { gone: { limits: { cpu: '2' } } })).toBeUndefined();
  });

  it('below Kubernetes 1.32 the values go into the pod spec instead', () => {
    const p = podWith({ limits: { cpu: '1' } });
    writeResources(p, { main: { limits: { cpu: '2' }, requests: { memory: '1Gi', 'nvidia.com/gpu': '1' } } });
    expect(p.spec.containers[0]!.resources).toEqual({ limits: { cpu: '2' }, requests: { memory: '1Gi' } });
  });
});

describe('resizeRestartsContainer (the not-ready rule of a resize-only update)', () => {
  const restart = (resourceName: string): Partial<Container> => ({
    resizePolicy: [
      { resourceName, restartPolicy: 'RestartContainer' },
      { resourceName: resourceName === 'cpu' ? 'memory' : 'cpu', restartPolicy: 'NotRequired' },
    ],
  });
  it.each<[string, Partial<Container>, ResourceRequirementsLike, boolean]>([
    ['no resizePolicy', {}, { limits: { cpu: '2' } }, false],
    ['memory restarts, cpu changes', restart('memory'), { limits: { cpu: '2' } }, false],
    ['memory restarts, a memory request changes', restart('memory'), { requests: { memory: '1Gi' } }, true],
    ['cpu restarts, a cpu limit changes', restart('cpu'), { limits: { cpu: '2' } }, true],
  ])('%s → %s', (_name, extra, change, expected) => {
    expect(resizeRestartsContainer(podWith({}, extra), { main: change })).toBe(expected);
  });
});

type ResourceRequirementsLike = ContainerResources[string];

describe('resourcesNotApplied (IsUpdateCompleted)', () => {
  const spec = { requests: { cpu: '500m', memory: '1Gi' }, limits: { cpu: '1', memory: '1Gi' } };
  function reported(resources: unknown, extraStatus = false): Pod {
    const p = podWith(spec);
    p.status!.containerStatuses = [{ name: 'main', ready: true, ...(resources === undefined ? {} : { resources }) }];
    if (extraStatus) p.status!.containerStatuses.push({ name: 'other', ready: true });
    return p;
  }

  it.each<[string, Pod, string | undefined]>([
    ['the same values', reported(spec), undefined],
    [
      'the same values written differently',
      reported({ requests: { cpu: '0.5', memory: '1024Mi' }, limits: { cpu: '1000m', memory: '1Gi' } }),
      undefined,
    ],
    [
      'an old value',
      reported({ ...spec, limits: { cpu: '500m', memory: '1Gi' } }),
      'container main resources not changed',
    ],
    [
      'a value more than the spec',
      reported({ ...spec, limits: { ...spec.limits, 'ephemeral-storage': '1Gi' } }),
      'container main resources not changed',
    ],
    ['no resources reported', reported(undefined), 'container main resources not changed'],
    ['statuses of other containers', reported(spec, true), 'some container status is not reported'],
  ])('%s → %s', (_name, p, expected) => {
    expect(resourcesNotApplied(p)).toBe(expected);
  });
});

describe('servesResizeSubresource (Kubernetes ≥ 1.32)', () => {
  it.each<[string, boolean]>([
    ['v1.36.3', true],
    ['v1.32.0', true],
    ['v1.33.2-gke.1200', true],
    ['v1.32+', true],
    ['v1.31.9', false],
    ['v2.0.0', true],
    ['garbage', false],
  ])('%s → %s', (version, expected) => {
    expect(servesResizeSubresource(version)).toBe(expected);
  });

  it('quantities compare by value', () => {
    expect(quantityEqual('1', '1000m')).toBe(true);
    expect(quantityEqual('1Gi', '1024Mi')).toBe(true);
    expect(quantityEqual('1G', '1Gi')).toBe(false);
    expect(quantityEqual(undefined, '1')).toBe(false);
  });
});
