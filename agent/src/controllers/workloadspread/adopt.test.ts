import type { WorkloadSpread, WorkloadSpreadSubset } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import type { NodeLike } from '../../kube/node-fit.js';
import { adoptPods } from './adopt.js';
import { planWorkloadSpread } from './plan.js';
import type { SpreadPod } from './subsets.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const ZONE = 'topology.kubernetes.io/zone';
const MATCHED = 'apps.kruise.io/matched-workloadspread';
const COST = 'controller.kubernetes.io/pod-deletion-cost';

const zone = (z: string) => ({ matchExpressions: [{ key: ZONE, operator: 'In', values: [z] }] });

function ws(subsets: WorkloadSpreadSubset[], annotations?: Record<string, string>): WorkloadSpread {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'ws', namespace: 'ns', generation: 1, ...(annotations ? { annotations } : {}) },
    spec: { targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' }, subsets },
  };
}

const NODES: Record<string, NodeLike> = {
  a1: { metadata: { name: 'a1', labels: { [ZONE]: 'zone-a', disk: 'ssd' } } },
  b1: { metadata: { name: 'b1', labels: { [ZONE]: 'zone-b' } } },
  t1: {
    metadata: { name: 't1', labels: { [ZONE]: 'zone-b' } },
    spec: { taints: [{ key: 'dedicated', value: 'batch', effect: 'NoSchedule' }] },
  },
};
const nodeOf = (name: string): NodeLike | undefined => NODES[name];

function pod(name: string, node?: string, subset?: string, created = 0): SpreadPod {
  return {
    metadata: {
      name,
      creationTimestamp: new Date(NOW - 10_000 + created).toISOString(),
      ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', controller: true }],
      ...(subset ? { annotations: { [MATCHED]: JSON.stringify({ name: 'ws', subset }) } } : {}),
    },
    spec: node ? { nodeName: node } : {},
    status: { phase: 'Running' },
  };
}

const subsetsOf = (adopted: ReturnType<typeof adoptPods>): Record<string, string> =>
  Object.fromEntries([...adopted].map(([p, a]) => [p, a.subset]));

describe('adoptPods', () => {
  it('matches pods by their node’s zone; placed (even in a removed subset), unbound, terminating and node-less pods stay out', () => {
    const spread = ws([
      { name: 'a', requiredNodeSelectorTerm: zone('zone-a'), maxReplicas: 2 },
      { name: 'b', requiredNodeSelectorTerm: zone('zone-b') },
    ]);
    const terminating = pod('gone', 'a1');
    terminating.metadata.deletionTimestamp = new Date(NOW).toISOString();
    const pods = [
      pod('old-a', 'a1'),
      pod('old-b', 'b1'),
      pod('placed', 'b1', 'a'),
      pod('removed-subset', 'b1', 'c'),
      pod('unbound'),
      pod('lost', 'x9'),
      terminating,
    ];
    expect(subsetsOf(adoptPods(spread, pods, 6, nodeOf))).toEqual({ 'old-a': 'a', 'old-b': 'b' });
  });

  it('scores preferred terms over room left, room left over the first subset; ties go to the first', () => {
    const preferSsd = {
      weight: 10,
      preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] },
    };
    // Both fit any node; a is full (one placed pod), so b wins on room, unless a is preferred.
    const full = ws([
      { name: 'a', maxReplicas: 1 },
      { name: 'b', maxReplicas: 1 },
    ]);
    expect(subsetsOf(adoptPods(full, [pod('p', 'b1', 'a'), pod('q', 'a1')], 2, nodeOf))).toEqual({ q: 'b' });
    const preferred = ws([
      { name: 'a', maxReplicas: 1, preferredNodeSelectorTerms: [preferSsd] },
      { name: 'b', maxReplicas: 1 },
    ]);
    expect(subsetsOf(adoptPods(preferred, [pod('p', 'b1', 'a'), pod('q', 'a1')], 2, nodeOf))).toEqual({ q: 'a' });
    // Room is counted down as pods are adopted: the second pod goes to b.
    expect(subsetsOf(adoptPods(full, [pod('q', 'a1'), pod('r', 'a1')], 2, nodeOf))).toEqual({ q: 'a', r: 'b' });
  });

  it('a subset whose patch the pod already carries scores above one with more room', () => {
    const spread = ws([{ name: 'a' }, { name: 'b', patch: { metadata: { labels: { tier: 'b' } } } }]);
    const labelled = pod('q', 'a1');
    labelled.metadata.labels = { tier: 'b' };
    expect(subsetsOf(adoptPods(spread, [labelled, pod('r', 'a1')], 2, nodeOf))).toEqual({ q: 'b', r: 'a' });
  });

  it('a node’s taint keeps pods out of a subset unless the pod or the subset tolerates it', () => {
    const strict = ws([{ name: 'b', requiredNodeSelectorTerm: zone('zone-b') }]);
    expect(subsetsOf(adoptPods(strict, [pod('q', 't1')], 1, nodeOf))).toEqual({});
    const tolerant = ws([
      { name: 'b', requiredNodeSelectorTerm: zone('zone-b'), tolerations: [{ key: 'dedicated', operator: 'Exists' }] },
    ]);
    expect(subsetsOf(adoptPods(tolerant, [pod('q', 't1')], 1, nodeOf))).toEqual({ q: 'b' });
  });

  it('patches the matched annotation and the subset patch’s metadata, unless told to ignore it', () => {
    const subsets = [
      { name: 'a', patch: { metadata: { labels: { tier: 'a' }, annotations: { note: 'x' } }, spec: { priority: 1 } } },
    ];
    expect(adoptPods(ws(subsets), [pod('q', 'a1')], 1, nodeOf).get('q')?.metadata).toEqual({
      labels: { tier: 'a' },
      annotations: { note: 'x', [MATCHED]: '{"name":"ws","subset":"a"}' },
    });
    const ignoring = ws(subsets, { 'workloadspread.kruise.io/ignore-patch-existing-pods-metadata': 'True' });
    expect(adoptPods(ignoring, [pod('q', 'a1')], 1, nodeOf).get('q')?.metadata).toEqual({
      annotations: { [MATCHED]: '{"name":"ws","subset":"a"}' },
    });
  });
});

describe('planWorkloadSpread with pods made before the WorkloadSpread', () => {
  it('counts adopted pods in their subsets and sets deletion costs per subset', () => {
    const spread = ws([
      { name: 'a', requiredNodeSelectorTerm: zone('zone-a'), maxReplicas: 2 },
      { name: 'b', requiredNodeSelectorTerm: zone('zone-b') },
    ]);
    const pods = [
      pod('a-0', 'a1', undefined, 0),
      pod('a-1', 'a1', undefined, 1),
      pod('a-2', 'a1', undefined, 2),
      pod('b-0', 'b1'),
    ];
    const plan = planWorkloadSpread(spread, { replicas: 4 }, pods, NOW, nodeOf)!;
    expect(subsetsOf(plan.adopted)).toEqual({ 'a-0': 'a', 'a-1': 'a', 'a-2': 'a', 'b-0': 'b' });
    expect(plan.status.subsetStatuses?.map((s) => [s.name, s.replicas, s.missingReplicas])).toEqual([
      ['a', 3, 0],
      ['b', 1, -1],
    ]);
    // a ranks first (+200); its youngest pod above the limit goes first (−100); b +100.
    expect(Object.fromEntries(plan.deletionCosts)).toEqual({ 'a-0': '200', 'a-1': '200', 'a-2': '-100', 'b-0': '100' });
    // Without nodes nothing is adopted: every pod is outside the subsets.
    const blind = planWorkloadSpread(spread, { replicas: 4 }, pods, NOW)!;
    expect(blind.adopted.size).toBe(0);
    expect(blind.status.subsetStatuses?.map((s) => s.replicas)).toEqual([0, 0]);
    expect(pods[0]!.metadata.annotations?.[COST]).toBeUndefined();
  });
});
