import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../../validation/field-error.js';
import type { WorkloadSpread, WorkloadSpreadSpec } from './schema.js';
import { validateWorkloadSpread, validateWorkloadSpreadConflict } from './validation.js';

function ws(spec: Partial<WorkloadSpreadSpec> = {}, name = 'ws'): WorkloadSpread {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'WorkloadSpread',
    metadata: { name, namespace: 'default' },
    spec: {
      targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: 'web' },
      subsets: [{ name: 'a', maxReplicas: 2 }, { name: 'b' }],
      ...spec,
    },
  };
}

const messages = (spec: Partial<WorkloadSpreadSpec>): string[] =>
  validateWorkloadSpread(ws(spec)).map(formatFieldError);

describe('WorkloadSpread validation', () => {
  it('accepts every target kind v1.9 spreads, from its groups', () => {
    for (const [apiVersion, kind] of [
      ['apps.kruise.io/v1alpha1', 'CloneSet'],
      ['apps/v1', 'Deployment'],
      ['apps/v1', 'ReplicaSet'],
      ['batch/v1', 'Job'],
      ['apps/v1', 'StatefulSet'],
      ['apps.kruise.io/v1beta1', 'StatefulSet'],
    ] as const) {
      expect(messages({ targetRef: { apiVersion, kind, name: 'x' } }), kind).toEqual([]);
    }
  });

  it('refuses an empty target reference', () => {
    expect(messages({ targetRef: { apiVersion: '', kind: 'CloneSet', name: 'web' } })[0]).toContain(
      'empty TargetReference is not valid for WorkloadSpread.',
    );
  });

  it('takes percentages summing to 100%, or less with an unlimited last subset', () => {
    expect(
      messages({
        subsets: [
          { name: 'a', maxReplicas: '40%' },
          { name: 'b', maxReplicas: '60%' },
        ],
      }),
    ).toEqual([]);
    expect(messages({ subsets: [{ name: 'a', maxReplicas: '40%' }, { name: 'b' }] })).toEqual([]);
  });

  it('wants counts for StatefulSets', () => {
    const spec = {
      targetRef: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' },
      subsets: [{ name: 'a', maxReplicas: '100%' }],
    };
    expect(messages(spec)).toEqual([
      'spec.subsets[0].maxReplicas: Invalid value: "100%": the maxReplicas type must be Int for StatefulSet',
    ]);
  });

  it('wants adaptive settings only with type Adaptive', () => {
    expect(messages({ scheduleStrategy: { adaptive: { rescheduleCriticalSeconds: 5 } } })).toContain(
      'spec.scheduleStrategy.type: Invalid value: "": the scheduleStrategy\'s type must be adaptive when using adaptive scheduleStrategy',
    );
  });

  it('checks node selector expressions, field selectors and tolerations as a pod spec', () => {
    const errors = messages({
      subsets: [
        {
          name: 'a',
          requiredNodeSelectorTerm: {
            matchExpressions: [{ key: 'size', operator: 'Gt', values: ['big'] }],
            matchFields: [{ key: 'metadata.labels', operator: 'In', values: ['x'] }],
          },
          tolerations: [{ operator: 'Equal', value: 'x' }],
        },
      ],
    });
    expect(errors.map((e) => e.split(':')[0])).toEqual([
      'spec.subsets[0].requiredNodeSelectorTerm.matchExpressions[0].values[0]',
      'spec.subsets[0].requiredNodeSelectorTerm.matchFields[0].key',
      'spec.subsets[0].tolerations[0].operator',
    ]);
  });

  it('refuses a second WorkloadSpread on the same workload, whatever the version', () => {
    const other = ws({ targetRef: { apiVersion: 'apps.kruise.io/v1beta1', kind: 'CloneSet', name: 'web' } }, 'other');
    expect(validateWorkloadSpreadConflict(ws(), [ws(), other]).map(formatFieldError)).toEqual([
      expect.stringContaining('ws.spec.targetRef is in conflict with other WorkloadSpread other'),
    ]);
    const elsewhere = ws({ targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' } }, 'other');
    expect(validateWorkloadSpreadConflict(ws(), [elsewhere])).toEqual([]);
  });
});
