import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../errors.js';
import type { EventRecorder } from '../../runtime/events.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { newRevision, revisionTemplate } from './revisions.js';
import { executeScale, type ScaleRevisions } from './scale.js';
import { planScale } from './scale-plan.js';
import type { SyncContext } from './sync-context.js';
import type { CloneSetClient } from './client.js';
import { FakeClient } from './testing/fake-client.js';
import { cloneSet, NOW, pod } from './testing/fixtures.js';
import type { Pod } from '../../kube/types.js';
import type { CloneSet } from './types.js';

function context(cs: CloneSet, client: CloneSetClient, maxConcurrentCreates = 4): SyncContext & { recorded: string[] } {
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
    options: {
      maxConcurrentCreates,
      maxConcurrentWrites: 4,
      expectationRecheckMs: 1000,
      plan: {},
      inPlaceVerticalScaling: false,
    },
    inPlace: {},
    recorded,
  };
}

function revisions(cs: CloneSet): ScaleRevisions {
  const rev = newRevision(cs, 1, 0);
  const t = { name: rev.metadata.name, template: revisionTemplate(rev)! };
  return { current: t, update: t };
}

function scale(cs: CloneSet, pods: Pod[], client: CloneSetClient, maxConcurrentCreates = 4) {
  const ctx = context(cs, client, maxConcurrentCreates);
  const rev = revisions(cs).update.name;
  const plan = planScale({ cs, pods, pvcs: [], currentRevision: rev, updateRevision: rev, now: NOW });
  const result = executeScale(ctx, { plan, revisions: revisions(cs), claims: [] });
  return { ctx, result };
}

/** Lets every settled promise's handlers run (the scale step starts its next requests there). */
async function settle(): Promise<void> {
  await new Promise((r) => setImmediate(r));
}

/** A small deterministic random source for the orders of answers. */
function lcg(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

/**
 * Pod creations answered only when the test says so; checks at every start that the slow-start
 * window (started ≤ 1 + 2 × succeeded) holds.
 */
class ManualCreates {
  readonly fake = new FakeClient();
  readonly pending: { name: string; resolve: () => void; reject: (err: Error) => void }[] = [];
  readonly created: string[] = [];
  readonly violations: string[] = [];
  started = 0;
  maxInFlight = 0;

  constructor() {
    this.fake.createPod = (p: Pod) =>
      new Promise<void>((resolve, reject) => {
        this.started++;
        const name = p.metadata.name;
        if (this.started > 1 + 2 * this.created.length) {
          this.violations.push(`${name}: start ${this.started} after ${this.created.length} successes`);
        }
        this.pending.push({
          name,
          resolve: () => {
            this.created.push(name);
            resolve();
          },
          reject,
        });
        this.maxInFlight = Math.max(this.maxInFlight, this.pending.length);
      });
  }

  #take(name: string) {
    const i = this.pending.findIndex((p) => p.name === name);
    if (i < 0) throw new Error(`${name} is not in flight`);
    return this.pending.splice(i, 1)[0]!;
  }

  finish(names: string[]): void {
    for (const name of names) this.#take(name).resolve();
  }

  fail(name: string, err: Error): void {
    this.#take(name).reject(err);
  }

  /** Answers one request at a time (the one `pick` chooses) until none is in flight. */
  async drain(pick: (inFlight: number) => number): Promise<void> {
    for (await settle(); this.pending.length > 0; await settle()) {
      this.finish([this.pending[pick(this.pending.length)]!.name]);
    }
  }
}

describe('executeScale', () => {
  it('creates every pod with bounded concurrency, recording expectations first', async () => {
    const client = new FakeClient();
    const { ctx, result } = scale(cloneSet({ replicas: 10 }), [], client);
    expect(await result).toEqual({ modified: true });
    expect(client.ops('createPod')).toHaveLength(10);
    expect(client.maxInFlight).toBeLessThanOrEqual(4);
    // All ten expected until the informer sees them.
    expect(ctx.scaleExpectations.pending('ns/cs').creations).toHaveLength(10);
    expect(ctx.recorded.filter((r) => r === 'Normal SuccessfulCreate')).toHaveLength(10);
  });

  it('gives the batches 1, 2, 4, ... of DoItSlowly when requests complete together', async () => {
    const client = new ManualCreates();
    const { result } = scale(cloneSet({ replicas: 20 }), [], client.fake, 64);
    const waves: number[] = [];
    for (let done = 0; done < 20;) {
      await settle();
      waves.push(client.pending.length);
      done += client.pending.length;
      client.finish(client.pending.map((p) => p.name));
    }
    expect(await result).toEqual({ modified: true });
    expect(waves).toEqual([1, 2, 4, 8, 5]);
  });

  it('starts two creations as soon as one succeeds, without waiting for the slowest of its batch', async () => {
    const client = new ManualCreates();
    const { result } = scale(cloneSet({ replicas: 20 }), [], client.fake, 64);
    await settle();
    client.finish([client.pending[0]!.name]);
    await settle();
    const [slow, fast] = client.pending;
    client.finish([fast!.name]);
    await settle();
    // 1 + 2 × 2 successes, the slow one still in flight.
    expect(client.started).toBe(5);
    expect(client.pending.map((p) => p.name)).toContain(slow!.name);
    await client.drain(() => 0);
    expect(await result).toEqual({ modified: true });
    expect(client.started).toBe(20);
  });

  it('never starts more than 1 + 2 × successes nor more than the limit in flight, whatever the order of answers', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const client = new ManualCreates();
      const { ctx, result } = scale(cloneSet({ replicas: 100 }), [], client.fake, 8);
      const random = lcg(seed);
      await client.drain((n) => Math.floor(random() * n));
      expect(await result).toEqual({ modified: true });
      expect(client.started).toBe(100);
      expect(client.violations).toEqual([]);
      expect(client.maxInFlight).toBe(8);
      expect(ctx.scaleExpectations.pending('ns/cs').creations).toHaveLength(100);
    }
  });

  it('starts nothing after the first failure, lets the requests in flight finish and throws the first failure', async () => {
    const client = new ManualCreates();
    const { ctx, result } = scale(cloneSet({ replicas: 50 }), [], client.fake, 64);
    await settle();
    client.finish([client.pending[0]!.name]);
    await settle();
    const [failing, later] = client.pending;
    client.fail(failing!.name, new KubeApiError(403, 'exceeded quota'));
    await settle();
    // The failure closed the window: the other request is still in flight, nothing new started.
    expect(client.started).toBe(3);
    expect(client.pending.map((p) => p.name)).toEqual([later!.name]);
    client.fail(later!.name, new KubeApiError(500, 'etcd timeout'));
    const outcome = await result;
    expect(outcome.modified).toBe(true);
    expect(outcome.error?.message).toMatch(/failed to create pod cs-\w{5}: exceeded quota/);
    expect(client.started).toBe(3);
    // Only the pod that was created is still expected.
    expect(ctx.scaleExpectations.pending('ns/cs').creations).toEqual([client.created[0]]);
    expect(ctx.recorded.filter((r) => r === 'Warning FailedCreate')).toHaveLength(2);
  });

  it('keeps the pods created by requests in flight at the failure expected', async () => {
    const client = new ManualCreates();
    const { ctx, result } = scale(cloneSet({ replicas: 50 }), [], client.fake, 64);
    await settle();
    client.finish([client.pending[0]!.name]);
    await settle();
    const [failing, later] = client.pending;
    client.fail(failing!.name, new KubeApiError(403, 'exceeded quota'));
    await settle();
    client.finish([later!.name]);
    const outcome = await result;
    expect(outcome.error?.message).toMatch(/exceeded quota/);
    expect(client.started).toBe(3);
    expect(ctx.scaleExpectations.pending('ns/cs').creations.sort()).toEqual([...client.created].sort());
    expect(client.created).toHaveLength(2);
  });

  it('costs one request when the first creation fails', async () => {
    const client = new FakeClient();
    client.failWhen = (call) => (call.op === 'createPod' ? new KubeApiError(403, 'exceeded quota') : undefined);
    const { ctx, result } = scale(cloneSet({ replicas: 10 }), [], client);
    const outcome = await result;
    expect(outcome.modified).toBe(false);
    expect(outcome.error?.message).toMatch(/exceeded quota/);
    expect(client.ops('createPod')).toHaveLength(1);
    expect(ctx.scaleExpectations.pending('ns/cs').creations).toEqual([]);
  });

  it('stops after the first failure and forgets the expectations of pods never created', async () => {
    const client = new ManualCreates();
    const { ctx, result } = scale(cloneSet({ replicas: 10 }), [], client.fake, 4);
    await settle();
    client.finish([client.pending[0]!.name]);
    await settle();
    const [second, third] = client.pending;
    client.finish([second!.name]);
    await settle();
    // 1, then 2; the second's success started two more before the third failed.
    expect(client.started).toBe(5);
    client.fail(third!.name, new KubeApiError(403, 'exceeded quota'));
    await client.drain(() => 0);
    const outcome = await result;
    expect(outcome.modified).toBe(true);
    expect(outcome.error?.message).toMatch(/failed to create pod cs-\w{5}: exceeded quota/);
    expect(client.started).toBe(5);
    expect(ctx.scaleExpectations.pending('ns/cs').creations).toHaveLength(4);
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
