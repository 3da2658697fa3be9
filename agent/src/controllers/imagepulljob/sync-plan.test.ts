import type { ImagePullJob, NodeImage } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import {
  addJobToNodeImage,
  nodesToSync,
  ownerRef,
  parallelismOf,
  tagPullPolicy,
  type TagRequest,
} from './sync-plan.js';

const NOW = '2026-03-01T12:00:00Z';
const NO_MARGIN = { baseSeconds: 0, jitterSeconds: 0 };
const KRUISE_MARGIN = { baseSeconds: 300, jitterSeconds: 300 };

function job(spec: Partial<ImagePullJob['spec']> = {}, name = 'j1'): ImagePullJob {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImagePullJob',
    metadata: { name, namespace: 'ns', uid: `uid-${name}` },
    spec: { image: 'reg/app:v1', imagePullPolicy: 'IfNotPresent', completionPolicy: { type: 'Always' }, ...spec },
  };
}

describe('parallelismOf', () => {
  it.each([
    [undefined, 10, 1],
    [3, 10, 3],
    ['2', 10, 2],
    ['50%', 5, 3],
    ['1%', 5, 1],
    ['100%', 4, 4],
  ])('%s of %d nodes → %d', (parallelism, desired, expected) => {
    expect(parallelismOf(job(parallelism === undefined ? {} : { parallelism }), desired)).toBe(expected);
  });
});

describe('nodesToSync', () => {
  it('fills the window left by nodes still pulling, in target order', () => {
    expect(nodesToSync(['a', 'b', 'c', 'd'], 3, 0)).toEqual(['a', 'b', 'c']);
    expect(nodesToSync(['a', 'b', 'c', 'd'], 3, 2)).toEqual(['a']);
    expect(nodesToSync(['a', 'b'], 3, 3)).toEqual([]);
    expect(nodesToSync(['a'], 1, 5)).toEqual([]);
    expect(nodesToSync(['a', 'b'], 10, 0)).toEqual(['a', 'b']);
  });
});

describe('tagPullPolicy', () => {
  const half = () => 0.5;

  it('takes the TTL from the job TTL, else the deadline, else timeout × retries, plus the margin', () => {
    const ttl = job({ completionPolicy: { type: 'Always', ttlSecondsAfterFinished: 10, activeDeadlineSeconds: 900 } });
    expect(tagPullPolicy(ttl, KRUISE_MARGIN, half)).toEqual({
      ttlSecondsAfterFinished: 460,
      activeDeadlineSeconds: 900,
    });
    const deadline = job({ completionPolicy: { type: 'Always', activeDeadlineSeconds: 900 } });
    expect(tagPullPolicy(deadline, NO_MARGIN, half)).toEqual({
      ttlSecondsAfterFinished: 900,
      activeDeadlineSeconds: 900,
    });
    const pulls = job({ pullPolicy: { timeoutSeconds: 20, backoffLimit: 2 } });
    expect(tagPullPolicy(pulls, NO_MARGIN, half)).toEqual({
      timeoutSeconds: 20,
      backoffLimit: 2,
      ttlSecondsAfterFinished: 40,
    });
    expect(tagPullPolicy(job(), NO_MARGIN, half)).toEqual({ ttlSecondsAfterFinished: 1800 });
  });

  it('gives Never jobs a day (±10 min) and a deadline of at least 30 min', () => {
    const never = job({ completionPolicy: { type: 'Never' }, pullPolicy: { timeoutSeconds: 60 } });
    expect(tagPullPolicy(never, NO_MARGIN, () => 0)).toEqual({
      timeoutSeconds: 60,
      ttlSecondsAfterFinished: 86400 - 600,
      activeDeadlineSeconds: 1800,
    });
    const slow = job({ completionPolicy: { type: 'Never' }, pullPolicy: { timeoutSeconds: 3600 } });
    expect(tagPullPolicy(slow, NO_MARGIN, () => 0.999).activeDeadlineSeconds).toBe(3600);
  });
});

describe('addJobToNodeImage', () => {
  const image = { name: 'reg/app', tag: 'v1' };
  const empty: NodeImage = {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'NodeImage',
    metadata: { name: 'n' },
    spec: {},
  };
  const req = (j: ImagePullJob, over: Partial<TagRequest> = {}): TagRequest => ({
    job: j,
    image,
    secrets: [],
    pullPolicy: { ttlSecondsAfterFinished: 60 },
    now: NOW,
    ...over,
  });

  it('adds a new tag at version 0 with the job as owner, its secrets and sandbox config', () => {
    const j = job({ sandboxConfig: { labels: { a: 'b' } } });
    const out = addJobToNodeImage(empty, req(j, { secrets: [{ namespace: 'cfg', name: 's-x' }] }));
    expect(out?.spec.images).toEqual({
      'reg/app': {
        pullSecrets: [{ namespace: 'cfg', name: 's-x' }],
        sandboxConfig: { labels: { a: 'b' } },
        tags: [
          {
            tag: 'v1',
            version: 0,
            pullPolicy: { ttlSecondsAfterFinished: 60 },
            ownerReferences: [ownerRef(j)],
            createdAt: NOW,
            imagePullPolicy: 'IfNotPresent',
          },
        ],
      },
    });
  });

  it('starts a new tag one above the version the node last reported', () => {
    const reported: NodeImage = {
      ...empty,
      status: { desired: 0, imageStatuses: { 'reg/app': { tags: [{ tag: 'v1', phase: 'Succeeded', version: 4 }] } } },
    };
    expect(addJobToNodeImage(reported, req(job()))?.spec.images?.['reg/app']?.tags[0]?.version).toBe(5);
  });

  it('joins a tag another job asked for with version + 1 and both owners, keeping tags sorted', () => {
    const first = job({}, 'first');
    const second = job({ imagePullPolicy: 'Always' }, 'second');
    const one = addJobToNodeImage(empty, req(first))!;
    const withOther = addJobToNodeImage(one, req(first, { image: { name: 'reg/app', tag: 'a-old' } }))!;
    const both = addJobToNodeImage(withOther, req(second, { now: '2026-03-01T12:05:00Z' }))!;
    const tags = both.spec.images!['reg/app']!.tags;
    expect(tags.map((t) => t.tag)).toEqual(['a-old', 'v1']);
    expect(tags[1]).toMatchObject({
      version: 1,
      ownerReferences: [ownerRef(first), ownerRef(second)],
      createdAt: '2026-03-01T12:05:00Z',
      imagePullPolicy: 'Always',
      // The first job's limits stay, as in OpenKruise.
      pullPolicy: { ttlSecondsAfterFinished: 60 },
    });
  });

  it('changes nothing once the job is owner and every secret is listed; adds a missing secret', () => {
    const j = job();
    const synced = addJobToNodeImage(empty, req(j))!;
    expect(addJobToNodeImage(synced, req(j))).toBeUndefined();
    const withSecret = addJobToNodeImage(synced, req(j, { secrets: [{ namespace: 'cfg', name: 'new' }] }))!;
    expect(withSecret.spec.images!['reg/app']!.pullSecrets).toEqual([{ namespace: 'cfg', name: 'new' }]);
    expect(withSecret.spec.images!['reg/app']!.tags[0]!.version).toBe(0);
  });
});
