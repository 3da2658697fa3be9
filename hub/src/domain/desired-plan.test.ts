import { describe, expect, it } from 'vitest';
import {
  TOMBSTONE_HASH,
  planDesired,
  type ClusterView,
  type CurrentDesired,
  type LiveWorkload,
} from './desired-plan.js';
import { contentHash } from './canonical-json.js';
import { renderManifest } from './manifest.js';

const identity = { id: 'w1', kind: 'CloneSet' as const, namespace: 'apps', name: 'web' };
const live = (revision = 1, overrides: Record<string, Record<string, unknown>> = {}): LiveWorkload => ({
  identity,
  content: { revision, metadata: {}, spec: { replicas: 2 }, overrides },
  selector: { matchLabels: { env: 'prod' } },
});
const cluster = (name: string, env: string, accepted = true): ClusterView => ({ name, labels: { env }, accepted });
const hashFor = (w: LiveWorkload, c: string): string => contentHash(renderManifest(w.identity, w.content, c));

function plan(w: LiveWorkload | undefined, clusters: ClusterView[], current: Record<string, CurrentDesired> = {}) {
  return planDesired({ identity, live: w, clusters, current: new Map(Object.entries(current)), lastRevision: 3 });
}

describe('planDesired', () => {
  it('step 1: places on accepted clusters whose labels match, in name order', () => {
    const changes = plan(live(), [
      cluster('c3', 'prod'),
      cluster('c1', 'prod'),
      cluster('c2', 'dev'),
      cluster('c4', 'prod', false),
    ]);
    expect(changes.map((c) => [c.cluster, c.generation, c.deleted])).toEqual([
      ['c1', 1, false],
      ['c3', 1, false],
    ]);
    expect(changes[0]!.manifest).toMatchObject({
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: {
        name: 'web',
        namespace: 'apps',
        labels: { 'flotilla.io/managed-by': 'hub' },
        annotations: { 'flotilla.io/workload': 'w1', 'flotilla.io/revision': '1', 'flotilla.io/cluster': 'c1' },
      },
      spec: { replicas: 2 },
    });
  });

  it('step 2: an unchanged manifest is not re-sent', () => {
    const w = live();
    const changes = plan(w, [cluster('c1', 'prod')], {
      c1: { generation: 4, deleted: false, manifestHash: hashFor(w, 'c1') },
    });
    expect(changes).toEqual([]);
  });

  it('step 3: an override changes only its cluster', () => {
    const before = live(1);
    const after = live(1, { c2: { replicas: 5 } });
    const current = {
      c1: { generation: 1, deleted: false, manifestHash: hashFor(before, 'c1') },
      c2: { generation: 1, deleted: false, manifestHash: hashFor(before, 'c2') },
    };
    const changes = plan(after, [cluster('c1', 'prod'), cluster('c2', 'prod')], current);
    expect(changes.map((c) => [c.cluster, c.generation, (c.manifest as { spec: unknown }).spec])).toEqual([
      ['c2', 2, { replicas: 5 }],
    ]);
  });

  it('step 4: a cluster that no longer matches gets a tombstone; one already tombstoned gets nothing', () => {
    const w = live();
    const current = {
      c1: { generation: 2, deleted: false, manifestHash: hashFor(w, 'c1') },
      c2: { generation: 3, deleted: true, manifestHash: TOMBSTONE_HASH },
    };
    const changes = plan(w, [cluster('c1', 'dev'), cluster('c2', 'dev')], current);
    expect(changes).toEqual([
      { cluster: 'c1', generation: 3, revision: 1, deleted: true, manifest: null, manifestHash: TOMBSTONE_HASH },
    ]);
  });

  it('step 5: a deleted workload tombstones every live row, stamped with its last revision', () => {
    const w = live();
    const current = { c1: { generation: 7, deleted: false, manifestHash: hashFor(w, 'c1') } };
    const changes = plan(undefined, [cluster('c1', 'prod')], current);
    expect(changes.map((c) => [c.cluster, c.generation, c.revision, c.deleted])).toEqual([['c1', 8, 3, true]]);
  });

  it('step 6: a re-created object continues after its tombstone', () => {
    const changes = plan(live(), [cluster('c1', 'prod')], {
      c1: { generation: 8, deleted: true, manifestHash: TOMBSTONE_HASH },
    });
    expect(changes.map((c) => [c.generation, c.deleted])).toEqual([[9, false]]);
  });
});

describe('planDesired with rollout pins', () => {
  it('renders a pinned cluster at its own revision with the CloneSet partition', () => {
    const base = live(1);
    const target = { revision: 2, metadata: {}, spec: { replicas: 3 }, overrides: {} };
    const pinned: LiveWorkload = { ...base, pinned: new Map([['c1', { content: target, partition: '90%' }]]) };
    const changes = plan(pinned, [cluster('c1', 'prod'), cluster('c2', 'prod')]);
    expect(changes.map((c) => [c.cluster, c.revision])).toEqual([
      ['c1', 2],
      ['c2', 1],
    ]);
    expect(changes[0]!.manifest).toMatchObject({ spec: { replicas: 3, updateStrategy: { partition: '90%' } } });
    expect((changes[1]!.manifest as { spec: Record<string, unknown> }).spec.updateStrategy).toBeUndefined();
  });

  it('gives an Advanced StatefulSet the partition as a count in rollingUpdate, a percentage rounded up', () => {
    const sts = { ...identity, kind: 'StatefulSet' as const };
    const target = {
      revision: 2,
      metadata: {},
      spec: { replicas: 5, updateStrategy: { type: 'RollingUpdate' } },
      overrides: {},
    };
    const pinned: LiveWorkload = {
      ...live(1),
      identity: sts,
      pinned: new Map([['c1', { content: target, partition: '50%' }]]),
    };
    const changes = planDesired({
      identity: sts,
      live: pinned,
      clusters: [cluster('c1', 'prod')],
      current: new Map(),
      lastRevision: 3,
    });
    expect(changes[0]!.manifest).toMatchObject({
      kind: 'StatefulSet',
      spec: { replicas: 5, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } } },
    });
  });

  it('gives an Advanced DaemonSet the partition in rollingUpdate as it is', () => {
    const ds = { ...identity, kind: 'DaemonSet' as const };
    const target = {
      revision: 2,
      metadata: {},
      spec: { updateStrategy: { rollingUpdate: { maxUnavailable: 2 } } },
      overrides: {},
    };
    const pinned: LiveWorkload = {
      ...live(1),
      identity: ds,
      pinned: new Map([['c1', { content: target, partition: '90%' }]]),
    };
    const changes = planDesired({
      identity: ds,
      live: pinned,
      clusters: [cluster('c1', 'prod')],
      current: new Map(),
      lastRevision: 3,
    });
    expect(changes[0]!.manifest).toMatchObject({
      kind: 'DaemonSet',
      spec: { updateStrategy: { rollingUpdate: { maxUnavailable: 2, partition: '90%' } } },
    });
  });

  it('changes nothing for clusters whose pin renders what they already have', () => {
    const base = live(1);
    const pinned: LiveWorkload = { ...base, pinned: new Map([['c1', { content: base.content }]]) };
    const current = { c1: { generation: 4, deleted: false, manifestHash: hashFor(base, 'c1') } };
    expect(plan(pinned, [cluster('c1', 'prod')], current)).toEqual([]);
  });
});
