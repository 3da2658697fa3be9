import { defaultDaemonSet, type DaemonSet, type DaemonSetV1beta1 } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import type { NodeLike } from '../../kube/node-fit.js';
import type { Pod } from '../../kube/types.js';
import { newDaemonPod, nodePlacement } from './daemon-pod.js';
import { planDaemonSet } from './plan.js';

const NOW = Date.parse('2026-01-01T00:10:00Z');

function daemonSet(rollingUpdate: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): DaemonSetV1beta1 {
  const ds = {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'DaemonSet',
    metadata: { name: 'agent', namespace: 'ns', uid: 'u1', generation: 2 },
    spec: {
      selector: { matchLabels: { app: 'agent' } },
      template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'v1' }] } },
      updateStrategy: { type: 'RollingUpdate', rollingUpdate },
      ...extra,
    },
    status: {
      desiredNumberScheduled: 0,
      currentNumberScheduled: 0,
      numberMisscheduled: 0,
      numberReady: 0,
      updatedNumberScheduled: 0,
    },
  };
  return defaultDaemonSet(ds as unknown as DaemonSet) as unknown as DaemonSetV1beta1;
}

const node = (name: string, labels: Record<string, string> = {}, taints: NodeLike['spec'] = {}): NodeLike => ({
  metadata: { name, labels },
  spec: taints,
});

let seq = 0;
function pod(ds: DaemonSetV1beta1, nodeName: string, hash: string, ready = true): Pod {
  const made = newDaemonPod(ds, nodeName, hash);
  seq++;
  return {
    ...made,
    metadata: {
      ...made.metadata,
      name: `p-${nodeName}-${hash}-${seq}`,
      creationTimestamp: `2026-01-01T00:00:${String(seq).padStart(2, '0')}Z`,
    },
    spec: { ...made.spec, nodeName } as Pod['spec'],
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: '2026-01-01T00:00:00Z' }],
    },
  };
}

const names = (pods: readonly Pod[]): string[] => pods.map((p) => p.spec.nodeName ?? '').sort();

describe('node placement', () => {
  it('follows nodeSelector and taints; daemon tolerations keep cordoned nodes', () => {
    const ds = daemonSet({}, {});
    ds.spec.template.spec!.nodeSelector = { role: 'edge' };
    expect(nodePlacement(ds, node('a', { role: 'edge' })).shouldRun).toBe(true);
    expect(nodePlacement(ds, node('b')).shouldRun).toBe(false);
    const tainted = node('c', { role: 'edge' }, { taints: [{ key: 'gpu', effect: 'NoSchedule' }] });
    expect(nodePlacement(ds, tainted)).toEqual({ shouldRun: false, shouldContinueRunning: true });
    const evicting = node('d', { role: 'edge' }, { taints: [{ key: 'gpu', effect: 'NoExecute' }] });
    expect(nodePlacement(ds, evicting)).toEqual({ shouldRun: false, shouldContinueRunning: false });
    const cordoned = node(
      'e',
      { role: 'edge' },
      { unschedulable: true, taints: [{ key: 'node.kubernetes.io/unschedulable', effect: 'NoSchedule' }] },
    );
    expect(nodePlacement(ds, cordoned).shouldRun).toBe(true);
  });
});

describe('planDaemonSet', () => {
  it('creates one pod per eligible node, name-sorted, and deletes pods on nodes that may not keep them', () => {
    const ds = daemonSet();
    const evicting = node('z', {}, { taints: [{ key: 'k', effect: 'NoExecute' }] });
    const stray = pod(ds, 'z', 'h1');
    const plan = planDaemonSet({ ds, nodes: [node('b'), node('a'), evicting], pods: [stray], hash: 'h1', nowMs: NOW });
    expect(plan.create).toEqual(['a', 'b']);
    expect(plan.delete).toEqual([stray]);
    expect(plan.status).toMatchObject({
      desiredNumberScheduled: 2,
      currentNumberScheduled: 0,
      numberMisscheduled: 1,
      updateRevision: 'h1',
    });
  });

  it('Standard: replaces at most maxUnavailable old pods, highest node names first', () => {
    const ds = daemonSet({ maxUnavailable: 2 });
    const nodes = ['n1', 'n2', 'n3', 'n4'].map((n) => node(n));
    const pods = nodes.map((n) => pod(ds, n.metadata!.name!, 'old'));
    const plan = planDaemonSet({ ds, nodes, pods, hash: 'new', nowMs: NOW });
    expect(names(plan.replace)).toEqual(['n3', 'n4']);
    expect(plan.status).toMatchObject({
      desiredNumberScheduled: 4,
      numberReady: 4,
      numberAvailable: 4,
      updatedNumberScheduled: 0,
    });
  });

  it('Standard: an unavailable new pod uses up the budget', () => {
    const ds = daemonSet({ maxUnavailable: 1 });
    const nodes = ['n1', 'n2'].map((n) => node(n));
    const plan = planDaemonSet({
      ds,
      nodes,
      pods: [pod(ds, 'n1', 'old'), pod(ds, 'n2', 'new', false)],
      hash: 'new',
      nowMs: NOW,
    });
    expect(plan.replace).toEqual([]);
  });

  it('Surging: starts new pods next to old ones, then deletes the old once the new is available', () => {
    const ds = daemonSet({ maxSurge: 1, maxUnavailable: 0 });
    const nodes = ['n1', 'n2'].map((n) => node(n));
    const first = planDaemonSet({
      ds,
      nodes,
      pods: [pod(ds, 'n1', 'old'), pod(ds, 'n2', 'old')],
      hash: 'new',
      nowMs: NOW,
    });
    expect(first.create).toEqual(['n2']);
    const old2 = pod(ds, 'n2', 'old');
    const second = planDaemonSet({
      ds,
      nodes,
      pods: [pod(ds, 'n1', 'old'), old2, pod(ds, 'n2', 'new')],
      hash: 'new',
      nowMs: NOW,
    });
    expect(second.delete).toEqual([old2]);
  });

  it('Surging with minReadySeconds: keeps the old pod, and looks again when the new one becomes available', () => {
    const ds = daemonSet({ maxSurge: 1, maxUnavailable: 0 }, { minReadySeconds: 30 });
    const nodes = [node('n1')];
    const fresh = pod(ds, 'n1', 'new');
    fresh.status!.conditions = [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-01T00:09:50Z' }];
    const waiting = planDaemonSet({ ds, nodes, pods: [pod(ds, 'n1', 'old'), fresh], hash: 'new', nowMs: NOW });
    expect([waiting.delete, waiting.requeueAfterMs]).toEqual([[], 20_000]);
    const later = planDaemonSet({
      ds,
      nodes,
      pods: [pod(ds, 'n1', 'old'), fresh],
      hash: 'new',
      nowMs: NOW + 20_000,
    });
    expect(later.delete.map((p) => p.metadata.labels?.['controller-revision-hash'])).toEqual(['old']);
  });

  it('partition keeps that many nodes old; the selector picks which nodes update', () => {
    const byPartition = daemonSet({ maxUnavailable: 10, partition: 1 });
    byPartition.status!.desiredNumberScheduled = 3;
    const nodes = [node('n1', { pool: 'canary' }), node('n2'), node('n3')];
    const pods = nodes.map((n) => pod(byPartition, n.metadata!.name!, 'old'));
    expect(names(planDaemonSet({ ds: byPartition, nodes, pods, hash: 'new', nowMs: NOW }).replace)).toEqual([
      'n2',
      'n3',
    ]);
    const bySelector = daemonSet({ maxUnavailable: 10, selector: { matchLabels: { pool: 'canary' } } });
    expect(names(planDaemonSet({ ds: bySelector, nodes, pods, hash: 'new', nowMs: NOW }).replace)).toEqual(['n1']);
  });

  it('paused: no replacements, but missing pods are still created', () => {
    const ds = daemonSet({ paused: true });
    const nodes = [node('n1'), node('n2')];
    const paused = planDaemonSet({
      ds,
      nodes,
      pods: [pod(ds, 'n1', 'old'), pod(ds, 'n2', 'old')],
      hash: 'new',
      nowMs: NOW,
    });
    expect(paused.replace).toEqual([]);
    expect(planDaemonSet({ ds, nodes, pods: [pod(ds, 'n1', 'old')], hash: 'new', nowMs: NOW }).create).toEqual(['n2']);
  });

  it('partitionedScaling creates only desired − updated − partition new pods', () => {
    const ds = daemonSet({ partition: 2 }, { scaleStrategy: { partitionedScaling: true } });
    ds.status!.desiredNumberScheduled = 4;
    const nodes = ['n1', 'n2', 'n3', 'n4'].map((n) => node(n));
    expect(planDaemonSet({ ds, nodes, pods: [], hash: 'h', nowMs: NOW }).create).toEqual(['n1', 'n2']);
  });

  it('keeps only the oldest pod of a node without surge', () => {
    const ds = daemonSet();
    const older = pod(ds, 'n1', 'h');
    const newer = pod(ds, 'n1', 'h');
    expect(planDaemonSet({ ds, nodes: [node('n1')], pods: [newer, older], hash: 'h', nowMs: NOW }).delete).toEqual([
      newer,
    ]);
  });
});
