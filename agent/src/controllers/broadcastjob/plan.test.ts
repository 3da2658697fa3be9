import { defaultBroadcastJob, type BroadcastJob } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import type { Pod } from '../../kube/types.js';
import type { NodeLike } from '../../kube/node-fit.js';
import { isJobFinished, planBroadcastJob, ttlLeftMs, type PlanInput } from './plan.js';
import { assignedNode, podForNode } from './pod-template.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');

function job(spec: Partial<BroadcastJob['spec']> = {}, status?: BroadcastJob['status']): BroadcastJob {
  return defaultBroadcastJob({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'BroadcastJob',
    metadata: { name: 'bcj', namespace: 'ns', uid: 'uid-1' },
    spec: {
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } },
      ...spec,
    },
    ...(status ? { status } : {}),
  });
}

const nodes = (...names: string[]): NodeLike[] => names.map((name) => ({ metadata: { name, labels: {} } }));

function pod(j: BroadcastJob, node: string, phase = 'Running', extra: Partial<Pod['status']> = {}): Pod {
  const p = podForNode(j, node);
  return {
    ...p,
    metadata: { ...p.metadata, name: `bcj-${node}`, uid: `pod-${node}` },
    spec: p.spec,
    status: { phase, ...extra },
  } as Pod;
}

const plan = (input: Partial<PlanInput> & { job: BroadcastJob }): ReturnType<typeof planBroadcastJob> =>
  planBroadcastJob({ pods: [], nodes: nodes('a', 'b', 'c'), nowMs: NOW, ...input });

describe('pods of a BroadcastJob', () => {
  it('carry the job labels and a v1beta1 controller reference, pinned by node affinity', () => {
    const p = podForNode(job(), 'node-7');
    expect(p.metadata?.labels).toEqual({ 'broadcastjob-name': 'bcj', 'broadcastjob-controller-uid': 'uid-1' });
    expect(p.metadata?.generateName).toBe('bcj-');
    const held = job({ template: { metadata: { finalizers: ['x.io/hold'] }, spec: { containers: [] } } });
    expect(podForNode(held, 'n').metadata?.finalizers).toEqual(['x.io/hold']);
    expect(p.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'BroadcastJob',
        name: 'bcj',
        uid: 'uid-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(assignedNode({ ...p, metadata: { name: 'x' }, spec: { containers: [], ...p.spec } })).toBe('node-7');
  });

  it('are bound by nodeName instead, keeping the template affinity, when not assigned by the scheduler', () => {
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }],
        },
      },
    };
    const j = job({ template: { spec: { affinity, containers: [] } } });
    const bound = podForNode(j, 'node-7', false).spec as { nodeName?: string; affinity?: unknown };
    expect([bound.nodeName, bound.affinity]).toEqual(['node-7', affinity]);
    const scheduled = podForNode(j, 'node-7').spec as { nodeName?: string; affinity?: unknown };
    expect(scheduled.nodeName).toBeUndefined();
    expect(scheduled.affinity).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['node-7'] }] }],
        },
      },
    });
  });
});

describe('planBroadcastJob', () => {
  it('starts one pod per fitting node, without limit by default, and counts them active', () => {
    const tainted: NodeLike = { metadata: { name: 'd' }, spec: { taints: [{ key: 'x', effect: 'NoSchedule' }] } };
    const p = plan({ job: job(), nodes: [...nodes('c', 'a', 'b'), tainted] });
    expect(p.create).toEqual(['a', 'b', 'c']);
    expect(p.status).toMatchObject({
      desired: 3,
      active: 3,
      succeeded: 0,
      failed: 0,
      phase: 'running',
      startTime: iso(NOW),
    });
  });

  it.each([
    [1, ['a']],
    ['50%', ['a', 'b']],
    [0, []],
  ] as const)('paces the pods by parallelism %j', (parallelism, expected) => {
    expect(plan({ job: job({ parallelism }) }).create).toEqual(expected);
  });

  it('starts the next pod when one finishes, and completes when every node has a finished pod', () => {
    const j = job({ parallelism: 1 }, { startTime: iso(NOW - 5000), phase: 'running' });
    const next = plan({ job: j, pods: [pod(j, 'a', 'Succeeded')] });
    expect(next.create).toEqual(['b']);
    const done = plan({ job: j, pods: [pod(j, 'a', 'Succeeded'), pod(j, 'b', 'Failed'), pod(j, 'c', 'Succeeded')] });
    expect(done.status.phase).toBe('failed'); // FailFast: the failed pod wins
    const cont = job({ failurePolicy: { type: 'Continue' } }, { startTime: iso(NOW - 5000), phase: 'running' });
    const complete = plan({
      job: cont,
      pods: ['a', 'b', 'c'].map((n) => pod(cont, n, n === 'b' ? 'Failed' : 'Succeeded')),
    });
    expect(complete.status).toMatchObject({ phase: 'completed', completionTime: iso(NOW), succeeded: 2, failed: 1 });
    expect(complete.status.conditions).toEqual([
      {
        type: 'Complete',
        status: 'True',
        reason: 'Complete',
        message: 'Job completed, 2 pods succeeded, 1 pods failed',
        lastProbeTime: iso(NOW),
        lastTransitionTime: iso(NOW),
      },
    ]);
    expect(complete.events.map((e) => e.reason)).toEqual(['JobComplete']);
  });

  it('fails fast on a failed pod, deleting the active ones and counting them failed', () => {
    const j = job({}, { startTime: iso(NOW), phase: 'running' });
    const p = plan({ job: j, pods: [pod(j, 'a', 'Failed'), pod(j, 'b')] });
    expect(p.delete.map(assignedNode)).toEqual(['b']);
    expect(p.create).toEqual([]);
    expect(p.status).toMatchObject({ phase: 'failed', active: 0, failed: 2, completionTime: iso(NOW) });
    expect(p.status.conditions?.[0]).toMatchObject({ type: 'Failed', reason: 'Failed' });
    expect(p.events[0]).toMatchObject({ type: 'Warning', reason: 'failed pod is found' });
  });

  it('pauses on a failed pod under Pause, and stops starting pods while spec.paused', () => {
    const j = job({ failurePolicy: { type: 'Pause' } }, { startTime: iso(NOW), phase: 'running' });
    const p = plan({ job: j, pods: [pod(j, 'a', 'Failed')] });
    expect([p.status.phase, p.create, p.events.map((e) => e.reason)]).toEqual(['paused', [], ['Paused']]);
    const again = plan({ job: { ...j, status: p.status }, pods: [pod(j, 'a', 'Failed')] });
    expect(again.events).toEqual([]);
    const paused = plan({ job: job({ paused: true }, { startTime: iso(NOW), phase: 'running' }) });
    expect([paused.status.phase, paused.create]).toEqual(['paused', []]);
    const resumed = plan({ job: job({}, { startTime: iso(NOW), phase: 'paused' }) });
    expect([resumed.status.phase, resumed.create.length, resumed.events[0]?.reason]).toEqual([
      'running',
      3,
      'Continue',
    ]);
  });

  it('counts an OnFailure pod failed once its restarts exceed restartLimit', () => {
    const spec = { restartPolicy: 'OnFailure', containers: [{ name: 'main', image: 'busybox' }] };
    const j = job(
      { template: { spec }, failurePolicy: { type: 'Continue', restartLimit: 2 } },
      { startTime: iso(NOW) },
    );
    const restarts = (n: number): Pod =>
      pod(j, 'a', 'Running', { containerStatuses: [{ name: 'main', restartCount: n }] });
    expect(plan({ job: j, pods: [restarts(2)] }).status).toMatchObject({ active: 3, failed: 0 });
    expect(plan({ job: j, pods: [restarts(3)] }).status).toMatchObject({ active: 2, failed: 1 });
  });

  it('fails an Always job past activeDeadlineSeconds and asks to be woken at the deadline before', () => {
    const policy = { type: 'Always', activeDeadlineSeconds: 60 };
    const before = plan({ job: job({ completionPolicy: policy }, { startTime: iso(NOW - 20_000), phase: 'running' }) });
    expect([before.status.phase, before.requeueAfterMs]).toEqual(['running', 40_000]);
    const j = job({ completionPolicy: policy }, { startTime: iso(NOW - 60_000), phase: 'running' });
    const after = plan({ job: j, pods: [pod(j, 'a')] });
    expect(after.status).toMatchObject({ phase: 'failed', failed: 1, active: 0 });
    expect(after.status.conditions?.[0]?.message).toBe('Job ns/bcj was active longer than specified deadline');
    expect(after.events[0]?.reason).toBe('DeadlineExceeded');
  });

  it('starts no pod for a job being deleted, and still counts its pods and deletes misfits', () => {
    const j = job({
      template: {
        spec: { restartPolicy: 'Never', nodeSelector: { role: 'x' }, containers: [{ name: 'm', image: 'i' }] },
      },
    });
    const deleting: BroadcastJob = { ...j, metadata: { ...j.metadata, deletionTimestamp: iso(NOW) } };
    const labelled: NodeLike[] = [
      { metadata: { name: 'a', labels: { role: 'x' } } },
      { metadata: { name: 'b', labels: {} } },
      { metadata: { name: 'c', labels: { role: 'x' } } },
    ];
    const p = plan({ job: deleting, nodes: labelled, pods: [pod(j, 'a'), pod(j, 'b')] });
    expect(p.create).toEqual([]);
    expect(p.delete.map(assignedNode)).toEqual(['b']);
    expect(p.status).toMatchObject({ desired: 2, active: 1, failed: 1, phase: 'running' });
    expect(p.events).toEqual([]);
    // The same job not being deleted starts its pod on c.
    expect(plan({ job: j, nodes: labelled, pods: [pod(j, 'a'), pod(j, 'b')] }).create).toEqual(['c']);
  });

  it('never completes a Never job, and deletes a pod whose node no longer fits', () => {
    const j = job({
      completionPolicy: { type: 'Never' },
      template: {
        spec: { restartPolicy: 'Never', nodeSelector: { role: 'x' }, containers: [{ name: 'm', image: 'i' }] },
      },
    });
    const labelled: NodeLike[] = [
      { metadata: { name: 'a', labels: { role: 'x' } } },
      { metadata: { name: 'b', labels: {} } },
    ];
    const p = plan({ job: j, nodes: labelled, pods: [pod(j, 'a', 'Succeeded'), pod(j, 'b')] });
    expect(p.delete.map(assignedNode)).toEqual(['b']);
    expect(p.status).toMatchObject({ desired: 1, phase: 'running' });
    expect(p.status.conditions).toBeUndefined();
  });
});

describe('finished jobs', () => {
  it('are finished by a True Complete/Failed condition, and live ttlSecondsAfterFinished after', () => {
    const j = job(
      { completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 30 } },
      { completionTime: iso(NOW - 10_000), conditions: [{ type: 'Complete', status: 'True' }] },
    );
    expect(isJobFinished(j)).toBe(true);
    expect(ttlLeftMs(j, NOW)).toBe(20_000);
    expect(ttlLeftMs(job(), NOW)).toBeUndefined();
    expect(isJobFinished(job())).toBe(false);
  });
});
