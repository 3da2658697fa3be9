import { describe, expect, it } from 'vitest';
import { MANAGED_BY_HUB, MANAGED_BY_LABEL, WORKLOAD_ANNOTATION } from '@flotilla/api';
import {
  nodeSelectorOf,
  planPrePull,
  prePullJobs,
  prePullKey,
  templateImages,
  type PrePullKey,
} from './pre-pull-jobs.js';

const podSpec = {
  containers: [
    { name: 'app', image: 'reg/app:2' },
    { name: 'log', image: 'reg/log:1' },
  ],
  initContainers: [
    { name: 'init', image: 'reg/init:1' },
    { name: 'again', image: 'reg/app:2' },
  ],
  nodeSelector: { pool: 'web' },
  imagePullSecrets: [{ name: 'regcred' }],
};

const manifest = (spec: Record<string, unknown>) => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  metadata: { name: 'web', namespace: 'shop', labels: { team: 'a' } },
  spec: { replicas: 2, template: { spec } },
});

describe('pre-pull jobs', () => {
  it('pulls each distinct image of containers and initContainers once', () => {
    expect(templateImages(podSpec)).toEqual(['reg/app:2', 'reg/log:1', 'reg/init:1']);
    expect(templateImages({})).toEqual([]);
  });

  it('makes one ImagePullJob per image, owned by the rollout, on the template’s nodes', () => {
    const jobs = prePullJobs({ rolloutId: 'r1', manifest: manifest(podSpec), revision: 3, cluster: 'c1' });
    expect(jobs).toHaveLength(3);
    const first = jobs[0]!;
    expect(first).toMatchObject({
      kind: 'ImagePullJob',
      metadata: {
        namespace: 'shop',
        labels: { team: 'a', [MANAGED_BY_LABEL]: MANAGED_BY_HUB },
        annotations: { [WORKLOAD_ANNOTATION]: 'r1' },
      },
      spec: {
        image: 'reg/app:2',
        selector: { matchLabels: { pool: 'web' } },
        pullSecrets: ['regcred'],
        completionPolicy: { type: 'Always' },
      },
    });
    const name = (first.metadata as { name: string }).name;
    expect(name).toMatch(/^web-prepull-[0-9a-f]{10}$/);
    // Stable for the same rollout and image, different for another rollout.
    const again = prePullJobs({ rolloutId: 'r1', manifest: manifest(podSpec), revision: 3, cluster: 'c2' })[0]!;
    const other = prePullJobs({ rolloutId: 'r2', manifest: manifest(podSpec), revision: 3, cluster: 'c1' })[0]!;
    expect((again.metadata as { name: string }).name).toBe(name);
    expect((other.metadata as { name: string }).name).not.toBe(name);
  });

  it('makes none for an object without a pod template', () => {
    const sidecarSet = { kind: 'SidecarSet', metadata: { name: 's' }, spec: { containers: [{ image: 'x' }] } };
    expect(prePullJobs({ rolloutId: 'r', manifest: sidecarSet, revision: 1, cluster: 'c' })).toEqual([]);
  });

  it('turns one required affinity term into matchExpressions and leaves out what a label selector cannot say', () => {
    const term = (exprs: unknown[]) => ({ matchExpressions: exprs });
    const affinity = (...terms: unknown[]) => ({
      nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } },
    });
    const zone = { key: 'zone', operator: 'In', values: ['a', 'b'] };
    const gpu = { key: 'gpu', operator: 'Exists' };
    const cores = { key: 'cores', operator: 'Gt', values: ['8'] };
    expect(nodeSelectorOf({ affinity: affinity(term([zone, gpu, cores])) })).toEqual({
      matchExpressions: [zone, gpu],
    });
    // Two terms are ORed: no single selector says that, so only the nodeSelector stays.
    expect(nodeSelectorOf({ nodeSelector: { pool: 'web' }, affinity: affinity(term([zone]), term([gpu])) })).toEqual({
      matchLabels: { pool: 'web' },
    });
    expect(nodeSelectorOf({})).toBeUndefined();
  });
});

describe('planPrePull', () => {
  const key = (cluster: string, name = 'web-prepull-1'): PrePullKey => ({ cluster, namespace: 'shop', name });
  const job = { kind: 'ImagePullJob', spec: { image: 'reg/app:2' } };

  it('creates wanted jobs, keeps unchanged ones and tombstones the rest, by object', () => {
    const wanted = new Map([key('c2'), key('c3')].map((k) => [prePullKey(k), { key: k, manifest: job }]));
    const none = planPrePull(wanted, new Map(), 3);
    expect(none).toHaveLength(1);
    expect(none[0]!.changes.map((c) => [c.cluster, c.generation, c.deleted])).toEqual([
      ['c2', 1, false],
      ['c3', 1, false],
    ]);
    const stored = new Map(
      none[0]!.changes.map((c) => [
        prePullKey(key(c.cluster)),
        { key: key(c.cluster), row: { generation: c.generation, deleted: false, manifestHash: c.manifestHash } },
      ]),
    );
    expect(planPrePull(wanted, stored, 3)).toEqual([]);
    const ended = planPrePull(new Map(), stored, 3);
    expect(ended[0]!.changes.map((c) => [c.cluster, c.generation, c.deleted, c.manifest])).toEqual([
      ['c2', 2, true, null],
      ['c3', 2, true, null],
    ]);
  });
});
