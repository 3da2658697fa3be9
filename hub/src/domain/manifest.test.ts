import { describe, expect, it } from 'vitest';
import { renderManifest, specForCluster } from './manifest.js';

const spec = { replicas: 2, template: { spec: { containers: [{ name: 'main', image: 'app:v1' }] } } };

describe('specForCluster', () => {
  it('merges the override of the named cluster', () => {
    expect(specForCluster({ spec, overrides: { c1: { replicas: 5 } } }, 'c1')).toEqual({ ...spec, replicas: 5 });
  });

  it.each(['constructor', 'c2'])('gives a cluster without an override (%s) the template unchanged', (cluster) => {
    // "constructor" is a valid cluster name and a key every plain object inherits.
    expect(specForCluster({ spec, overrides: { c1: { replicas: 5 } } }, cluster)).toEqual(spec);
  });

  it('applies an override stored under a key that Object.prototype also has', () => {
    const overrides = JSON.parse('{"constructor": {"replicas": 7}}') as Record<string, Record<string, unknown>>;
    expect(specForCluster({ spec, overrides }, 'constructor')).toEqual({ ...spec, replicas: 7 });
  });
});

describe('renderManifest', () => {
  it('renders the spec for a cluster named like an Object.prototype member', () => {
    const m = renderManifest(
      { id: 'w1', kind: 'CloneSet', name: 'web', namespace: 'default' },
      { revision: 1, metadata: {}, spec, overrides: {} },
      'constructor',
    );
    expect(m['spec']).toEqual(spec);
  });

  it('gives each kind its own group: a PodUnavailableBudget travels as policy.kruise.io', () => {
    const budget = {
      targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' },
      maxUnavailable: 1,
    };
    const pub = renderManifest(
      { id: 'w2', kind: 'PodUnavailableBudget', name: 'web', namespace: 'default' },
      { revision: 1, metadata: {}, spec: budget, overrides: {} },
      'east',
    );
    expect([pub['apiVersion'], pub['kind'], pub['spec']]).toEqual([
      'policy.kruise.io/v1alpha1',
      'PodUnavailableBudget',
      budget,
    ]);
    const cs = renderManifest(
      { id: 'w1', kind: 'CloneSet', name: 'web', namespace: 'default' },
      { revision: 1, metadata: {}, spec, overrides: {} },
      'east',
    );
    expect(cs['apiVersion']).toBe('apps.kruise.io/v1alpha1');
  });
});
