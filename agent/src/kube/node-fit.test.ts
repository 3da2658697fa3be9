import { describe, expect, it } from 'vitest';
import { nodeFit, tolerates, type NodeLike, type SchedulingSpec } from './node-fit.js';

const node = (extra: Partial<NodeLike['spec']> = {}, labels: Record<string, string> = {}): NodeLike => ({
  metadata: { name: 'n1', labels: { zone: 'a', ...labels } },
  spec: extra,
  status: { allocatable: { cpu: '2', memory: '4Gi', pods: '110' } },
});

const fits = (spec: SchedulingSpec, n: NodeLike = node()): boolean => nodeFit(spec, n).fits;

describe('nodeFit', () => {
  it('takes nodeName, nodeSelector and required affinity terms (labels and metadata.name)', () => {
    expect(fits({ nodeName: 'n1' })).toBe(true);
    expect(fits({ nodeName: 'n2' })).toBe(false);
    expect(fits({ nodeSelector: { zone: 'a' } })).toBe(true);
    expect(fits({ nodeSelector: { zone: 'b' } })).toBe(false);
    const required = (terms: object[]): SchedulingSpec => ({
      affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } },
    });
    expect(fits(required([{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }]))).toBe(false);
    expect(
      fits(
        required([
          { matchExpressions: [{ key: 'zone', operator: 'In', values: ['b'] }] },
          { matchFields: [{ key: 'metadata.name', operator: 'In', values: ['n1'] }] },
        ]),
      ),
    ).toBe(true);
    expect(fits(required([{ matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] }]))).toBe(true);
    expect(fits(required([{}]))).toBe(false);
  });

  it('refuses untolerated NoSchedule/NoExecute taints, not PreferNoSchedule', () => {
    const tainted = node({ taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] });
    expect(nodeFit({}, tainted)).toEqual({
      fits: false,
      reason: "node(s) had taint {dedicated: db}, that the pod didn't tolerate",
    });
    expect(fits({ tolerations: [{ key: 'dedicated', operator: 'Exists' }] }, tainted)).toBe(true);
    expect(fits({ tolerations: [{ key: 'dedicated', value: 'web' }] }, tainted)).toBe(false);
    expect(fits({}, node({ taints: [{ key: 'soft', effect: 'PreferNoSchedule' }] }))).toBe(true);
  });

  it('refuses an unschedulable node unless its taint is tolerated', () => {
    expect(fits({}, node({ unschedulable: true }))).toBe(false);
    expect(fits({ tolerations: [{ operator: 'Exists' }] }, node({ unschedulable: true }))).toBe(true);
  });

  it('compares requests (containers summed, the largest init container) with allocatable', () => {
    const requests = (cpu: string): SchedulingSpec['containers'] => [{ resources: { requests: { cpu } } }];
    expect(fits({ containers: [...requests('1')!, ...requests('1')!] })).toBe(true);
    expect(nodeFit({ containers: requests('2500m') }, node())).toEqual({ fits: false, reason: 'Insufficient cpu' });
    expect(fits({ containers: requests('1'), initContainers: requests('3') })).toBe(false);
    expect(fits({ containers: [{ resources: { requests: { 'example.com/gpu': '1' } } }] })).toBe(false);
  });
});

describe('tolerates', () => {
  it.each([
    [{ operator: 'Exists' }, true],
    [{ key: 'k', operator: 'Equal', value: 'v' }, true],
    [{ key: 'k', value: 'w' }, false],
    [{ key: 'k', operator: 'Exists', effect: 'NoExecute' }, false],
    [{ key: 'other', operator: 'Exists' }, false],
  ])('%j → %s', (toleration, expected) => {
    expect(tolerates(toleration, { key: 'k', value: 'v', effect: 'NoSchedule' })).toBe(expected);
  });
});
