import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../../validation/field-error.js';
import { defaultCloneSet } from './defaults.js';
import type { CloneSet } from './schema.js';
import { validateCloneSetUpdate } from './update.js';
import { validateCloneSet, validateCloneSetForController } from './validation.js';

function cloneSet(spec: Partial<CloneSet['spec']> = {}): CloneSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'CloneSet',
    metadata: { name: 'sample', namespace: 'default' },
    spec: {
      selector: { matchLabels: { app: 'sample' } },
      template: {
        metadata: { labels: { app: 'sample' } },
        spec: { containers: [{ name: 'main', image: 'nginx:1.25' }] },
      },
      ...spec,
    },
  };
}

const messages = (errors: ReturnType<typeof validateCloneSet>): string[] => errors.map(formatFieldError);

describe('CloneSet defaults', () => {
  it('are OpenKruise’s: 1 replica, ReCreate, partition 0, 20% unavailable, no surge, 10 revisions', () => {
    const { spec } = defaultCloneSet(cloneSet());
    expect(spec.replicas).toBe(1);
    expect(spec.revisionHistoryLimit).toBe(10);
    expect(spec.updateStrategy).toEqual({ type: 'ReCreate', partition: 0, maxUnavailable: '20%', maxSurge: 0 });
    expect(spec.scaleStrategy).toBeUndefined();
    expect(spec.template.spec).toMatchObject({ restartPolicy: 'Always', dnsPolicy: 'ClusterFirst' });
  });

  it('add an empty in-place update strategy for the in-place types only', () => {
    expect(
      defaultCloneSet(cloneSet({ updateStrategy: { type: 'InPlaceIfPossible' } })).spec.updateStrategy
        ?.inPlaceUpdateStrategy,
    ).toEqual({});
    expect(
      defaultCloneSet(cloneSet({ updateStrategy: { type: 'InPlaceOnly' } })).spec.updateStrategy?.inPlaceUpdateStrategy,
    ).toEqual({});
    expect(
      defaultCloneSet(cloneSet({ updateStrategy: { type: 'ReCreate' } })).spec.updateStrategy?.inPlaceUpdateStrategy,
    ).toBeUndefined();
  });

  it('keep what the user set', () => {
    const { spec } = defaultCloneSet(
      cloneSet({
        replicas: 0,
        revisionHistoryLimit: 3,
        updateStrategy: { partition: '50%', maxUnavailable: 0, maxSurge: 1 },
      }),
    );
    expect([spec.replicas, spec.revisionHistoryLimit]).toEqual([0, 3]);
    expect(spec.updateStrategy).toMatchObject({ partition: '50%', maxUnavailable: 0, maxSurge: 1 });
  });

  it('mark claim templates Pending, as SetDefaults_PersistentVolumeClaim does', () => {
    const { spec } = defaultCloneSet(
      cloneSet({
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { resources: { requests: { storage: '1Gi' } } } }],
      }),
    );
    expect(spec.volumeClaimTemplates?.[0]?.status).toEqual({ phase: 'Pending' });
  });
});

describe('CloneSet validation', () => {
  it('refuses updateStrategy.type OnDelete at admission, as the OpenKruise v1.9.0 webhook does', () => {
    expect(messages(validateCloneSet(cloneSet({ updateStrategy: { type: 'OnDelete' } })))).toEqual([
      'spec.updateStrategy.type: Unsupported value: "OnDelete": supported values: "ReCreate", "InPlaceIfPossible", "InPlaceOnly"',
    ]);
  });

  it("lets the controller act on OnDelete (v1.9.0's controller implements it), and nothing else new", () => {
    expect(validateCloneSetForController(cloneSet({ updateStrategy: { type: 'OnDelete' } }))).toEqual([]);
    expect(messages(validateCloneSetForController(cloneSet({ updateStrategy: { type: 'Rolling' } })))).toEqual([
      'spec.updateStrategy.type: Unsupported value: "Rolling": supported values: "ReCreate", "InPlaceIfPossible", "InPlaceOnly"',
    ]);
  });

  it('accepts a minimal CloneSet', () => {
    expect(validateCloneSet(cloneSet())).toEqual([]);
  });

  it('resolves percentages against replicas before "not both below 1"', () => {
    // 20% of 3 rounds up to 1, so a zero surge is fine; 0 replicas disable the rule.
    expect(validateCloneSet(cloneSet({ replicas: 3, updateStrategy: { maxSurge: 0 } }))).toEqual([]);
    expect(validateCloneSet(cloneSet({ replicas: 0, updateStrategy: { maxUnavailable: 0 } }))).toEqual([]);
    expect(
      messages(validateCloneSet(cloneSet({ replicas: 10, updateStrategy: { maxUnavailable: '0%', maxSurge: '0%' } }))),
    ).toEqual([
      'spec.updateStrategy.maxUnavailable: Invalid value: "0%": maxUnavailable and maxSurge should not both be less than 1 (they resolve to 0 and 0 of 10 replicas)',
    ]);
  });

  it('allows surge only outside InPlaceOnly', () => {
    expect(validateCloneSet(cloneSet({ updateStrategy: { type: 'InPlaceIfPossible', maxSurge: '25%' } }))).toEqual([]);
    expect(validateCloneSet(cloneSet({ updateStrategy: { type: 'InPlaceOnly', maxSurge: 0 } }))).toEqual([]);
  });

  it('rejects a restart policy other than Always and names the field', () => {
    const set = cloneSet();
    set.spec.template.spec = { restartPolicy: 'OnFailure', containers: [{ name: 'main', image: 'nginx' }] };
    expect(messages(validateCloneSet(set))).toEqual([
      'spec.template.spec.restartPolicy: Unsupported value: "OnFailure": supported values: "Always"',
    ]);
  });

  it('reports duplicate container names across init and regular containers', () => {
    const set = cloneSet();
    set.spec.template.spec = {
      initContainers: [{ name: 'main', image: 'busybox' }],
      containers: [{ name: 'main', image: 'nginx' }],
    };
    expect(messages(validateCloneSet(set))).toEqual(['spec.template.spec.containers[0].name: Duplicate value: "main"']);
  });

  it('lets volume mounts use claim templates', () => {
    const set = cloneSet({ volumeClaimTemplates: [{ metadata: { name: 'data' } }] });
    set.spec.template.spec = {
      containers: [{ name: 'main', image: 'nginx', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
    };
    expect(validateCloneSet(set)).toEqual([]);
  });

  it('reports unknown fields together with semantic problems', () => {
    const document = { ...cloneSet({ replicas: 2, updateStrategy: { maxUnavailable: 0 } }), extra: true };
    expect(messages(validateCloneSet(document)).map((m) => m.split(':')[0])).toEqual([
      'extra',
      'spec.updateStrategy.maxUnavailable',
    ]);
  });
});

describe('CloneSet updates', () => {
  it('may change replicas, template, strategies and the other mutable fields', () => {
    const next = cloneSet({ replicas: 5, minReadySeconds: 3, updateStrategy: { paused: true }, lifecycle: {} });
    next.spec.template.spec = { containers: [{ name: 'main', image: 'nginx:1.26' }] };
    expect(validateCloneSetUpdate(next, cloneSet())).toEqual([]);
  });

  it('may not change the selector', () => {
    const next = cloneSet({ selector: { matchLabels: { app: 'sample', tier: 'web' } } });
    next.spec.template.metadata = { labels: { app: 'sample', tier: 'web' } };
    expect(validateCloneSetUpdate(next, cloneSet()).map((e) => [e.path, e.code])).toEqual([
      ['spec.selector', 'Forbidden'],
    ]);
  });

  it('may not rename the object', () => {
    const next = cloneSet();
    next.metadata = { name: 'other', namespace: 'default' };
    expect(validateCloneSetUpdate(next, cloneSet()).map((e) => e.path)).toEqual(['metadata.name']);
  });

  it('under InPlaceOnly accepts image changes only', () => {
    const old = cloneSet({ updateStrategy: { type: 'InPlaceOnly' } });
    const images = cloneSet({ updateStrategy: { type: 'InPlaceOnly' } });
    images.spec.template.spec = { containers: [{ name: 'main', image: 'nginx:1.26' }] };
    expect(validateCloneSetUpdate(images, old)).toEqual([]);

    const env = cloneSet({ updateStrategy: { type: 'InPlaceOnly' } });
    env.spec.template.spec = { containers: [{ name: 'main', image: 'nginx:1.26', env: [{ name: 'A', value: '1' }] }] };
    expect(messages(validateCloneSetUpdate(env, old))).toEqual([
      'spec.template.spec.containers[0].env: Forbidden: only allowed to update images in spec for InPlaceOnly, but found add /containers/0/env',
    ]);
  });

  it('checks only the new object when the old one is unreadable', () => {
    expect(validateCloneSetUpdate(cloneSet(), { kind: 'CloneSet', spec: 7 })).toEqual([]);
  });
});
