import type { ImagePullJob, NodeImage } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { newCopy, planSecrets, refreshedCopy, releasedCopy, type SecretLike } from './secrets-plan.js';
import { jobTargets, targetNodeImages, type PodLike, type TargetSources } from './targets.js';

const REFS = 'imagepulljobs.kruise.io/references';
const SOURCE = 'imagepulljobs.kruise.io/source-key';

function job(spec: Partial<ImagePullJob['spec']> = {}, name = 'j'): ImagePullJob {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImagePullJob',
    metadata: { name, namespace: 'ns', uid: 'u' },
    spec: { image: 'nginx', ...spec },
  };
}

const ni = (name: string, labels: Record<string, string> = {}): NodeImage => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'NodeImage',
  metadata: { name, labels },
  spec: {},
});

const pod = (name: string, node: string, labels: Record<string, string>, extra: Partial<PodLike> = {}): PodLike => ({
  metadata: { name, namespace: 'ns', labels, creationTimestamp: `2026-01-01T00:00:0${name.length}Z` },
  spec: { nodeName: node },
  status: { phase: 'Running' },
  ...extra,
});

function sources(nodeImages: NodeImage[], pods: PodLike[] = []): TargetSources {
  return {
    nodeImages: () => nodeImages,
    nodeImage: (name) => nodeImages.find((n) => n.metadata?.name === name),
    pods: (namespace) => pods.filter((p) => p.metadata?.namespace === namespace),
  };
}

const names = (list: NodeImage[]): (string | undefined)[] => list.map((n) => n.metadata?.name);

describe('targetNodeImages', () => {
  const all = [ni('c', { zone: 'b' }), ni('a', { zone: 'a' }), ni('b', { zone: 'a', gpu: '1' })];

  it('takes every NodeImage by name without a selector', () => {
    expect(names(targetNodeImages(job(), sources(all)))).toEqual(['a', 'b', 'c']);
  });

  it('takes listed names in their order, skipping unknown ones and repeats', () => {
    const j = job({ selector: { names: ['c', 'missing', 'a', 'c'] } });
    expect(names(targetNodeImages(j, sources(all)))).toEqual(['c', 'a']);
  });

  it('matches labels copied from the Nodes', () => {
    const j = job({
      selector: { matchLabels: { zone: 'a' }, matchExpressions: [{ key: 'gpu', operator: 'DoesNotExist' }] },
    });
    expect(names(targetNodeImages(j, sources(all)))).toEqual(['a']);
  });

  it('follows active matching pods to their nodes, oldest pod first', () => {
    const pods = [
      pod('ppp', 'c', { app: 'web' }),
      pod('p', 'b', { app: 'web' }),
      pod('pp', 'b', { app: 'web' }),
      pod('x', 'a', { app: 'db' }),
      pod('done', 'a', { app: 'web' }, { status: { phase: 'Succeeded' } }),
      pod('unscheduled', '', { app: 'web' }),
    ];
    const j = job({ podSelector: { matchLabels: { app: 'web' } } });
    expect(names(targetNodeImages(j, sources(all, pods)))).toEqual(['b', 'c']);
  });
});

describe('jobTargets', () => {
  it('answers for one NodeImage what targetNodeImages answers for all', () => {
    const node = ni('n1', { zone: 'a' });
    expect(jobTargets(job(), node, () => [])).toBe(true);
    expect(jobTargets(job({ selector: { names: ['n2'] } }), node, () => [])).toBe(false);
    expect(jobTargets(job({ selector: { matchLabels: { zone: 'a' } } }), node, () => [])).toBe(true);
    const pods = [pod('p', 'n1', { app: 'web' })];
    expect(jobTargets(job({ podSelector: { matchLabels: { app: 'web' } } }), node, () => pods)).toBe(true);
    expect(jobTargets(job({ podSelector: { matchLabels: { app: 'db' } } }), node, () => pods)).toBe(false);
  });
});

describe('pull secret copies', () => {
  const copy = (name: string, source: string, refs: string, extra: Partial<SecretLike> = {}): SecretLike => ({
    metadata: { name, namespace: 'cfg', annotations: { [SOURCE]: source, [REFS]: refs } },
    data: { '.dockerconfigjson': 'e30=' },
    ...extra,
  });

  it('reuses a copy of the same source, preferring one that already lists the job', () => {
    const j = job({ pullSecrets: ['reg', 'other'] });
    const plan = planSecrets(
      j,
      [copy('reg-b', 'ns/reg', 'ns/j'), copy('reg-a', 'ns/reg', 'x/y'), copy('gone-a', 'ns/gone', 'ns/j,x/y')],
      true,
    );
    expect(plan.claim.map((c) => [c.source, c.copy?.metadata?.name])).toEqual([
      ['ns/reg', 'reg-b'],
      ['ns/other', undefined],
    ]);
    expect(plan.release.map((c) => c.metadata?.name)).toEqual(['gone-a']);
  });

  it('releases every copy a finished or deleted job references', () => {
    const plan = planSecrets(
      job({ pullSecrets: ['reg'] }),
      [copy('reg-a', 'ns/reg', 'ns/j'), copy('b', 'x/b', 'x/y')],
      false,
    );
    expect(plan).toEqual({ claim: [], release: [copy('reg-a', 'ns/reg', 'ns/j')] });
  });

  it('builds a copy with generateName, the source uid label and the reference annotations', () => {
    const source: SecretLike = {
      metadata: { name: 'reg', namespace: 'ns', uid: 'src-uid', labels: { l: '1' } },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': 'e30=' },
    };
    expect(newCopy(source, 'ns/j', 'cfg')).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        generateName: 'reg-',
        namespace: 'cfg',
        labels: { l: '1', 'imagepulljobs.kruise.io/source-uid': 'src-uid' },
        annotations: { [SOURCE]: 'ns/reg', [REFS]: 'ns/j' },
      },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': 'e30=' },
    });
  });

  it('refreshes data from the source and adds the job, and leaves an up-to-date copy alone', () => {
    const c = copy('reg-a', 'ns/reg', 'x/y');
    const updated = refreshedCopy(c, { data: { '.dockerconfigjson': 'bmV3' } }, 'ns/j');
    expect(updated?.data).toEqual({ '.dockerconfigjson': 'bmV3' });
    expect(updated?.metadata?.annotations?.[REFS]).toBe('ns/j,x/y');
    expect(refreshedCopy(updated!, { data: { '.dockerconfigjson': 'bmV3' } }, 'ns/j')).toBeUndefined();
  });

  it('deletes a released copy nobody else references, else rewrites its references', () => {
    expect(releasedCopy(copy('a', 's', 'ns/j'), 'ns/j')).toEqual({ delete: true });
    const kept = releasedCopy(copy('a', 's', 'ns/j,x/y'), 'ns/j');
    expect(kept && 'update' in kept && kept.update.metadata?.annotations?.[REFS]).toBe('x/y');
    expect(releasedCopy(copy('a', 's', 'x/y'), 'ns/j')).toBeUndefined();
  });
});
