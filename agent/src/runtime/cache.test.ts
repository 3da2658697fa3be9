import { describe, expect, it } from 'vitest';
import { ObjectCache } from './cache.js';
import type { KubeObject } from './kube-object.js';

interface Pod extends KubeObject {
  spec?: { nodeName?: string };
}

function pod(ns: string, name: string, rv: string, extra: { owner?: string; node?: string; app?: string } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: ns,
      resourceVersion: rv,
      labels: extra.app ? { app: extra.app } : {},
      ownerReferences: extra.owner ? [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: extra.owner }] : [],
    },
    spec: extra.node ? { nodeName: extra.node } : {},
  };
}

const names = (objs: Pod[]): string[] => objs.map((o) => `${o.metadata!.namespace}/${o.metadata!.name}`).sort();

describe('ObjectCache', () => {
  it('gets, lists by namespace and label selector, and indexes by owner and node', () => {
    const c = new ObjectCache<Pod>();
    c.upsert(pod('a', 'p1', '1', { owner: 'u1', node: 'n1', app: 'web' }));
    c.upsert(pod('a', 'p2', '1', { owner: 'u1', app: 'db' }));
    c.upsert(pod('b', 'p1', '1', { owner: 'u2', node: 'n1', app: 'web' }));
    expect(c.get('a', 'p2')?.metadata?.name).toBe('p2');
    expect(c.getByKey('b/p1')).toBeDefined();
    expect(names(c.list('a'))).toEqual(['a/p1', 'a/p2']);
    expect(names(c.list(undefined, 'app=web'))).toEqual(['a/p1', 'b/p1']);
    expect(names(c.list('a', { matchLabels: { app: 'db' } }))).toEqual(['a/p2']);
    expect(names(c.list(undefined, (l) => l?.app !== 'web'))).toEqual(['a/p2']);
    expect(names(c.byIndex('byOwnerUid', 'u1'))).toEqual(['a/p1', 'a/p2']);
    expect(names(c.byIndex('byNodeName', 'n1'))).toEqual(['a/p1', 'b/p1']);
    expect(c.byIndex('byNamespace', 'zzz')).toEqual([]);
  });

  it('moves an object between index values when it changes, and drops it on remove', () => {
    const c = new ObjectCache<Pod>();
    c.upsert(pod('a', 'p1', '1', { node: 'n1' }));
    const old = c.upsert(pod('a', 'p1', '2', { node: 'n2' }));
    expect(old?.metadata?.resourceVersion).toBe('1');
    expect(c.byIndex('byNodeName', 'n1')).toEqual([]);
    expect(names(c.byIndex('byNodeName', 'n2'))).toEqual(['a/p1']);
    expect(c.remove('a/p1')?.metadata?.resourceVersion).toBe('2');
    expect(c.remove('a/p1')).toBeUndefined();
    expect(c.byIndex('byNodeName', 'n2')).toEqual([]);
    expect(c.size).toBe(0);
  });

  it('replace reports added, changed (by resourceVersion) and vanished objects', () => {
    const c = new ObjectCache<Pod>();
    c.upsert(pod('a', 'same', '1'));
    c.upsert(pod('a', 'changed', '1'));
    c.upsert(pod('a', 'gone', '1', { owner: 'u1' }));
    const diff = c.replace([pod('a', 'same', '1'), pod('a', 'changed', '2'), pod('a', 'new', '1')]);
    expect(names(diff.added)).toEqual(['a/new']);
    expect(diff.updated.map((u) => [u.old.metadata!.resourceVersion, u.obj.metadata!.resourceVersion])).toEqual([
      ['1', '2'],
    ]);
    expect(names(diff.deleted)).toEqual(['a/gone']);
    expect(c.keys().sort()).toEqual(['a/changed', 'a/new', 'a/same']);
    expect(c.byIndex('byOwnerUid', 'u1')).toEqual([]);
  });

  it('supports custom indexers, added late too, and cluster-scoped keys', () => {
    const c = new ObjectCache<Pod>({ byApp: (p) => (p.metadata?.labels?.app ? [p.metadata.labels.app] : []) });
    c.upsert(pod('a', 'p1', '1', { app: 'web' }));
    c.upsert({ metadata: { name: 'node-1', resourceVersion: '1' } });
    c.addIndexer('byRv', (p) => [p.metadata!.resourceVersion!]);
    expect(names(c.byIndex('byApp', 'web'))).toEqual(['a/p1']);
    expect(c.byIndex('byRv', '1')).toHaveLength(2);
    expect(c.get(undefined, 'node-1')).toBeDefined();
    expect(c.getByKey('node-1')).toBeDefined();
    expect(() => c.addIndexer('byApp', () => [])).toThrow(expect.objectContaining({ code: 'AGENT_ERR_INDEXER' }));
    expect(() => c.byIndex('nope', 'x')).toThrow(/no indexer named nope/);
  });
});
