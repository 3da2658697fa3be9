import { describe, expect, it } from 'vitest';
import { asV1alpha1Document } from './index.js';

describe('asV1alpha1Document', () => {
  it('hands a v1beta1 document of a kind named after an Object.prototype member back unchanged', () => {
    const document = { apiVersion: 'apps.kruise.io/v1beta1', kind: 'valueOf', metadata: { name: 'x' }, spec: {} };
    expect(asV1alpha1Document(document)).toEqual({ ok: true, document });
  });
});
