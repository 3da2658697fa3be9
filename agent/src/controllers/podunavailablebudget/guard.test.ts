import type { PodUnavailableBudget } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../errors.js';
import type { Pod } from '../../kube/types.js';
import { systemClock } from '../../runtime/clock.js';
import { pubGuard, type PubQuery, type PubStore, type PubVerdict } from './guard.js';

const NOW_MS = Date.parse('2026-01-01T00:00:00Z');

function pod(name: string): Pod {
  return {
    metadata: { name, namespace: 'ns', annotations: { 'kruise.io/related-pub': 'web' } },
    spec: { containers: [{ name: 'main', image: 'nginx:1' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

function budget(allowed: number): PodUnavailableBudget {
  return {
    apiVersion: 'policy.kruise.io/v1alpha1',
    kind: 'PodUnavailableBudget',
    metadata: { name: 'web', namespace: 'ns', resourceVersion: '1' },
    spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: allowed },
    status: { unavailableAllowed: allowed, currentAvailable: 10, desiredAvailable: 10 - allowed, totalReplicas: 10 },
  };
}

/** A budget kept as the apiserver keeps it: each write must carry the current resourceVersion. */
class BudgetServer implements PubStore {
  writes: PodUnavailableBudget[] = [];
  reads = 0;
  /** Writes that fail with this error instead of being stored, one per entry. */
  failures: Error[] = [];
  /** Runs before each write is checked (another writer changing the budget meanwhile). */
  beforeWrite: (() => void) | undefined;

  constructor(public pub: PodUnavailableBudget) {}

  bump(status: Partial<NonNullable<PodUnavailableBudget['status']>>): void {
    const rv = String(Number(this.pub.metadata?.resourceVersion) + 1);
    this.pub = {
      ...this.pub,
      metadata: { ...this.pub.metadata, resourceVersion: rv },
      status: { ...this.pub.status!, ...status },
    };
  }

  getPod(): Promise<Pod | undefined> {
    return Promise.resolve(undefined);
  }
  getPub(): Promise<PodUnavailableBudget | undefined> {
    this.reads++;
    return Promise.resolve(structuredClone(this.pub));
  }
  getWorkload(): Promise<undefined> {
    return Promise.resolve(undefined);
  }
  async updateStatus(pub: PodUnavailableBudget): Promise<PodUnavailableBudget> {
    await new Promise((r) => setTimeout(r, 5));
    this.beforeWrite?.();
    this.beforeWrite = undefined;
    const failure = this.failures.shift();
    if (failure) throw failure;
    if (pub.metadata?.resourceVersion !== this.pub.metadata?.resourceVersion) {
      throw new KubeApiError(409, 'the object has been modified');
    }
    this.writes.push(pub);
    this.bump(pub.status!);
    return structuredClone(this.pub);
  }
}

function guardOn(server: BudgetServer) {
  const denied: string[] = [];
  const guard = pubGuard({
    store: server,
    clock: { ...systemClock, now: () => NOW_MS },
    inPlaceResize: false,
    onDenied: (p) => denied.push(p.metadata.name),
  });
  const deleting = (name: string, dryRun = false): PubQuery => ({
    operation: 'DELETE',
    namespace: 'ns',
    podName: name,
    pod: pod(name),
    dryRun,
  });
  return { guard, denied, deleting };
}

const ALLOWED: PubVerdict = { allowed: true };

describe('PodUnavailableBudget guard', () => {
  it('settles admissions that arrive during a write together, with one write that records every pod', async () => {
    const server = new BudgetServer(budget(8));
    const { guard, deleting } = guardOn(server);
    const names = ['p0', 'p1', 'p2', 'p3', 'p4'];
    const verdicts = await Promise.all(names.map((n) => guard.admit(deleting(n))));
    expect(verdicts).toEqual(names.map(() => ALLOWED));
    // The first goes alone; the four that waited behind its write share the next one.
    expect(server.writes.map((w) => Object.keys(w.status?.disruptedPods ?? {}).length)).toEqual([1, 5]);
    expect(server.pub.status?.unavailableAllowed).toBe(3);
    expect(Object.keys(server.pub.status?.disruptedPods ?? {}).sort()).toEqual(names);
  });

  it('lets through in arrival order only what the budget allows, refusing the rest with an event', async () => {
    const server = new BudgetServer(budget(2));
    const { guard, denied, deleting } = guardOn(server);
    const verdicts = await Promise.all(['a', 'b', 'c', 'd'].map((n) => guard.admit(deleting(n))));
    expect(verdicts.map((v) => v.allowed)).toEqual([true, true, false, false]);
    expect(verdicts[2]).toMatchObject({ code: 403, message: expect.stringContaining('pub unavailable allowed') });
    expect(denied).toEqual(['c', 'd']);
    expect(server.pub.status?.unavailableAllowed).toBe(0);
    expect(Object.keys(server.pub.status?.disruptedPods ?? {}).sort()).toEqual(['a', 'b']);
  });

  it('decides a batch again on a fresh read when another writer changed the budget', async () => {
    const server = new BudgetServer(budget(5));
    const { guard, denied, deleting } = guardOn(server);
    await guard.admit(deleting('first'));
    // The controller recounts meanwhile: only one more may go.
    server.beforeWrite = () => server.bump({ unavailableAllowed: 1 });
    const verdicts = await Promise.all(['x', 'y', 'z'].map((n) => guard.admit(deleting(n))));
    expect(verdicts.map((v) => v.allowed)).toEqual([true, false, false]);
    expect(denied).toEqual(['y', 'z']);
    expect(server.pub.status).toMatchObject({ unavailableAllowed: 0, disruptedPods: { first: expect.any(String) } });
    expect(Object.keys(server.pub.status?.disruptedPods ?? {}).sort()).toEqual(['first', 'x']);
  });

  it('pays once for a pod asked about twice in one batch, and lets both through', async () => {
    const server = new BudgetServer(budget(3));
    const { guard, deleting } = guardOn(server);
    const verdicts = await Promise.all(['lead', 'twice', 'twice'].map((n) => guard.admit(deleting(n))));
    expect(verdicts).toEqual([ALLOWED, ALLOWED, ALLOWED]);
    expect(server.pub.status?.unavailableAllowed).toBe(1);
  });

  it('answers a pod it already recorded from the copy it wrote, without reading the budget', async () => {
    const server = new BudgetServer(budget(3));
    const { guard, deleting } = guardOn(server);
    await guard.admit(deleting('a'));
    const reads = server.reads;
    expect(await guard.admit(deleting('a'))).toEqual(ALLOWED);
    expect(server.reads).toBe(reads);
    expect(server.writes).toHaveLength(1);
  });

  it('takes nothing for a dry run', async () => {
    const server = new BudgetServer(budget(1));
    const { guard, deleting } = guardOn(server);
    expect(await guard.admit(deleting('dry', true))).toEqual(ALLOWED);
    expect(server.writes).toHaveLength(0);
    expect(await guard.admit(deleting('real'))).toEqual(ALLOWED);
    expect(server.pub.status?.unavailableAllowed).toBe(0);
  });

  it('refuses with 409 once every attempt met a conflict', async () => {
    const server = new BudgetServer(budget(3));
    const { guard, deleting } = guardOn(server);
    server.failures = Array.from({ length: 5 }, () => new KubeApiError(409, 'conflict'));
    expect(await guard.admit(deleting('a'))).toMatchObject({ allowed: false, code: 409 });
    expect(server.pub.status?.unavailableAllowed).toBe(3);
  });

  it('fails the batch waiting on a write the apiserver refused, and serves the next admissions', async () => {
    const server = new BudgetServer(budget(3));
    const { guard, deleting } = guardOn(server);
    server.failures = [new KubeApiError(500, 'etcd is down')];
    await expect(guard.admit(deleting('a'))).rejects.toThrow('etcd is down');
    expect(await guard.admit(deleting('b'))).toEqual(ALLOWED);
  });
});
