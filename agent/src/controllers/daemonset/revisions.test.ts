import { cloneSetRevisionData, defaultDaemonSet, type DaemonSetV1beta1 } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import type { ControllerRevision, Pod } from '../../kube/types.js';
import { decideUpdateRevision } from '../cloneset/revisions.js';
import { daemonSetRevisionData, historyToDelete, newDaemonSetRevision, revisionHash } from './revisions.js';

const ds = defaultDaemonSet({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'DaemonSet',
  metadata: { name: 'agent', namespace: 'ns', uid: 'u1' },
  spec: {
    selector: { matchLabels: { app: 'agent' } },
    template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'c', image: 'v1' }] } },
  },
}) as unknown as DaemonSetV1beta1;

const stored = (
  name: string,
  hash: string | undefined,
  revision: number,
  data = cloneSetRevisionData(ds),
): ControllerRevision => ({
  metadata: { name, namespace: 'ns', ...(hash ? { labels: { 'controller-revision-hash': hash } } : {}) },
  data: JSON.parse(data) as unknown,
  revision,
});

describe('Advanced DaemonSet revisions', () => {
  it('stores the template as a replace patch, labelled with the template labels and the hash', () => {
    const data = daemonSetRevisionData(ds);
    expect(JSON.parse(data)).toMatchObject({
      spec: { template: { $patch: 'replace', metadata: { labels: { app: 'agent' } } } },
    });
    const revision = newDaemonSetRevision(ds, data, [stored('agent-old', 'old', 3, '{"spec":{}}')]);
    expect(revision.revision).toBe(4);
    expect(revision.metadata.name).toBe(`agent-${revisionHash(revision)}`);
    expect(revision.metadata.labels).toEqual({ app: 'agent', 'controller-revision-hash': revisionHash(revision) });
    expect(revision.metadata.ownerReferences?.[0]).toMatchObject({
      apiVersion: 'apps.kruise.io/v1beta1',
      kind: 'DaemonSet',
      uid: 'u1',
    });
  });

  it('reuses a revision OpenKruise stored under its own hash when the data is equal', () => {
    const theirs = stored('agent-6d9f7b8c4', '6d9f7b8c4', 1);
    const decision = decideUpdateRevision([theirs], daemonSetRevisionData(ds));
    expect(decision).toEqual({ kind: 'reuse', revision: theirs });
    expect(revisionHash(theirs)).toBe('6d9f7b8c4');
    expect(revisionHash(stored('agent-x', undefined, 1))).toBe('agent-x');
  });

  it('deletes unused history beyond the limit, oldest first, never the current or one a pod uses', () => {
    const revisions = [1, 2, 3, 4].map((n) => stored(`agent-h${n}`, `h${n}`, n, `{"n":${n}}`));
    const pods = [{ metadata: { name: 'p', labels: { 'controller-revision-hash': 'h1' } } } as unknown as Pod];
    expect(historyToDelete(revisions, revisions[3]!, pods, 1).map((r) => r.metadata.name)).toEqual([
      'agent-h2',
      'agent-h3',
    ]);
    expect(historyToDelete(revisions, revisions[3]!, pods, 3)).toEqual([]);
  });
});
