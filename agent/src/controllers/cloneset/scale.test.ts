import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../errors.js';
import type { EventRecorder } from '../../runtime/events.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { newRevision, revisionTemplate } from './revisions.js';
import { executeScale, type ScaleRevisions } from './scale.js';
import { planScale } from './scale-plan.js';
import type { SyncContext } from './sync-context.js';
import { FakeClient } from './testing/fake-client.js';
import { cloneSet, NOW, pod } from './testing/fixtures.js';
import type { CloneSet, Pod } from './types.js';

function context(cs: CloneSet, client: FakeClient): SyncContext & { recorded: string[] } {
  const recorded: string[] = [];
  return {
    key: 'ns/cs',
    cs,
    client,
    scaleExpectations: new ScaleExpectations(),
    resourceVersions: new ResourceVersionExpectations(),
    events: {
      event: (_o: unknown, type: string, reason: string) => recorded.push(`${type} ${reason}`),
    } as unknown as EventRecorder,
    log: pino({ level: 'silent' }),
    now: NOW,
    options: { maxConcurrentCreates: 4, maxConcurrentWrites: 4, expectationRecheckMs: 1000, plan: {} },
    recorded,
  };
}

function revisions(cs: CloneSet): ScaleRevisions {
  const rev = newRevision(cs, 1, 0);
  const t = { name: rev.metadata.name, template: revisionTemplate(rev)! };
  return { current: t, update: t };
}

function scale(cs: CloneSet, pods: Pod[], client: FakeClient) {
  const ctx = context(cs, client);
  const rev = revisions(cs).update.name;
  const plan = planScale({ cs, pods, pvcs: [], currentRevision: rev, updateRevision: rev, now: NOW });
  const result = executeScale(ctx, { plan, revisions: revisions(cs), claims: [] });
  return { ctx, result };
}

describe('executeScale', () => {
  it('creates in slow-start batches 1, 2, 4, ... with bounded concurrency, recording expectations first', async () => {
    const client = new FakeClient();
    const { ctx, result } = scale(cloneSet({ replicas: 10 }), [], client);
    expect(await result).toEqual({ modified: true });
    expect(client.ops('createPod')).toHaveLength(10);
    expect(client.maxInFlight).toBeLessThanOrEqual(4);
    // All ten expected until the informer sees them.
    expect(ctx.scaleExpectations.pending('ns/cs').creations).toHaveLength(10);
    expect(ctx.recorded.filter((r) => r === 'Normal SuccessfulCreate')).toHaveLength(10);
  });

  it('stops after the first failing batch and forgets the expectations of pods never created', async () => {
    const client = new FakeClient();
    let creates = 0;
    client.failWhen = (call) =>
      call.op === 'createPod' && ++creates === 3 ? new KubeApiError(403, 'exceeded quota') : undefined;
    const { ctx, result } = scale(cloneSet({ replicas: 10 }), [], client);
    const outcome = await result;
    expect(outcome.modified).toBe(true);
    expect(outcome.error?.message).toMatch(/failed to create pod cs-\w{5}: exceeded quota/);
    // Batch 1 (1 pod) and batch 2 (2 pods, one failing); batch 3 never starts.
    expect(client.ops('createPod')).toHaveLength(3);
    expect(ctx.scaleExpectations.pending('ns/cs').creations).toHaveLength(2);
    expect(ctx.recorded).toContain('Warning FailedCreate');
  });

  it("creates each pod's PVCs before the pod", async () => {
    const client = new FakeClient();
    const cs = cloneSet({ replicas: 1, volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: {} }] });
    await scale(cs, [], client).result;
    const [claim, created] = client.calls;
    expect(claim?.op).toBe('createClaim');
    expect(created?.op).toBe('createPod');
    expect(claim?.name).toBe(`data-${created?.name}`);
  });

  it('deletes a pod with its PVCs and records the deletion expectation', async () => {
    const client = new FakeClient();
    const cs = cloneSet({ replicas: 1 });
    const rev = revisions(cs).update.name;
    const pods = [
      pod({ name: 'cs-aaaaa', revision: rev }),
      pod({
        name: 'cs-bbbbb',
        revision: rev,
        ready: false,
        labels: { 'apps.kruise.io/cloneset-instance-id': 'bbbbb' },
      }),
    ];
    const ctx = context(cs, client);
    const claims = [
      { metadata: { name: 'data-cs-bbbbb', labels: { 'apps.kruise.io/cloneset-instance-id': 'bbbbb' } } },
    ];
    const plan = planScale({ cs, pods, pvcs: claims, currentRevision: rev, updateRevision: rev, now: NOW });
    expect(await executeScale(ctx, { plan, revisions: revisions(cs), claims })).toEqual({ modified: true });
    expect(client.ops()).toEqual(['deletePod cs-bbbbb', 'deleteClaim data-cs-bbbbb']);
    expect(ctx.scaleExpectations.pending('ns/cs').deletions).toEqual(['cs-bbbbb', 'data-cs-bbbbb']);
  });
});
