import { describe, expect, it } from 'vitest';
import { defaultNodeImage, kubernetesTime } from './defaults.js';
import type { NodeImage } from './schema.js';
import { MAX_IMAGES_PER_NODE, validateNodeImage } from './validation.js';

const node = (images: NonNullable<NodeImage['spec']['images']>): NodeImage => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'NodeImage',
  metadata: { name: 'node-1' },
  spec: { images },
});

describe('NodeImage defaults', () => {
  it('stamp tags with the creation time and default pull limits', () => {
    const now = new Date('2024-05-01T10:00:00.123Z');
    const defaulted = defaultNodeImage(
      node({ nginx: { tags: [{ tag: '1.25', pullPolicy: { ttlSecondsAfterFinished: 300 } }] } }),
      now,
    );
    expect(defaulted.spec.images?.nginx?.tags[0]).toEqual({
      tag: '1.25',
      createdAt: '2024-05-01T10:00:00Z',
      pullPolicy: { ttlSecondsAfterFinished: 300, timeoutSeconds: 600, backoffLimit: 3 },
    });
    expect(kubernetesTime(now)).toBe('2024-05-01T10:00:00Z');
  });
});

describe('NodeImage validation', () => {
  it('caps the number of images per node', () => {
    const images = Object.fromEntries(
      Array.from({ length: MAX_IMAGES_PER_NODE + 1 }, (_, i) => [
        `img${i}`,
        { tags: [{ tag: 'v1', pullPolicy: { ttlSecondsAfterFinished: 1 } }] },
      ]),
    );
    expect(validateNodeImage(node(images)).map((e) => [e.path, e.code])).toEqual([['spec.images', 'TooMany']]);
  });

  it('wants image names without tags', () => {
    expect(
      validateNodeImage(
        node({ 'nginx:1.25': { tags: [{ tag: '1.25', pullPolicy: { ttlSecondsAfterFinished: 1 } }] } }),
      ).map((e) => e.path),
    ).toEqual(['spec.images[nginx:1.25]']);
  });
});
