import type { WorkloadSpread } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { KubeApiError } from '../../errors.js';
import { spreadGuard, type SpreadStore } from './admission.js';
import type { SpreadPod } from './subsets.js';

const spread = (): WorkloadSpread => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'WorkloadSpread',
  metadata: { name: 'ws', namespace: 'ns', resourceVersion: '1' },
  spec: {
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' },
    subsets: [{ name: 'a', maxReplicas: 1 }, { name: 'b' }],
  },
});

const pod = (name: string): SpreadPod => ({
  metadata: {
    name,
    labels: { 'pod-template-hash': 'h1' },
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'api-h1', controller: true }],
  },
});

/** A store over one WorkloadSpread whose status writes fail with 409 `conflicts` times first. */
function store(conflicts = 0, pods: SpreadPod[] = []): SpreadStore & { writes: WorkloadSpread[] } {
  let stored = spread();
  const writes: WorkloadSpread[] = [];
  return {
    writes,
    list: () => [stored],
    get: () => Promise.resolve(stored),
    updateStatus: (ws) => {
      if (conflicts-- > 0) {
        stored = {
          ...stored,
          metadata: { ...stored.metadata, resourceVersion: String(Number(stored.metadata?.resourceVersion) + 1) },
        };
        return Promise.reject(new KubeApiError(409, 'the object has been modified', { reason: 'Conflict' }));
      }
      stored = ws;
      writes.push(ws);
      return Promise.resolve(ws);
    },
    getWorkload: (_ref, _ns, name) =>
      Promise.resolve(
        name === 'api-h1'
          ? {
              metadata: {
                name,
                ownerReferences: [
                  { uid: 'd', controller: true, apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' },
                ],
              },
            }
          : undefined,
      ),
    getPod: (_ns, name) => Promise.resolve(pods.find((p) => p.metadata.name === name)),
  };
}

/** `name` as the webhook placed it into `subset`. */
const placedPod = (name: string, subset: string, extra: Partial<SpreadPod['metadata']> = {}): SpreadPod => ({
  ...pod(name),
  metadata: {
    ...pod(name).metadata,
    annotations: { 'apps.kruise.io/matched-workloadspread': JSON.stringify({ name: 'ws', subset }) },
    ...extra,
  },
});

const now = (): number => Date.parse('2026-01-01T00:00:00Z');

describe('spreadGuard', () => {
  it('finds a Deployment’s spread through the ReplicaSet and fills a, then b', async () => {
    const s = store();
    const guard = spreadGuard({ store: s, now });
    const first = await guard.assign({ namespace: 'ns', pod: pod('p1'), dryRun: false });
    const second = await guard.assign({ namespace: 'ns', pod: pod('p2'), dryRun: false });
    expect([first?.matched, second?.matched]).toEqual([
      { name: 'ws', subset: 'a' },
      { name: 'ws', subset: 'b' },
    ]);
    expect(s.writes.at(-1)?.status?.versionedSubsetStatuses?.h1?.[0]).toMatchObject({
      missingReplicas: 0,
      creatingPods: { p1: '2026-01-01T00:00:00.000Z' },
    });
  });

  it('retries a conflicting write on a fresh read', async () => {
    const s = store(2);
    const assignment = await spreadGuard({ store: s, now }).assign({ namespace: 'ns', pod: pod('p1'), dryRun: false });
    expect(assignment?.matched.subset).toBe('a');
    expect(s.writes).toHaveLength(1);
  });

  it('writes nothing on a dry run, and keys a nameless pod by a generated uid', async () => {
    const s = store();
    const guard = spreadGuard({ store: s, now, newUid: () => 'u-1' });
    expect((await guard.assign({ namespace: 'ns', pod: pod('p1'), dryRun: true }))?.matched.subset).toBe('a');
    expect(s.writes).toHaveLength(0);
    const nameless = await guard.assign({ namespace: 'ns', pod: pod(''), dryRun: false });
    expect(nameless?.matched).toEqual({ name: 'ws', subset: 'a', uid: 'u-1' });
  });

  it('leaves pods of other owners alone', async () => {
    const other = { ...pod('p'), metadata: { ...pod('p').metadata, ownerReferences: [] } };
    expect(
      await spreadGuard({ store: store(), now }).assign({ namespace: 'ns', pod: other, dryRun: false }),
    ).toBeUndefined();
  });

  it('records a deleted pod under its subset’s deletingPods, missingReplicas one higher, once', async () => {
    const s = store();
    // The controller has counted p1 in a, which it fills.
    s.list('ns')[0]!.status = {
      versionedSubsetStatuses: {
        h1: [
          { name: 'a', replicas: 1, missingReplicas: 0 },
          { name: 'b', replicas: 0, missingReplicas: -1 },
        ],
      },
    };
    const guard = spreadGuard({ store: s, now });
    const deleted = placedPod('p1', 'a');
    expect(await guard.assign({ namespace: 'ns', pod: deleted, dryRun: false, operation: 'DELETE' })).toBeUndefined();
    await guard.assign({ namespace: 'ns', pod: deleted, dryRun: false, operation: 'DELETE' });
    expect(s.writes).toHaveLength(1);
    expect(s.writes[0]?.status?.versionedSubsetStatuses?.h1?.[0]).toEqual({
      name: 'a',
      replicas: 1,
      missingReplicas: 1,
      deletingPods: { p1: '2026-01-01T00:00:00.000Z' },
    });
  });

  it('gives back the slot of a pod deleted before the controller counted it, by its creation record', async () => {
    const s = store();
    const guard = spreadGuard({ store: s, now });
    await guard.assign({ namespace: 'ns', pod: pod('p1'), dryRun: false });
    await guard.assign({ namespace: 'ns', pod: placedPod('p1', 'a'), dryRun: false, operation: 'DELETE' });
    expect(s.writes.at(-1)?.status?.versionedSubsetStatuses?.h1?.[0]).toEqual({
      name: 'a',
      replicas: 0,
      missingReplicas: 1,
    });
    // The slot is free again: the next pod takes a.
    expect((await guard.assign({ namespace: 'ns', pod: pod('p2'), dryRun: false }))?.matched.subset).toBe('a');
  });

  it('reads an evicted pod; leaves unplaced, terminating and missing pods and dry runs alone', async () => {
    const evicted = placedPod('p2', 'a');
    const s = store(0, [evicted, placedPod('gone', 'a', { deletionTimestamp: '2026-01-01T00:00:00Z' })]);
    const guard = spreadGuard({ store: s, now });
    const ask = (name: string, operation: 'DELETE' | 'EVICT', dryRun = false): Promise<unknown> =>
      guard.assign({ namespace: 'ns', pod: { metadata: { name } }, dryRun, operation });
    await ask('p2', 'EVICT', true);
    await ask('gone', 'EVICT');
    await ask('nothing', 'EVICT');
    await ask('p3', 'DELETE');
    expect(s.writes).toHaveLength(0);
    await ask('p2', 'EVICT');
    expect(s.writes.at(-1)?.status?.versionedSubsetStatuses?.h1?.[0]?.deletingPods).toEqual({
      p2: '2026-01-01T00:00:00.000Z',
    });
  });
});
