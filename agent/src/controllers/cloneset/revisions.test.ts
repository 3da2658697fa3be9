import { describe, expect, it } from 'vitest';
import { cloneSetRevision } from '@flotilla/api';
import {
  decideUpdateRevision,
  findCurrentRevision,
  newRevision,
  revisionBytes,
  revisionsToTruncate,
  sortRevisions,
} from './revisions.js';
import { cloneSet, pod } from './testing/fixtures.js';
import type { ControllerRevision } from '../../kube/types.js';

const cs = cloneSet({ replicas: 2 });
cs.metadata!.annotations = { owner: 'team-a' };

describe('newRevision', () => {
  it('is named and hashed as OpenKruise does, with labels, annotations and owner', () => {
    const expected = cloneSetRevision(cs, 0);
    const rev = newRevision(cs, 3, 0);
    expect(rev.metadata.name).toBe(expected.name);
    expect(rev.metadata.name).toMatch(/^cs-[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(rev.metadata.labels).toEqual({ app: 'web', 'controller.kubernetes.io/hash': expected.hash });
    expect(rev.metadata.annotations).toEqual({ owner: 'team-a', 'kruise.io/cloneset-volumeclaimtemplate-hash': '' });
    expect(rev.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'CloneSet', name: 'cs', controller: true });
    expect(rev.revision).toBe(3);
    expect(revisionBytes(rev)).toBe(expected.data);
  });

  it('a collision count changes the name', () => {
    expect(newRevision(cs, 1, 1).metadata.name).not.toBe(newRevision(cs, 1, 0).metadata.name);
  });
});

function rev(name: string, revision: number, bytesOf = cs): ControllerRevision {
  return { ...newRevision(bytesOf, revision, 0), metadata: { name }, revision };
}

describe('decideUpdateRevision', () => {
  const other = cloneSet({
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'x:2' }] } },
  });
  const mine = revisionBytes(newRevision(cs, 1, 0));

  it('creates when no equal revision is stored', () => {
    expect(decideUpdateRevision([rev('a', 1, other)], mine)).toEqual({ kind: 'create' });
  });

  it('reuses the latest when it is equal', () => {
    const stored = [rev('a', 1, other), rev('b', 2)];
    expect(decideUpdateRevision(stored, mine)).toEqual({ kind: 'reuse', revision: stored[1] });
  });

  it('bumps an older equal revision to the next number: a rollback', () => {
    const stored = [rev('a', 1), rev('b', 2, other)];
    expect(decideUpdateRevision(stored, mine)).toEqual({ kind: 'bump', revision: stored[0], to: 3 });
  });
});

describe('history', () => {
  it('sorts by revision number, then creation, then name', () => {
    const r = [rev('c', 2), rev('b', 1), rev('a', 1)];
    expect(sortRevisions(r).map((x) => x.metadata.name)).toEqual(['a', 'b', 'c']);
  });

  it('current revision: the one in status, else the update revision', () => {
    const r = [rev('a', 1), rev('b', 2)];
    expect(findCurrentRevision(r, 'a', r[1]!).metadata.name).toBe('a');
    expect(findCurrentRevision(r, 'gone', r[1]!).metadata.name).toBe('b');
  });

  it('truncates unused revisions oldest first down to the limit; live ones never go', () => {
    const r = [rev('r1', 1), rev('r2', 2), rev('r3', 3), rev('r4', 4), rev('r5', 5)];
    const pods = [pod({ revision: 'r2' })];
    const gone = revisionsToTruncate({ sorted: r, pods, current: 'r4', update: 'r5', limit: 1 });
    expect(gone.map((x) => x.metadata.name)).toEqual(['r1']);
    expect(
      revisionsToTruncate({ sorted: r, pods, current: 'r4', update: 'r5', limit: 0 }).map((x) => x.metadata.name),
    ).toEqual(['r1', 'r3']);
  });
});
