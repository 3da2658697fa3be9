import { describe, expect, it } from 'vitest';
import { CliError } from './errors.js';
import { applyLabelChanges, parseLabelChanges } from './labels.js';
import { parseWorkloadDocuments, parseWorkloadRef, toUpdateRequest } from './manifest.js';
import { canaryStrategy } from './strategy.js';

const spec = { replicas: 1 };

describe('parseWorkloadDocuments', () => {
  it('reads REST-shaped YAML documents, several per file', () => {
    const docs = parseWorkloadDocuments(
      'kind: CloneSet\nname: web\nnamespace: default\nspec: {replicas: 1}\nplacement: {clusterSelector: {}}\n---\n' +
        'kind: SidecarSet\nname: side\nspec: {}\nplacement: {clusterSelector: {}}\n',
      'w.yaml',
    );
    expect(docs.map((d) => [d.kind, d.namespace, d.name])).toEqual([
      ['CloneSet', 'default', 'web'],
      ['SidecarSet', undefined, 'side'],
    ]);
  });

  it('turns a Kubernetes-style manifest into the create request', () => {
    const [doc] = parseWorkloadDocuments(
      JSON.stringify({
        apiVersion: 'apps.kruise.io/v1alpha1',
        kind: 'CloneSet',
        metadata: { name: 'web', namespace: 'prod', labels: { app: 'web' } },
        spec,
        placement: { clusterSelector: { matchLabels: { env: 'prod' } } },
        updatePolicy: 'Rollout',
      }),
      'w.json',
    );
    expect(doc).toEqual({
      kind: 'CloneSet',
      name: 'web',
      namespace: 'prod',
      metadata: { labels: { app: 'web' } },
      spec,
      placement: { clusterSelector: { matchLabels: { env: 'prod' } } },
      updatePolicy: 'Rollout',
    });
    expect(toUpdateRequest(doc!)).toEqual({
      metadata: { labels: { app: 'web' } },
      spec,
      placement: { clusterSelector: { matchLabels: { env: 'prod' } } },
      updatePolicy: 'Rollout',
    });
  });

  it('names the file, the document and the field of what it cannot use', () => {
    const err = (text: string): string => {
      try {
        parseWorkloadDocuments(text, 'f.yaml');
      } catch (e) {
        expect(e).toBeInstanceOf(CliError);
        return (e as CliError).message;
      }
      throw new Error('expected an error');
    };
    expect(err('kind: [')).toContain('f.yaml: not valid YAML or JSON');
    expect(err('')).toContain('no workload documents');
    expect(err('kind: Deployment\nname: x')).toContain('kind must be one of CloneSet, SidecarSet, ImagePullJob');
    expect(err('kind: CloneSet\nname: a\n---\nkind: CloneSet\n')).toContain('f.yaml (document 2): name');
    expect(err('apiVersion: v1\nkind: CloneSet\nmetadata: {name: a, finalizers: []}')).toContain('metadata.finalizers');
  });
});

describe('parseWorkloadRef', () => {
  it('reads name, namespace/name, kind/name, kind/namespace/name and ids', () => {
    expect(parseWorkloadRef('web')).toEqual({ name: 'web' });
    expect(parseWorkloadRef('prod/web')).toEqual({ namespace: 'prod', name: 'web' });
    expect(parseWorkloadRef('SidecarSet/side')).toEqual({ kind: 'SidecarSet', name: 'side' });
    expect(parseWorkloadRef('CloneSet/prod/web')).toEqual({ kind: 'CloneSet', namespace: 'prod', name: 'web' });
    expect(parseWorkloadRef('SidecarSet//side')).toEqual({ kind: 'SidecarSet', namespace: '', name: 'side' });
    const id = '0f8fad5b-d9cb-469f-a165-70867728950e';
    expect(parseWorkloadRef(id.toUpperCase())).toEqual({ id, name: id.toUpperCase() });
    expect(() => parseWorkloadRef('a/b/c/d')).toThrow(CliError);
    expect(() => parseWorkloadRef('Pod/ns/x')).toThrow('not a workload kind');
    expect(() => parseWorkloadRef('/web')).toThrow(CliError);
  });
});

describe('label changes', () => {
  it('sets with k=v and removes with k-', () => {
    const c = parseLabelChanges(['env=prod', 'tier-', 'note=a=b']);
    expect(c).toEqual({ set: { env: 'prod', note: 'a=b' }, remove: ['tier'] });
    expect(applyLabelChanges({ tier: 'edge', env: 'dev', keep: '1' }, c)).toEqual({
      env: 'prod',
      note: 'a=b',
      keep: '1',
    });
    expect(() => parseLabelChanges(['env'])).toThrow('must be KEY=VALUE or KEY-');
    expect(() => parseLabelChanges(['=x'])).toThrow(CliError);
    expect(() => parseLabelChanges(['a=1', 'a-'])).toThrow('both set and removed');
  });
});

describe('canaryStrategy', () => {
  it('builds a canary wave of named clusters and a main wave of the rest', () => {
    expect(canaryStrategy({ canary: 'c1, c2', soakSeconds: 30, maxConcurrency: 2, approval: 'Before' })).toEqual({
      waves: [
        { name: 'canary', clusters: { names: ['c1', 'c2'] }, maxConcurrency: 1, soakSeconds: 30 },
        { name: 'main', soakSeconds: 30, maxConcurrency: 2, approval: 'Before' },
      ],
    });
  });

  it('selects the canary by labels, and refuses bad flags', () => {
    expect(canaryStrategy({ canary: 'ring=canary' }).waves[0]!.clusters).toEqual({
      selector: { matchLabels: { ring: 'canary' } },
    });
    expect(() => canaryStrategy({ canary: 'a,ring=x' })).toThrow('not both');
    expect(() => canaryStrategy({ canary: ',' })).toThrow('--canary needs');
    expect(() => canaryStrategy({ canary: 'a', approval: 'Later' })).toThrow('--approval must be one of');
    expect(() => canaryStrategy({ canary: 'a', maxConcurrency: 0 })).toThrow('--max-concurrency');
  });
});
