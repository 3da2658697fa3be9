import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../../validation/field-error.js';
import { defaultSidecarSet } from './defaults.js';
import type { SidecarSet } from './schema.js';
import { validateSidecarSetUpdate } from './update.js';
import { validateSidecarSet } from './validation.js';

function sidecarSet(spec: Partial<SidecarSet['spec']> = {}): SidecarSet {
  return {
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name: 'log-agent' },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      containers: [{ name: 'agent', image: 'fluent-bit:2.2' }],
      ...spec,
    },
  };
}

const messages = (errors: ReturnType<typeof validateSidecarSet>): string[] => errors.map(formatFieldError);

describe('SidecarSet defaults', () => {
  it('are OpenKruise’s', () => {
    const { spec } = defaultSidecarSet(
      sidecarSet({
        initContainers: [{ name: 'init', image: 'busybox:1.36' }],
        patchPodMetadata: [{ annotations: { a: 'b' } }],
        injectionStrategy: { revision: { customVersion: 'v1' } },
      }),
    );
    expect(spec.updateStrategy).toEqual({ type: 'RollingUpdate', maxUnavailable: 1, partition: 0 });
    expect(spec.revisionHistoryLimit).toBe(10);
    expect(spec.containers?.[0]).toMatchObject({
      podInjectPolicy: 'BeforeAppContainer',
      upgradeStrategy: { upgradeType: 'ColdUpgrade' },
      shareVolumePolicy: { type: 'disabled' },
      imagePullPolicy: 'IfNotPresent',
      terminationMessagePath: '/dev/termination-log',
    });
    expect(spec.initContainers?.[0]?.podInjectPolicy).toBe('AfterAppContainer');
    expect(spec.patchPodMetadata?.[0]?.patchPolicy).toBe('Retain');
    expect(spec.injectionStrategy?.revision?.policy).toBe('Always');
  });

  it('default transferEnv field references to v1', () => {
    const { spec } = defaultSidecarSet(
      sidecarSet({
        containers: [
          {
            name: 'agent',
            image: 'a',
            transferEnv: [{ sourceContainerNameFrom: { fieldRef: { fieldPath: 'metadata.name' } }, envName: 'X' }],
          },
        ],
      }),
    );
    expect(spec.containers?.[0]?.transferEnv?.[0]?.sourceContainerNameFrom?.fieldRef?.apiVersion).toBe('v1');
  });
});

describe('SidecarSet validation', () => {
  it('accepts a minimal SidecarSet', () => {
    expect(validateSidecarSet(sidecarSet())).toEqual([]);
  });

  it('refuses in-place upgrades of native sidecar init containers', () => {
    const set = sidecarSet({ initContainers: [{ name: 'proxy', image: 'envoy', restartPolicy: 'Always' }] });
    expect(messages(validateSidecarSet(set))).toEqual([
      'spec.updateStrategy.type: Forbidden: initContainers[0] has restartPolicy Always and cannot be upgraded in place; set updateStrategy.type to NotUpdate',
    ]);
    expect(validateSidecarSet({ ...set, spec: { ...set.spec, updateStrategy: { type: 'NotUpdate' } } })).toEqual([]);
  });

  it('requires volume mounts to name a volume of the SidecarSet', () => {
    const set = sidecarSet({
      containers: [{ name: 'agent', image: 'a', volumeMounts: [{ name: 'logs', mountPath: '/var/log' }] }],
    });
    expect(validateSidecarSet(set).map((e) => e.path)).toEqual(['spec.containers[0].volumeMounts[0].name']);
  });

  it('requires MergePatchJson annotations to be JSON objects', () => {
    const set = sidecarSet({
      patchPodMetadata: [{ annotations: { 'oom-score': '1' }, patchPolicy: 'MergePatchJson' }],
    });
    expect(messages(validateSidecarSet(set))).toEqual([
      'spec.patchPodMetadata[0].annotations[oom-score]: Invalid value: "1": must be a JSON object when patchPolicy is MergePatchJson',
    ]);
  });

  it('checks downward-API sources of transferEnv', () => {
    const set = sidecarSet({
      containers: [
        {
          name: 'agent',
          image: 'a',
          transferEnv: [
            {
              sourceContainerNameFrom: { fieldRef: { apiVersion: 'v2', fieldPath: "metadata.labels['Bad Key']" } },
              envNames: ['A'],
            },
          ],
        },
      ],
    });
    expect(validateSidecarSet(set).map((e) => e.path)).toEqual([
      'spec.containers[0].transferEnv[0].sourceContainerNameFrom.fieldRef.apiVersion',
      'spec.containers[0].transferEnv[0].sourceContainerNameFrom.fieldRef.fieldPath',
    ]);
  });
});

describe('SidecarSet updates', () => {
  it('keep each container’s upgrade type', () => {
    const next = sidecarSet({
      containers: [
        { name: 'agent', image: 'a', upgradeStrategy: { upgradeType: 'HotUpgrade', hotUpgradeEmptyImage: 'empty:1' } },
      ],
    });
    expect(messages(validateSidecarSetUpdate(next, sidecarSet()))).toEqual([
      'spec.containers[0].upgradeStrategy.upgradeType: Invalid value: "HotUpgrade": container agent upgradeType is immutable',
    ]);
  });

  it('may not add containers the stored SidecarSet lacks (OpenKruise v1.8)', () => {
    const next = sidecarSet({
      containers: [
        { name: 'agent', image: 'a' },
        { name: 'second', image: 'b' },
      ],
    });
    expect(validateSidecarSetUpdate(next, sidecarSet()).map((e) => e.path)).toEqual(['spec.containers[1].name']);
  });

  it('may change images', () => {
    expect(
      validateSidecarSetUpdate(sidecarSet({ containers: [{ name: 'agent', image: 'fluent-bit:3.0' }] }), sidecarSet()),
    ).toEqual([]);
  });
});

describe('SidecarSet v1.9 resourcesPolicy and shareVolumeDevicePolicy', () => {
  const policy = { targetContainersMode: 'sum', resourcesExpr: { limits: { cpu: 'cpu*50%+100m' } } };

  it('accepts a resources policy, defaulting the regex to every container', () => {
    const ss = sidecarSet({ containers: [{ name: 'agent', image: 'fluent-bit:2.2', resourcesPolicy: policy }] });
    expect(messages(validateSidecarSet(ss))).toEqual([]);
    expect(defaultSidecarSet(ss).spec.containers?.[0]?.resourcesPolicy?.targetContainersNameRegex).toBe('.*');
  });

  it('rejects what OpenKruise rejects, naming the field', () => {
    const ss = sidecarSet({
      initContainers: [{ name: 'init', image: 'busybox:1.36', resourcesPolicy: policy }],
      containers: [
        {
          name: 'agent',
          image: 'fluent-bit:2.2',
          resources: { limits: { cpu: '1' } },
          shareVolumeDevicePolicy: { type: 'on' },
          resourcesPolicy: {
            targetContainersMode: 'avg',
            targetContainersNameRegex: '(',
            resourcesExpr: { requests: { cpu: 'cpu*', memory: 'memory/0' } },
          },
        },
        { name: 'b', image: 'b:1', resourcesPolicy: { targetContainersMode: 'max', resourcesExpr: {} } },
      ],
    });
    const found = messages(validateSidecarSet(ss)).join('\n');
    expect(found).toContain(
      'spec.initContainers[0].resourcesPolicy: Forbidden: resourcesPolicy is only supported for containers with RestartPolicy Always',
    );
    expect(found).toContain(
      'spec.containers[0].resourcesPolicy: Forbidden: resourcesPolicy and resources cannot be configured together',
    );
    expect(found).toContain('spec.containers[0].shareVolumeDevicePolicy.type: Unsupported value: "on"');
    expect(found).toContain('spec.containers[0].resourcesPolicy.targetContainersMode: Unsupported value: "avg"');
    expect(found).toContain(
      'spec.containers[0].resourcesPolicy.targetContainersNameRegex: Invalid value: "(": invalid regex pattern',
    );
    expect(found).toContain(
      'spec.containers[0].resourcesPolicy.resourcesExpr.requests.cpu: Invalid value: "cpu*": invalid expression',
    );
    expect(found).toContain(
      'spec.containers[0].resourcesPolicy.resourcesExpr.requests.memory: Invalid value: "memory/0": invalid expression: division by zero',
    );
    expect(found).toContain(
      'spec.containers[1].resourcesPolicy.resourcesExpr: Required value: at least one of limits or requests must be configured',
    );
  });
});
