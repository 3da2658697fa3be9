import { describe, expect, it } from 'vitest';
import { formatFieldError } from '../../validation/field-error.js';
import { defaultContainerRecreateRequest } from './defaults.js';
import { containerRecreateRequestFromPod, type CrrSourcePod } from './from-pod.js';
import type { ContainerRecreateRequest } from './schema.js';
import { validateContainerRecreateRequestUpdate } from './validation.js';

const crr = (containers: string[] = ['app']): ContainerRecreateRequest => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'ContainerRecreateRequest',
  metadata: { name: 'r', namespace: 'ns' },
  spec: { podName: 'web-0', containers: containers.map((name) => ({ name })) },
});

const pod = (over: Partial<CrrSourcePod['status']> = {}): CrrSourcePod => ({
  metadata: { name: 'web-0', uid: 'uid-1' },
  spec: {
    nodeName: 'node-a',
    terminationGracePeriodSeconds: 20,
    containers: [
      { name: 'app', ports: [{ containerPort: 80 }], lifecycle: { preStop: { httpGet: { port: 80, path: '/q' } } } },
      { name: 'side', lifecycle: { preStop: { exec: { command: ['sh', '-c', 'sleep 1'] } } } },
    ],
  },
  status: {
    phase: 'Running',
    containerStatuses: [
      { name: 'app', containerID: 'containerd://a1', restartCount: 2 },
      { name: 'side', containerID: 'containerd://s1', restartCount: 0 },
    ],
    ...over,
  },
});

describe('ContainerRecreateRequest defaulting from its pod', () => {
  it('sets the labels, the pod grace, preStop (ports only for httpGet) and the status context', () => {
    const out = containerRecreateRequestFromPod(defaultContainerRecreateRequest(crr(['app', 'side'])), pod(), true);
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.crr.metadata?.labels).toEqual({
      'crr.apps.kruise.io/pod-name': 'web-0',
      'crr.apps.kruise.io/active': 'true',
      'crr.apps.kruise.io/node-name': 'node-a',
      'crr.apps.kruise.io/pod-uid': 'uid-1',
    });
    expect(out.crr.spec.strategy).toEqual({ failurePolicy: 'Fail', terminationGracePeriodSeconds: 20 });
    const [app, side] = out.crr.spec.containers;
    expect(app?.ports).toEqual([{ containerPort: 80 }]);
    expect(app?.statusContext).toEqual({ containerID: 'containerd://a1', restartCount: 2 });
    expect(side?.preStop).toEqual({ exec: { command: ['sh', '-c', 'sleep 1'] } });
    expect(side?.ports).toBeUndefined();
  });

  it('refuses a missing pod, an inactive or unscheduled pod, a gone node, a missing container', () => {
    const errorsOf = (r: ReturnType<typeof containerRecreateRequestFromPod>): string[] =>
      r.ok ? [] : r.errors.map(formatFieldError);
    expect(errorsOf(containerRecreateRequestFromPod(crr(), undefined, true))).toEqual([
      'spec.podName: Not found: "web-0": no found Pod named web-0',
    ]);
    expect(errorsOf(containerRecreateRequestFromPod(crr(), pod({ phase: 'Succeeded' }), true))[0]).toContain(
      'inactive Pod',
    );
    const pending = pod();
    delete pending.spec.nodeName;
    expect(errorsOf(containerRecreateRequestFromPod(crr(), pending, true))[0]).toContain('pending Pod');
    expect(errorsOf(containerRecreateRequestFromPod(crr(), pod(), false))[0]).toContain('Node node-a');
    expect(errorsOf(containerRecreateRequestFromPod(crr(['nope']), pod(), true))).toEqual([
      'spec.containers[0].name: Not found: "nope": container nope not found in Pod',
    ]);
    expect(errorsOf(containerRecreateRequestFromPod(crr(), pod({ containerStatuses: [] }), true))[0]).toContain(
      'no containerID in app containerStatus',
    );
  });

  it('refuses system-filled fields set by the user', () => {
    const input = crr();
    input.spec.containers[0]!.statusContext = { containerID: 'x', restartCount: 0 };
    const out = containerRecreateRequestFromPod(input, pod(), true);
    expect(out.ok ? [] : out.errors.map((e) => e.path)).toEqual(['spec.containers[0]']);
  });
});

describe('ContainerRecreateRequest updates', () => {
  const created = (): ContainerRecreateRequest => {
    const out = containerRecreateRequestFromPod(defaultContainerRecreateRequest(crr()), pod(), true);
    if (!out.ok) throw new Error('setup');
    return out.crr;
  };

  it('allow status and label changes other than the pod labels', () => {
    const next = created();
    next.metadata!.labels!['crr.apps.kruise.io/active'] = 'false';
    next.status = { phase: 'Completed' };
    expect(validateContainerRecreateRequestUpdate(next, created())).toEqual([]);
  });

  it('refuse a spec change, a pod label change and a changed unready-acquired annotation', () => {
    const previous = created();
    previous.metadata!.annotations = { 'crr.apps.kruise.io/unready-acquired': '2026-01-01T00:00:00Z' };
    const next = created();
    next.spec.activeDeadlineSeconds = 30;
    next.metadata!.labels!['crr.apps.kruise.io/node-name'] = 'other';
    next.metadata!.annotations = { 'crr.apps.kruise.io/unready-acquired': '2026-01-02T00:00:00Z' };
    expect(validateContainerRecreateRequestUpdate(next, previous).map((e) => e.path)).toEqual([
      'spec',
      'metadata.labels[crr.apps.kruise.io/node-name]',
      'metadata.annotations[crr.apps.kruise.io/unready-acquired]',
    ]);
  });
});
