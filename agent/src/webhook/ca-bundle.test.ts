import { describe, expect, it } from 'vitest';
import { planCaBundle } from './ca-bundle.js';

describe('planCaBundle', () => {
  const installed = {
    webhooks: [
      { name: 'other.example.com', clientConfig: {} },
      { name: 'mpod.kb.io', clientConfig: {} },
      { name: 'mcloneset.kb.io', clientConfig: { caBundle: 'Q0E=' } },
    ],
  };

  it('writes the bundle only into our webhooks that lack it, each guarded by a test of its name', () => {
    const { patch, missing } = planCaBundle(installed, ['mpod.kb.io', 'mcloneset.kb.io'], 'TkVX');
    expect(missing).toEqual([]);
    expect(patch).toEqual([
      { op: 'test', path: '/webhooks/1/name', value: 'mpod.kb.io' },
      { op: 'add', path: '/webhooks/1/clientConfig/caBundle', value: 'TkVX' },
      { op: 'test', path: '/webhooks/2/name', value: 'mcloneset.kb.io' },
      { op: 'add', path: '/webhooks/2/clientConfig/caBundle', value: 'TkVX' },
    ]);
  });

  it('is empty when every webhook already carries the bundle', () => {
    expect(planCaBundle(installed, ['mcloneset.kb.io'], 'Q0E=').patch).toEqual([]);
  });

  it('names the webhooks the installed configuration lacks', () => {
    expect(planCaBundle({}, ['mpod.kb.io'], 'Q0E=').missing).toEqual(['mpod.kb.io']);
  });
});
