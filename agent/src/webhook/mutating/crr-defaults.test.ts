import type { CrrSourcePod } from '@flotilla/api';
import { describe, expect, it } from 'vitest';
import type { AdmissionDecision, AdmissionRequest } from '../admission/types.js';
import { crrDefaultingHandler, type CrrPodLookup } from './crr-defaults.js';
import { kruiseDefaultingHandler } from './kruise-defaults.js';

const pod: CrrSourcePod = {
  metadata: { name: 'web-0', uid: 'u1' },
  spec: { nodeName: 'n1', terminationGracePeriodSeconds: 15, containers: [{ name: 'app' }] },
  status: { phase: 'Running', containerStatuses: [{ name: 'app', containerID: 'containerd://a', restartCount: 3 }] },
};

const request = (containers: string[]): AdmissionRequest =>
  ({
    uid: '1',
    operation: 'CREATE',
    namespace: 'ns',
    name: 'r',
    kind: { group: 'apps.kruise.io', version: 'v1alpha1', kind: 'ContainerRecreateRequest' },
    resource: { group: 'apps.kruise.io', version: 'v1alpha1', resource: 'containerrecreaterequests' },
    object: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'ContainerRecreateRequest',
      metadata: { name: 'r', namespace: 'ns' },
      spec: { podName: 'web-0', containers: containers.map((name) => ({ name })) },
    },
  }) as unknown as AdmissionRequest;

const handler = (lookup: CrrPodLookup) =>
  crrDefaultingHandler({ read: () => Promise.resolve(lookup) }, kruiseDefaultingHandler('ContainerRecreateRequest'));

describe('CRR defaulting webhook', () => {
  it('patches in the labels, the grace and the status context from the pod', async () => {
    const decision = await handler({ pod, nodeExists: true })(request(['app']));
    const patch = decision.allowed ? (decision.patch ?? []) : [];
    const paths = patch.map((op) => `${op.op} ${op.path}`);
    expect(paths).toEqual(['add /metadata/labels', 'replace /spec/containers', 'add /spec/strategy']);
    const value = (path: string): unknown =>
      (patch.find((op) => op.path === path) as { value?: unknown } | undefined)?.value;
    expect(value('/metadata/labels')).toMatchObject({ 'crr.apps.kruise.io/pod-uid': 'u1' });
    expect(value('/spec/containers')).toEqual([
      { name: 'app', statusContext: { containerID: 'containerd://a', restartCount: 3 } },
    ]);
    expect(value('/spec/strategy')).toEqual({ failurePolicy: 'Fail', terminationGracePeriodSeconds: 15 });
  });

  it('refuses a container the pod lacks and a pod on a missing node, naming the field', async () => {
    const message = (d: AdmissionDecision): string => (d.allowed ? '' : d.message);
    const missing = await handler({ pod, nodeExists: true })(request(['ghost']));
    expect(missing).toMatchObject({ allowed: false });
    expect(message(missing)).toContain('spec.containers[0].name: Not found: "ghost"');
    const gone = await handler({ pod, nodeExists: false })(request(['app']));
    expect(message(gone)).toContain('spec.podName');
    const noPod = await handler({ nodeExists: false })(request(['app']));
    expect(message(noPod)).toContain('no found Pod named web-0');
  });
});
