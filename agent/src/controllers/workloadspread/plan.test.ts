import type { WorkloadSpread, WorkloadSpreadSubset } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { admitCreation, admitDeletion } from './admit.js';
import { injectSubset, strategicMerge } from './inject.js';
import { planWorkloadSpread } from './plan.js';
import type { SpreadPod } from './subsets.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const at = (ms: number): string => new Date(NOW + ms).toISOString();

function ws(subsets: WorkloadSpreadSubset[], kind = 'CloneSet'): WorkloadSpread {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name: 'ws', namespace: 'ns', generation: 3 },
    spec: {
      targetRef: { apiVersion: kind === 'CloneSet' ? 'apps.kruise.io/v1alpha1' : 'apps/v1', kind, name: 'web' },
      subsets,
    },
  };
}

const TWO_ZONES = [{ name: 'a', maxReplicas: 2 }, { name: 'b' }];

function pod(name: string, subset?: string, extra: Partial<SpreadPod['metadata']> = {}): SpreadPod {
  return {
    metadata: {
      name,
      creationTimestamp: at(-1000),
      ownerReferences: [{ apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web', controller: true }],
      ...(subset
        ? { annotations: { 'apps.kruise.io/matched-workloadspread': JSON.stringify({ name: 'ws', subset }) } }
        : {}),
      ...extra,
    },
    spec: { nodeName: 'n1' },
    status: { phase: 'Running' },
  };
}

describe('admission', () => {
  it('fills subset a up to its limit, then b, recording each creation', () => {
    let spread = ws(TWO_ZONES);
    const subsets: (string | undefined)[] = [];
    for (let i = 0; i < 4; i++) {
      const admitted = admitCreation(spread, pod(`p${i}`), `p${i}`, 6, at(0));
      subsets.push(admitted.subset);
      if (admitted.status) spread = { ...spread, status: admitted.status };
    }
    expect(subsets).toEqual(['a', 'a', 'b', 'b']);
    const a = spread.status!.versionedSubsetStatuses!.versionIgnored![0]!;
    expect(a).toMatchObject({ name: 'a', missingReplicas: 0, creatingPods: { p0: at(0), p1: at(0) } });
  });

  it('takes percentages of the workload’s replicas, rounded up', () => {
    const spread = ws([{ name: 'a', maxReplicas: '34%' }, { name: 'b' }]);
    const first = admitCreation(spread, pod('p'), 'p', 6, at(0));
    expect(first.status!.versionedSubsetStatuses!.versionIgnored![0]!.missingReplicas).toBe(3 - 1); // 34% of 6 = 2.04, rounded up to 3, one now creating
  });

  it('records a deletion in the pod’s subset, one more missing', () => {
    const spread = {
      ...ws(TWO_ZONES),
      status: {
        versionedSubsetStatuses: {
          versionIgnored: [
            { name: 'a', replicas: 2, missingReplicas: 0 },
            { name: 'b', replicas: 4, missingReplicas: -1 },
          ],
        },
      },
    };
    const admitted = admitDeletion(spread, pod('p0', 'a'), { name: 'ws', subset: 'a' }, 6, at(0));
    expect(admitted.status!.versionedSubsetStatuses!.versionIgnored![0]).toMatchObject({
      missingReplicas: 1,
      deletingPods: { p0: at(0) },
    });
  });

  it('starts a new Deployment version from the limits, so a surge keeps the ratio', () => {
    const old = [
      { name: 'a', replicas: 2, missingReplicas: 0 },
      { name: 'b', replicas: 4, missingReplicas: -1 },
    ];
    const spread = { ...ws(TWO_ZONES, 'Deployment'), status: { versionedSubsetStatuses: { v1: old } } };
    const surge = pod('new-1', undefined, {
      labels: { 'pod-template-hash': 'v2' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-v2', controller: true }],
    });
    expect(admitCreation(spread, surge, 'new-1', 6, at(0)).subset).toBe('a');
  });
});

describe('injection', () => {
  it('adds the required term to every pod term, tolerations, the patch and the annotation', () => {
    const pod = {
      metadata: { name: 'p', labels: { app: 'web' } },
      spec: {
        priorityClassName: 'low',
        priority: 10,
        containers: [{ name: 'main', image: 'nginx', env: [{ name: 'A', value: '1' }] }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: 'arch', operator: 'In', values: ['amd64'] }] }],
            },
          },
        },
      },
    };
    const out = injectSubset(
      pod,
      {
        name: 'a',
        requiredNodeSelectorTerm: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] },
        tolerations: [{ key: 'spot', operator: 'Exists' }],
        patch: {
          metadata: { labels: { zone: 'a' } },
          spec: { priorityClassName: 'high', containers: [{ name: 'main', env: [{ name: 'B', value: '2' }] }] },
        },
      },
      { name: 'ws', subset: 'a', uid: 'u1' },
    );
    expect(out.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms).toEqual([
      {
        matchExpressions: [
          { key: 'arch', operator: 'In', values: ['amd64'] },
          { key: 'zone', operator: 'In', values: ['a'] },
        ],
        matchFields: [],
      },
    ]);
    expect(out).toMatchObject({
      metadata: {
        labels: { app: 'web', zone: 'a' },
        annotations: { 'apps.kruise.io/matched-workloadspread': '{"name":"ws","subset":"a","uid":"u1"}' },
      },
      spec: { tolerations: [{ key: 'spot', operator: 'Exists' }], priorityClassName: 'high' },
    });
    expect(out.spec.priority).toBeUndefined();
    expect(out.spec.containers[0]!.env).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: '2' },
    ]);
  });

  it('merges strategically: named lists by name, null removes', () => {
    expect(
      strategicMerge({ a: 1, b: [1, 2], c: [{ name: 'x', v: 1 }] }, { a: null, b: [3], c: [{ name: 'y' }] }),
    ).toEqual({
      b: [3],
      c: [{ name: 'x', v: 1 }, { name: 'y' }],
    });
  });
});

describe('plan', () => {
  it('counts pods per subset, keeps fresh creations and drops expired ones with an event', () => {
    const spread = {
      ...ws(TWO_ZONES),
      status: {
        subsetStatuses: [
          { name: 'a', replicas: 0, missingReplicas: 1, creatingPods: { fresh: at(-5_000), stale: at(-31_000) } },
          { name: 'b', replicas: 0, missingReplicas: -1 },
        ],
      },
    };
    const plan = planWorkloadSpread(spread, { replicas: 6 }, [pod('p0', 'a'), pod('p1', 'b'), pod('p2', 'b')], NOW)!;
    expect(plan.status.subsetStatuses).toEqual([
      { name: 'a', replicas: 1, missingReplicas: 0, creatingPods: { fresh: at(-5_000) } },
      { name: 'b', replicas: 2, missingReplicas: -1 },
    ]);
    expect(plan.events.map((e) => e.reason)).toEqual(['CreatePodFailed']);
    expect(plan.requeueAfterMs).toBe(25_000);
    expect(plan.status.observedGeneration).toBe(3);
  });

  it('ranks deletion costs: a within its limit above b, surplus of a below every subset', () => {
    const pods = [
      pod('a1', 'a'),
      pod('a2', 'a'),
      pod('a3', 'a', { creationTimestamp: at(0) }),
      pod('b1', 'b'),
      pod('x'),
    ];
    const plan = planWorkloadSpread(ws(TWO_ZONES), { replicas: 6 }, pods, NOW)!;
    expect(Object.fromEntries(plan.deletionCosts)).toEqual({ a1: '200', a2: '200', a3: '-100', b1: '100', x: '-300' });
  });

  it('leaves costs that are already right, and has none for a Job', () => {
    const right = pod('a1', 'a', {
      annotations: {
        'apps.kruise.io/matched-workloadspread': '{"name":"ws","subset":"a"}',
        'controller.kubernetes.io/pod-deletion-cost': '200',
      },
    });
    expect(planWorkloadSpread(ws(TWO_ZONES), { replicas: 6 }, [right], NOW)!.deletionCosts.size).toBe(0);
    expect(planWorkloadSpread(ws(TWO_ZONES, 'Job'), { replicas: 6 }, [pod('a1', 'a')], NOW)!.deletionCosts.size).toBe(
      0,
    );
  });

  it('reschedules pods unschedulable past rescheduleCriticalSeconds under Adaptive', () => {
    const spread = ws([{ name: 'a', maxReplicas: 2 }, { name: 'b' }]);
    spread.spec.scheduleStrategy = { type: 'Adaptive', adaptive: { rescheduleCriticalSeconds: 10 } };
    const stuck: SpreadPod = {
      ...pod('a1', 'a'),
      spec: {},
      status: {
        phase: 'Pending',
        conditions: [
          { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', lastTransitionTime: at(-11_000) },
        ],
      },
    };
    const plan = planWorkloadSpread(spread, { replicas: 6 }, [stuck], NOW)!;
    expect(plan.reschedule).toEqual(['a1']);
    expect(plan.status.subsetStatuses![0]!.conditions).toEqual([
      { type: 'Schedulable', status: 'False', lastTransitionTime: at(0) },
    ]);
  });
});
