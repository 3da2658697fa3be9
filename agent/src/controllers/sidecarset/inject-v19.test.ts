import { describe, expect, it } from 'vitest';
import { defaultSidecarSet, type SidecarContainer, type SidecarSet } from '@flotilla/api';
import type { Pod } from '../../kube/types.js';
import { aggregate } from './control/resources-policy.js';
import { injectSidecars } from './inject.js';

const NOW = '2026-01-01T00:00:00Z';

function sidecarSet(name: string, spec: Partial<SidecarSet['spec']>): SidecarSet {
  return defaultSidecarSet({
    apiVersion: 'apps.kruise.io/v1alpha1',
    kind: 'SidecarSet',
    metadata: { name },
    spec: { selector: { matchLabels: { app: 'a' } }, ...spec },
  });
}

const native = (name: string, extra: Partial<SidecarContainer> = {}): SidecarContainer => ({
  name,
  image: `${name}:1`,
  restartPolicy: 'Always',
  ...extra,
});

const pod = (spec: Partial<Pod['spec']> = {}): Pod => ({
  metadata: { name: 'p', namespace: 'ns', labels: { app: 'a' } },
  spec: { containers: [{ name: 'main', image: 'app:v1' }], ...spec },
});

const names = (list: readonly { name: string }[] | undefined): string[] => (list ?? []).map((c) => c.name);

describe('v1.9 native sidecar injection', () => {
  it('sorts the init containers of all SidecarSets together by name, Before ones ahead of the pod’s', () => {
    const a = sidecarSet('a', {
      initContainers: [native('zeta'), native('alpha', { podInjectPolicy: 'BeforeAppContainer' })],
    });
    const b = sidecarSet('b', {
      initContainers: [native('mid'), { name: 'setup', image: 'setup:1' }],
      volumes: [{ name: 'dev', emptyDir: {} }],
    });
    const { pod: out } = injectSidecars(pod({ initContainers: [{ name: 'own', image: 'own:1' }] }), [b, a], NOW);
    expect(names(out.spec?.initContainers)).toEqual(['alpha', 'own', 'mid', 'setup', 'zeta']);
    for (const c of out.spec?.initContainers?.filter((c) => c.name !== 'own') ?? []) {
      expect(c.env).toContainEqual({ name: 'IS_INJECTED', value: 'true' });
    }
    // Only native sidecars join the SidecarSet's sidecarList.
    const hash = JSON.parse(out.metadata?.annotations?.['kruise.io/sidecarset-hash'] ?? '{}');
    expect(hash.b.sidecarList).toEqual(['mid']);
  });

  it('keeps SidecarSet order for containers unless sorting by name is on', () => {
    const a = sidecarSet('a', { containers: [{ name: 'zz', image: 'z:1' }] });
    const b = sidecarSet('b', { containers: [{ name: 'aa', image: 'a:1' }] });
    expect(names(injectSidecars(pod(), [a, b], NOW).pod.spec?.containers)).toEqual(['zz', 'aa', 'main']);
    const sorted = injectSidecars(pod(), [a, b], NOW, { sortContainersByName: true });
    expect(names(sorted.pod.spec?.containers)).toEqual(['aa', 'zz', 'main']);
  });
});

describe('v1.9 shareVolumeDevicePolicy', () => {
  it('gives the sidecar the app containers’ devices, skipping taken paths, and injects the volumes its devices name', () => {
    const ss = sidecarSet('dev', {
      containers: [
        {
          name: 'probe',
          image: 'probe:1',
          shareVolumeDevicePolicy: { type: 'enabled' },
          volumeMounts: [{ name: 'cfg', mountPath: '/dev/b' }],
          volumeDevices: [{ name: 'raw', devicePath: '/dev/own' }],
        },
      ],
      volumes: [
        { name: 'cfg', emptyDir: {} },
        { name: 'raw', persistentVolumeClaim: { claimName: 'raw' } },
      ],
    });
    const app = pod({
      containers: [
        {
          name: 'main',
          image: 'app:v1',
          volumeDevices: [
            { name: 'disk', devicePath: '/dev/a' },
            { name: 'other', devicePath: '/dev/b' },
          ],
        },
      ],
    });
    const out = injectSidecars(app, [ss], NOW).pod;
    expect(out.spec?.containers?.[0]?.volumeDevices).toEqual([
      { name: 'raw', devicePath: '/dev/own' },
      { name: 'disk', devicePath: '/dev/a' },
    ]);
    expect(names(out.spec?.volumes)).toEqual(['cfg', 'raw']);
  });
});

describe('v1.9 resourcesPolicy', () => {
  const policy = (mode: string, regex?: string): SidecarContainer['resourcesPolicy'] => ({
    targetContainersMode: mode,
    ...(regex ? { targetContainersNameRegex: regex } : {}),
    resourcesExpr: {
      limits: { cpu: 'cpu*50%+100m', memory: 'max(memory*20%+100Mi,200Mi)' },
      requests: { cpu: 'cpu*30%+50m', memory: 'memory*15%+50Mi' },
    },
  });
  const app = pod({
    containers: [
      {
        name: 'main',
        image: 'a:1',
        resources: { limits: { cpu: '200m', memory: '400Mi' }, requests: { cpu: '100m', memory: '200Mi' } },
      },
      {
        name: 'web',
        image: 'w:1',
        resources: { limits: { cpu: '400m', memory: '600Mi' }, requests: { cpu: '200m', memory: '300Mi' } },
      },
    ],
  });

  it('computes the sidecar’s resources from the sum of the targets (OpenKruise e2e Story 5)', () => {
    const ss = sidecarSet('rp', { containers: [{ name: 'envoy', image: 'envoy:1', resourcesPolicy: policy('sum') }] });
    const envoy = injectSidecars(app, [ss], NOW).pod.spec?.containers?.find((c) => c.name === 'envoy');
    expect(envoy?.resources).toEqual({
      limits: { cpu: '400m', memory: '300Mi' },
      requests: { cpu: '140m', memory: '125Mi' },
    });
    expect(envoy).not.toHaveProperty('resourcesPolicy');
  });

  it('takes the max of the regex’s targets, and leaves a limit unset when a target is unlimited', () => {
    const ss = sidecarSet('rp', {
      initContainers: [native('proxy', { resourcesPolicy: policy('max', '^w') })],
    });
    const proxy = injectSidecars(app, [ss], NOW).pod.spec?.initContainers?.[0];
    expect(proxy?.resources).toEqual({
      limits: { cpu: '300m', memory: '220Mi' },
      requests: { cpu: '110m', memory: '95Mi' },
    });
    expect(aggregate([{ name: 'x', resources: { requests: { cpu: '1' } } }], 'cpu', 'sum')).not.toHaveProperty('limit');
  });

  it('refuses the pod when no container matches, never counting injected sidecars', () => {
    const ss = sidecarSet('rp', {
      containers: [
        { name: 'envoy', image: 'envoy:1', resourcesPolicy: policy('sum', '^envoy|^log$') },
        { name: 'log', image: 'log:1' },
      ],
    });
    expect(() => injectSidecars(app, [ss], NOW)).toThrow('no containers match the regex pattern "^envoy|^log$"');
  });
});
