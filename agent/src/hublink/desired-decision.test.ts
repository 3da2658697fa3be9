import { describe, expect, it } from 'vitest';
import type { DesiredMessage } from '@flotilla/api';
import { decideDesired } from './desired-decision.js';
import type { KubeObject } from './types.js';

const msg = (generation: number, deleted = false): DesiredMessage => ({
  v: 1,
  cluster: 'c1',
  kind: 'CloneSet',
  namespace: 'apps',
  name: 'web',
  workloadId: 'w',
  revision: 1,
  generation,
  deleted,
  ...(deleted
    ? {}
    : { manifest: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', metadata: { name: 'web' } } }),
  publishedAt: '',
});
const object = (generation: number | undefined, managed = true): KubeObject => ({
  metadata: {
    name: 'web',
    labels: managed ? { 'flotilla.io/managed-by': 'hub' } : {},
    annotations: generation === undefined ? {} : { 'flotilla.io/generation': String(generation) },
  },
});

describe('decideDesired', () => {
  it('applies a new object, stamping generation and the managed label', () => {
    const d = decideDesired(msg(3), undefined);
    expect(d.action).toBe('apply');
    if (d.action === 'apply') {
      expect(d.manifest.metadata?.annotations).toEqual({ 'flotilla.io/generation': '3' });
      expect(d.manifest.metadata?.labels).toEqual({ 'flotilla.io/managed-by': 'hub' });
    }
  });

  it.each([
    ['an update over an older generation', msg(4), object(3), 'apply'],
    ['a redelivery of the applied generation', msg(3), object(3), 'apply'],
    ['a message older than what is applied', msg(2), object(3), 'skip'],
    ['a tombstone for a managed object', msg(5, true), object(4), 'delete'],
    ['a tombstone for an object the hub does not manage', msg(5, true), object(4, false), 'skip'],
    ['a tombstone for an object already gone', msg(5, true), undefined, 'skip'],
    ['a stale tombstone', msg(3, true), object(4), 'skip'],
  ])('%s → %s', (_name, m, current, action) => {
    expect(decideDesired(m, current).action).toBe(action);
  });

  it('leaves an object of the same name the hub does not manage alone, even when asked to apply it', () => {
    expect(decideDesired(msg(1), object(9, false))).toEqual({ action: 'skip', reason: 'not-managed' });
    expect(decideDesired(msg(10), object(9, false))).toEqual({ action: 'skip', reason: 'not-managed' });
  });

  it('applies again once the managed-by label is back', () => {
    expect(decideDesired(msg(10), object(9)).action).toBe('apply');
  });

  it('replaces a BroadcastJob whose template changed instead of patching it', () => {
    const job = (image: string, generation: number): DesiredMessage => ({
      ...msg(generation),
      kind: 'BroadcastJob',
      manifest: {
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'BroadcastJob',
        metadata: { name: 'web' },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image }] } } },
      },
    });
    const first = decideDesired(job('task:v1', 1), undefined);
    expect(first.action).toBe('apply');
    if (first.action !== 'apply') return;
    const current: KubeObject = { ...first.manifest, metadata: { ...first.manifest.metadata, uid: 'u1' } };
    expect(decideDesired(job('task:v1', 2), current).action).toBe('apply');
    const second = decideDesired(job('task:v2', 2), current);
    expect(second).toMatchObject({ action: 'replace', reason: 'template-changed' });
    if (second.action === 'replace')
      expect(second.manifest.metadata?.annotations?.['flotilla.io/generation']).toBe('2');
  });
});
