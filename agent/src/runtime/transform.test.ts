import { describe, expect, it } from 'vitest';
import type { KubeObject } from './kube-object.js';
import { defaultTransform, stripManagedFields, stripNodeImages } from './transform.js';

const managed = [{ manager: 'kwok', operation: 'Update', fieldsV1: { 'f:status': { 'f:phase': {} } } }];

describe('informer transforms', () => {
  it('stripManagedFields drops metadata.managedFields and nothing else', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'a', labels: { app: 'web' }, managedFields: managed },
      spec: { containers: [{ name: 'main', image: 'app:v1' }] },
    };
    expect(stripManagedFields(structuredClone(pod))).toEqual({
      ...pod,
      metadata: { name: 'a', labels: { app: 'web' } },
    });
    expect(stripManagedFields({ metadata: { name: 'b' } })).toEqual({ metadata: { name: 'b' } });
    expect(stripManagedFields({})).toEqual({});
  });

  it('stripNodeImages drops status.images of v1 Nodes only', () => {
    const node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n', labels: { zone: 'a' } },
      status: { images: [{ names: ['app:v1'], sizeBytes: 1 }], nodeInfo: { kubeletVersion: 'v1.36.0' } },
    };
    expect(stripNodeImages(structuredClone(node))).toEqual({ ...node, status: { nodeInfo: node.status.nodeInfo } });
    // A custom resource that happens to have status.images (NodeImage) keeps it.
    const nodeImage = { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'NodeImage', status: { images: { a: 1 } } };
    expect(stripNodeImages(structuredClone(nodeImage) as KubeObject)).toEqual(nodeImage);
  });

  it('defaultTransform applies both', () => {
    const node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n', managedFields: managed },
      status: { images: [] },
    };
    expect(defaultTransform(node)).toEqual({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n' }, status: {} });
  });
});
