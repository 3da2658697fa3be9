import { describe, expect, it } from 'vitest';
import type { AdmissionRequest } from '../admission/types.js';
import { kruiseDefaultingHandler } from './kruise-defaults.js';

const job = (finalizers: string[]) => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'ImagePullJob',
  metadata: { name: 'j', namespace: 'ns', finalizers },
  spec: {
    image: 'registry.local/app:v1',
    completionPolicy: { type: 'Always' },
    pullPolicy: { timeoutSeconds: 600, backoffLimit: 3 },
    imagePullPolicy: 'IfNotPresent',
  },
});

const request = (operation: 'CREATE' | 'UPDATE', object: unknown): AdmissionRequest => ({
  uid: 'u',
  kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'ImagePullJob' },
  resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'imagepulljobs' },
  operation,
  object,
});

describe('ImagePullJob defaulting', () => {
  const handler = kruiseDefaultingHandler('ImagePullJob');

  const patchOf = async (operation: 'CREATE' | 'UPDATE'): Promise<string> => {
    const decision = await handler(request(operation, job([])));
    return JSON.stringify(decision.allowed ? (decision.patch ?? []) : decision);
  };

  it('adds the deletion-protection finalizer on create', async () => {
    expect(await patchOf('CREATE')).toContain('apps.kruise.io/deletion-protection');
  });

  it('leaves it out on update, so the controller can remove it from a finished job', async () => {
    expect(await patchOf('UPDATE')).toBe('[]');
  });
});

describe('SidecarSet defaulting at v1beta1', () => {
  const handler = kruiseDefaultingHandler('SidecarSet');
  const beta = {
    apiVersion: 'apps.kruise.io/v1beta1',
    kind: 'SidecarSet',
    metadata: { name: 'ss' },
    spec: {
      customVersion: 'v2',
      selector: { matchLabels: { app: 'web' } },
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'team-a' } },
      containers: [{ name: 'proxy', image: 'envoy:1' }],
    },
  };

  it('patches in the defaults and hashes only, keeping v1beta1 fields where they are', async () => {
    const decision = await handler({
      ...request('CREATE', beta),
      kind: { group: 'apps.kruise.io', version: 'v1beta1', kind: 'SidecarSet' },
    });
    expect(decision.allowed).toBe(true);
    const patch = decision.allowed ? (decision.patch ?? []) : [];
    const paths = patch.map((op) => op.path);
    expect(paths).toContain('/metadata/annotations');
    expect(paths.some((p) => p.startsWith('/spec/updateStrategy'))).toBe(true);
    // No conversion artefacts: nothing about namespace, customVersion or the custom-version label.
    expect(paths.filter((p) => /namespace|customVersion|labels/.test(p))).toEqual([]);
  });
});

describe('BroadcastJob defaulting at v1beta1', () => {
  it('patches in OpenKruise’s defaults: Always, no parallelism limit, FailFast', async () => {
    const decision = await kruiseDefaultingHandler('BroadcastJob')({
      ...request('CREATE', {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'BroadcastJob',
        metadata: { name: 'bcj', namespace: 'ns' },
        spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'm', image: 'busybox' }] } } },
      }),
      kind: { group: 'apps.kruise.io', version: 'v1beta1', kind: 'BroadcastJob' },
      resource: { group: 'apps.kruise.io', version: 'v1beta1', resource: 'broadcastjobs' },
    });
    const patch = decision.allowed ? (decision.patch ?? []) : [];
    const added = Object.fromEntries(patch.map((op) => [op.path, (op as { value?: unknown }).value]));
    expect(added).toMatchObject({
      '/spec/completionPolicy': { type: 'Always' },
      '/spec/parallelism': 2147483647,
      '/spec/failurePolicy': { type: 'FailFast' },
    });
  });
});

describe('Advanced DaemonSet defaulting at v1beta1', () => {
  it('patches in RollingUpdate/Standard, maxUnavailable 1, burstReplicas 250, and keeps scaleStrategy', async () => {
    const decision = await kruiseDefaultingHandler('DaemonSet')({
      ...request('CREATE', {
        apiVersion: 'apps.kruise.io/v1beta1',
        kind: 'DaemonSet',
        metadata: { name: 'ds', namespace: 'ns' },
        spec: {
          selector: { matchLabels: { app: 'a' } },
          template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'm', image: 'busybox' }] } },
          scaleStrategy: { partitionedScaling: true },
        },
      }),
      kind: { group: 'apps.kruise.io', version: 'v1beta1', kind: 'DaemonSet' },
      resource: { group: 'apps.kruise.io', version: 'v1beta1', resource: 'daemonsets' },
    });
    const patch = decision.allowed ? (decision.patch ?? []) : [];
    const added = Object.fromEntries(patch.map((op) => [op.path, (op as { value?: unknown }).value]));
    expect(added).toMatchObject({
      '/spec/updateStrategy': {
        type: 'RollingUpdate',
        rollingUpdate: { rollingUpdateType: 'Standard', maxUnavailable: 1, maxSurge: 0 },
      },
      '/spec/burstReplicas': 250,
      '/spec/revisionHistoryLimit': 10,
    });
    expect(
      patch.map((op) => op.path).filter((p) => p.startsWith('/spec/scaleStrategy') || p.startsWith('/metadata')),
    ).toEqual([]);
  });
});
