import type { ImageTagSpec, NodeImage } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import { formatTime } from '../../runtime/kube-time.js';
import {
  DEADLINE_MESSAGE,
  NOT_RESPONDED_MESSAGE,
  nodeImageAction,
  planNodeImageSpec,
  planNodeImageStatus,
  type NodeLike,
} from './plan.js';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const at = (secondsAgo: number): string => formatTime(NOW - secondsAgo * 1000);
const job = (name: string, uid = `uid-${name}`) => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'ImagePullJob',
  namespace: 'ns',
  name,
  uid,
});

function readyNode(name: string, readySecondsAgo: number, labels: Record<string, string> = {}): NodeLike {
  return {
    metadata: { name, labels },
    status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: at(readySecondsAgo) }] },
  };
}

function nodeImage(images: NodeImage['spec']['images'] = {}, extra: Partial<NodeImage> = {}): NodeImage {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'NodeImage',
    metadata: { name: 'n1', labels: { a: '1' } },
    spec: { images },
    ...extra,
  };
}

function tag(t: string, over: Partial<ImageTagSpec> = {}): ImageTagSpec {
  return { tag: t, version: 0, createdAt: at(60), ownerReferences: [job('j1')], ...over };
}

describe('nodeImageAction', () => {
  it('creates a NodeImage once the node has been Ready for the delay, with its labels', () => {
    expect(nodeImageAction(readyNode('n1', 40, { zone: 'a' }), undefined, NOW, 30_000)).toEqual({
      type: 'create',
      labels: { zone: 'a' },
    });
    expect(nodeImageAction(readyNode('n1', 10), undefined, NOW, 30_000)).toEqual({ type: 'wait', afterMs: 20_000 });
  });

  it('creates nothing for a node that is not Ready', () => {
    const node: NodeLike = { metadata: { name: 'n1' }, status: { conditions: [{ type: 'Ready', status: 'False' }] } };
    expect(nodeImageAction(node, undefined, NOW, 0)).toEqual({ type: 'none' });
  });

  it('deletes the NodeImage of a vanished or deleting node, but keeps fake ones', () => {
    expect(nodeImageAction(undefined, nodeImage(), NOW, 0)).toEqual({ type: 'delete' });
    const deleting = { ...readyNode('n1', 100), metadata: { name: 'n1', deletionTimestamp: at(1) } };
    expect(nodeImageAction(deleting, nodeImage(), NOW, 0)).toEqual({ type: 'delete' });
    const fake = nodeImage({}, { metadata: { name: 'n1', labels: { 'apps.kruise.io/fake-nodeimage': 'true' } } });
    expect(nodeImageAction(undefined, fake, NOW, 0)).toEqual({ type: 'sync' });
    expect(nodeImageAction(undefined, undefined, NOW, 0)).toEqual({ type: 'none' });
  });
});

describe('planNodeImageSpec', () => {
  const alive = (names: string[]) => (ref: { name?: string; uid?: string }) =>
    names.includes(ref.name ?? '') && ref.uid === `uid-${ref.name}`;

  it('copies the node labels exactly', () => {
    const plan = planNodeImageSpec(nodeImage(), readyNode('n1', 100, { b: '2' }), alive([]), NOW);
    expect(plan).toMatchObject({ changed: true, labels: { b: '2' }, messages: ['node labels changed'] });
  });

  it('changes nothing when labels match and every tag is live', () => {
    const plan = planNodeImageSpec(
      nodeImage({ nginx: { tags: [tag('1.25')] } }),
      readyNode('n1', 100, { a: '1' }),
      alive(['j1']),
      NOW,
    );
    expect(plan.changed).toBe(false);
    expect(plan.images).toEqual({ nginx: { tags: [tag('1.25')] } });
  });

  it('drops tags without createdAt, and images left without tags', () => {
    const plan = planNodeImageSpec(
      nodeImage({ nginx: { tags: [tag('a', { createdAt: undefined })] }, redis: { tags: [tag('7')] } }),
      undefined,
      alive(['j1']),
      NOW,
    );
    expect(plan.images).toEqual({ redis: { tags: [tag('7')] } });
    expect(plan.messages).toEqual(['image nginx:a has no createdAt field', 'no longer has nginx image spec']);
  });

  it('removes vanished job owners and drops tags no owner wants any more', () => {
    const other = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', namespace: 'ns', name: 'cs', uid: 'x' };
    const images = {
      nginx: {
        tags: [tag('1', { ownerReferences: [job('j1'), job('gone')] }), tag('2', { ownerReferences: [job('gone')] })],
      },
      redis: { tags: [tag('7', { ownerReferences: [other] })] },
      recreated: { tags: [tag('1', { ownerReferences: [job('j1', 'old-uid')] })] },
    };
    const plan = planNodeImageSpec(nodeImage(images), undefined, alive(['j1']), NOW);
    expect(plan.images).toEqual({
      nginx: { tags: [tag('1', { ownerReferences: [job('j1')] })] },
      // Owners of other kinds are not this controller's to judge.
      redis: { tags: [tag('7', { ownerReferences: [other] })] },
    });
  });

  it('drops a tag whose TTL since completion of the same version ran out, and waits for the next one', () => {
    const images = {
      nginx: {
        tags: [
          tag('old', { version: 1, pullPolicy: { ttlSecondsAfterFinished: 60 } }),
          tag('new', { version: 1, pullPolicy: { ttlSecondsAfterFinished: 60 } }),
          tag('rerun', { version: 2, pullPolicy: { ttlSecondsAfterFinished: 10 } }),
        ],
      },
    };
    const status = {
      desired: 3,
      imageStatuses: {
        nginx: {
          tags: [
            { tag: 'old', phase: 'Succeeded', version: 1, completionTime: at(61) },
            { tag: 'new', phase: 'Succeeded', version: 1, completionTime: at(20) },
            // A completion of an older version does not start the TTL of the new request.
            { tag: 'rerun', phase: 'Succeeded', version: 1, completionTime: at(3600) },
          ],
        },
      },
    };
    const plan = planNodeImageSpec(nodeImage(images, { status }), undefined, alive(['j1']), NOW);
    expect(plan.images.nginx!.tags.map((t) => t.tag)).toEqual(['new', 'rerun']);
    expect(plan.requeueAfterMs).toBe(40_000);
    expect(plan.messages[0]).toMatch(/^image nginx:old has exceeded TTL \(60\)s since/);
  });
});

describe('planNodeImageStatus', () => {
  const TIMEOUT = 600_000;

  it('waits for the daemon until the response timeout, then fails the tag once', () => {
    const young = nodeImage({ nginx: { tags: [tag('1', { createdAt: at(100) })] } });
    const waiting = planNodeImageStatus(young, NOW, TIMEOUT);
    expect(waiting.failed).toEqual([]);
    expect(waiting.requeueAfterMs).toBe(500_000);

    const old = nodeImage({ nginx: { tags: [tag('1', { createdAt: at(601), version: 2 })] } });
    const plan = planNodeImageStatus(old, NOW, TIMEOUT);
    expect(plan.failed).toEqual([
      { image: 'nginx', tag: old.spec.images!.nginx!.tags[0], message: NOT_RESPONDED_MESSAGE },
    ]);
    expect(plan.status).toEqual({
      desired: 1,
      succeeded: 0,
      failed: 1,
      pulling: 0,
      imageStatuses: {
        nginx: {
          tags: [
            { tag: '1', phase: 'Failed', version: 2, completionTime: formatTime(NOW), message: NOT_RESPONDED_MESSAGE },
          ],
        },
      },
    });
    // Written once: the next pass finds nothing to change.
    expect(planNodeImageStatus({ ...old, status: plan.status }, NOW + 1000, TIMEOUT).status).toBeUndefined();
  });

  it('fails a tag still pulling after activeDeadlineSeconds plus the response timeout', () => {
    const spec = { nginx: { tags: [tag('1', { createdAt: at(700), pullPolicy: { activeDeadlineSeconds: 60 } })] } };
    const status = {
      desired: 1,
      pulling: 1,
      imageStatuses: { nginx: { tags: [{ tag: '1', phase: 'Pulling', version: 0 }] } },
    };
    const plan = planNodeImageStatus(nodeImage(spec, { status }), NOW, TIMEOUT);
    expect(plan.failed.map((f) => f.message)).toEqual([DEADLINE_MESSAGE]);
    expect(plan.status).toMatchObject({ failed: 1, pulling: 0 });
  });

  it('recounts over the spec and drops statuses of tags no longer wanted', () => {
    const spec = { nginx: { tags: [tag('1'), tag('2')] } };
    const status = {
      desired: 3,
      succeeded: 2,
      imageStatuses: {
        nginx: {
          tags: [
            { tag: '2', phase: 'Pulling', version: 0 },
            { tag: '1', phase: 'Succeeded', version: 0, completionTime: at(5) },
            { tag: 'gone', phase: 'Succeeded', version: 0 },
          ],
        },
        redis: { tags: [{ tag: '7', phase: 'Succeeded', version: 0 }] },
      },
    };
    const plan = planNodeImageStatus(nodeImage(spec, { status }), NOW, TIMEOUT);
    expect(plan.status).toEqual({
      desired: 2,
      succeeded: 1,
      failed: 0,
      pulling: 1,
      imageStatuses: {
        nginx: {
          tags: [
            { tag: '1', phase: 'Succeeded', version: 0, completionTime: at(5) },
            { tag: '2', phase: 'Pulling', version: 0 },
          ],
        },
      },
    });
  });

  it('counts Waiting tags (OpenKruise v1.9) and fails one still queued after its deadline', () => {
    const spec = {
      nginx: { tags: [tag('1', { createdAt: at(700), pullPolicy: { activeDeadlineSeconds: 60 } }), tag('2')] },
    };
    const status = {
      desired: 2,
      pulling: 0,
      waiting: 2,
      imageStatuses: {
        nginx: {
          tags: [
            { tag: '1', phase: 'Waiting', version: 0 },
            { tag: '2', phase: 'Waiting', version: 0 },
          ],
        },
      },
    };
    const plan = planNodeImageStatus(nodeImage(spec, { status }), NOW, TIMEOUT);
    expect(plan.failed.map((f) => f.message)).toEqual([DEADLINE_MESSAGE]);
    expect(plan.status).toMatchObject({ failed: 1, pulling: 0, waiting: 1 });
  });

  it('leaves a status without waiting as it is when nothing waits', () => {
    const spec = { nginx: { tags: [tag('1')] } };
    const status = {
      desired: 1,
      succeeded: 1,
      failed: 0,
      pulling: 0,
      imageStatuses: { nginx: { tags: [{ tag: '1', phase: 'Succeeded', version: 0, completionTime: at(5) }] } },
    };
    expect(planNodeImageStatus(nodeImage(spec, { status }), NOW, TIMEOUT).status).toBeUndefined();
  });
});
