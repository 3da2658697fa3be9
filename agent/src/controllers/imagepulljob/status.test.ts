import type { ImagePullJob, ImageTagSpec, NodeImage } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { formatTime } from '../../runtime/kube-time.js';
import { calculateStatus, MESSAGE_COMPLETED, MESSAGE_DEADLINE, MESSAGE_NO_PROGRESS, statusMessage } from './status.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const IMAGE = { name: 'reg/app', tag: 'v1' };
const UID = 'job-uid';

function job(over: Partial<ImagePullJob['spec']> = {}, status?: ImagePullJob['status']): ImagePullJob {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'ImagePullJob',
    metadata: { name: 'j', namespace: 'ns', uid: UID },
    spec: { image: 'reg/app:v1', completionPolicy: { type: 'Always' }, ...over },
    ...(status ? { status } : {}),
  };
}

type Reported = 'none' | 'Pulling' | 'Succeeded' | 'Failed' | 'stale';

/** A NodeImage on which the job's tag is at version 2 and the daemon reported `reported`. */
function node(name: string, reported: Reported, opts: { owned?: boolean; secrets?: string[] } = {}): NodeImage {
  const tag: ImageTagSpec = { tag: 'v1', version: 2, ownerReferences: opts.owned === false ? [] : [{ uid: UID }] };
  const ni: NodeImage = {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'NodeImage',
    metadata: { name },
    spec: {
      images: {
        [IMAGE.name]: { tags: [tag], pullSecrets: (opts.secrets ?? []).map((n) => ({ namespace: 'cfg', name: n })) },
      },
    },
  };
  if (reported !== 'none') {
    const version = reported === 'stale' ? 1 : 2;
    const phase = reported === 'stale' ? 'Succeeded' : reported;
    ni.status = { desired: 1, imageStatuses: { [IMAGE.name]: { tags: [{ tag: 'v1', phase, version }] } } };
  }
  return ni;
}

const bare = (name: string): NodeImage => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'NodeImage',
  metadata: { name },
  spec: {},
});

describe('calculateStatus', () => {
  it('counts a node only on the reported version of its own tag', () => {
    const targets = [
      node('a', 'Succeeded'),
      node('b', 'Failed'),
      node('c', 'Pulling'),
      node('d', 'stale'), // an old round's success does not count for this job
      node('e', 'none'),
      node('f', 'Succeeded', { owned: false }), // another job's tag
      bare('g'),
    ];
    const { status, notSynced } = calculateStatus(job(), IMAGE, targets, [], NOW);
    expect(status).toEqual({
      startTime: formatTime(NOW),
      desired: 7,
      active: 3,
      succeeded: 1,
      failed: 1,
      failedNodes: ['b'],
      message: 'job is running, progress 28.6%',
    });
    expect(notSynced).toEqual(['f', 'g']);
  });

  it('treats a node lacking one of the pull secret copies as not synced', () => {
    const secrets = [{ namespace: 'cfg', name: 's1' }];
    const { notSynced } = calculateStatus(
      job(),
      IMAGE,
      [node('a', 'Succeeded'), node('b', 'Succeeded', { secrets: ['s1'] })],
      secrets,
      NOW,
    );
    expect(notSynced).toEqual(['a']);
  });

  it('completes an Always job once every node succeeded or failed, sorting failed nodes', () => {
    const started = formatTime(NOW - 5000);
    const { status } = calculateStatus(
      job({}, { desired: 3, startTime: started }),
      IMAGE,
      [node('z', 'Failed'), node('a', 'Succeeded'), node('m', 'Failed')],
      [],
      NOW,
    );
    expect(status).toMatchObject({
      startTime: started,
      completionTime: formatTime(NOW),
      active: 0,
      succeeded: 1,
      failed: 2,
      failedNodes: ['m', 'z'],
      message: MESSAGE_COMPLETED,
    });
  });

  it('never completes a Never job, and says "no progress" without nodes', () => {
    const never = job({ completionPolicy: { type: 'Never' } });
    expect(calculateStatus(never, IMAGE, [node('a', 'Succeeded')], [], NOW).status.completionTime).toBeUndefined();
    const empty = calculateStatus(never, IMAGE, [], [], NOW).status;
    expect(empty).toMatchObject({ desired: 0, message: MESSAGE_NO_PROGRESS });
    expect(empty.completionTime).toBeUndefined();
  });

  it('completes an Always job without targets at once', () => {
    expect(calculateStatus(job(), IMAGE, [], [], NOW).status).toMatchObject({ desired: 0, message: MESSAGE_COMPLETED });
  });

  it('fails whatever is unfinished when activeDeadlineSeconds has passed', () => {
    const j = job(
      { completionPolicy: { type: 'Always', activeDeadlineSeconds: 60 } },
      { desired: 3, startTime: formatTime(NOW - 60_000) },
    );
    const { status, notSynced } = calculateStatus(
      j,
      IMAGE,
      [node('c', 'Pulling'), node('a', 'Succeeded'), bare('b')],
      [],
      NOW,
    );
    expect(status).toMatchObject({
      completionTime: formatTime(NOW),
      active: 0,
      succeeded: 1,
      failed: 2,
      failedNodes: ['b', 'c'],
      message: MESSAGE_DEADLINE,
    });
    expect(notSynced).toEqual([]);
    const early = { ...j, status: { desired: 3, startTime: formatTime(NOW - 59_000) } };
    expect(calculateStatus(early, IMAGE, [node('c', 'Pulling')], [], NOW).status.completionTime).toBeUndefined();
  });
});

describe('statusMessage', () => {
  it.each([
    [{ desired: 3, succeeded: 1, failed: 0 }, 'job is running, progress 33.3%'],
    [{ desired: 3, succeeded: 2, failed: 0 }, 'job is running, progress 66.7%'],
    [{ desired: 8, succeeded: 0, failed: 0 }, 'job is running, progress 0.0%'],
    [{ desired: 0 }, MESSAGE_NO_PROGRESS],
    [{ desired: 2, completionTime: 'x' }, MESSAGE_COMPLETED],
  ])('%j → %s', (status, message) => {
    expect(statusMessage(status)).toBe(message);
  });
});
