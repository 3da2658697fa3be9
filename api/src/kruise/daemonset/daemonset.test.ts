import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../../validation/field-error.js';
import { defaultDaemonSet } from './defaults.js';
import type { DaemonSet } from './schema.js';
import { validateDaemonSetUpdate } from './update.js';
import { validateDaemonSet } from './validation.js';

const base = (rollingUpdate?: Record<string, unknown>): DaemonSet => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'DaemonSet',
  metadata: { name: 'agent', namespace: 'ns' },
  spec: {
    selector: { matchLabels: { app: 'agent' } },
    template: { metadata: { labels: { app: 'agent' } }, spec: { containers: [{ name: 'main', image: 'nginx' }] } },
    ...(rollingUpdate ? { updateStrategy: { rollingUpdate } } : {}),
  },
});

describe('defaultDaemonSet', () => {
  it('gives RollingUpdate/Standard with maxUnavailable 1, maxSurge 0, burst 250, history 10', () => {
    const spec = defaultDaemonSet(base()).spec;
    expect(spec.updateStrategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { rollingUpdateType: 'Standard', maxUnavailable: 1, maxSurge: 0 },
    });
    expect(spec.burstReplicas).toBe(250);
    expect(spec.revisionHistoryLimit).toBe(10);
    expect(spec.template.spec?.restartPolicy).toBe('Always');
  });

  it('turns the deprecated Surging into Standard with maxSurge 1 and maxUnavailable 0', () => {
    const rolling = defaultDaemonSet(base({ rollingUpdateType: 'Surging' })).spec.updateStrategy?.rollingUpdate;
    expect(rolling).toEqual({ rollingUpdateType: 'Standard', maxSurge: 1, maxUnavailable: 0 });
  });

  it('leaves Surging alone at v1beta1, where validation refuses it', () => {
    const beta = {
      ...base({ rollingUpdateType: 'Surging' }),
      apiVersion: 'apps.kruise.io/v1beta1',
    } as unknown as DaemonSet;
    const rolling = defaultDaemonSet(beta).spec.updateStrategy?.rollingUpdate;
    expect(rolling).toEqual({ rollingUpdateType: 'Surging', maxUnavailable: 1, maxSurge: 0 });
  });

  it('keeps a set maxSurge without adding maxUnavailable', () => {
    const rolling = defaultDaemonSet(base({ maxSurge: '10%' })).spec.updateStrategy?.rollingUpdate;
    expect(rolling).toEqual({ rollingUpdateType: 'Standard', maxSurge: '10%' });
  });
});

describe('validateDaemonSet', () => {
  it('accepts a minimal DaemonSet and a maxSurge-only one', () => {
    expect(validateDaemonSet(base())).toEqual([]);
    expect(validateDaemonSet(base({ maxSurge: '10%' }))).toEqual([]);
  });

  it('refuses a percent partition over 100 at its own path', () => {
    const errors = validateDaemonSet(base({ partition: '101%' })).map(formatFieldError);
    expect(errors.join()).toContain('spec.updateStrategy.rollingUpdate.partition');
  });
});

describe('validateDaemonSetUpdate', () => {
  it('lets the template and strategy change but not the selector', () => {
    const next = base({ partition: 3 });
    next.spec.template.spec!.containers![0]!.image = 'nginx:2';
    expect(validateDaemonSetUpdate(next, base())).toEqual([]);
    const moved = base();
    moved.spec.selector = { matchLabels: { app: 'agent', tier: 'x' } };
    moved.spec.template.metadata!.labels = { app: 'agent', tier: 'x' };
    expect(validateDaemonSetUpdate(moved, base()).map((e) => e.path)).toEqual(['spec']);
  });
});
