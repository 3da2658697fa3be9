import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { CONDITION_INPLACE_UPDATE_READY, type Container } from '@flotilla/api';
import { KubeApiError } from '../../errors.js';
import type { EventRecorder } from '../../runtime/events.js';
import { ResourceVersionExpectations, ScaleExpectations } from '../../runtime/expectations.js';
import { newRevision } from './revisions.js';
import type { SyncContext } from './sync-context.js';
import { FakeClient } from './testing/fake-client.js';
import { cloneSet, NOW, pod } from './testing/fixtures.js';
import { updatePods, type UpdateInputs } from './update.js';
import type { Pod } from '../../kube/types.js';
import type { CloneSet } from './types.js';

const SMALL = { requests: { cpu: '100m' }, limits: { cpu: '200m' } };
const LARGE = { requests: { cpu: '100m' }, limits: { cpu: '1' } };

function sized(resources: typeof SMALL, extra: Partial<Container> = {}): CloneSet {
  return cloneSet({
    updateStrategy: { type: 'InPlaceIfPossible' },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: { containers: [{ name: 'main', image: 'registry.local/app:v1', resources, ...extra }] },
    },
  });
}

function context(cs: CloneSet, client: FakeClient): SyncContext & { recorded: string[] } {
  const recorded: string[] = [];
  return {
    key: 'ns/cs',
    cs,
    client,
    scaleExpectations: new ScaleExpectations(),
    resourceVersions: new ResourceVersionExpectations(),
    events: {
      event: (_o: unknown, type: string, reason: string, message: string) =>
        recorded.push(`${type} ${reason}: ${message}`),
    } as unknown as EventRecorder,
    log: pino({ level: 'silent' }),
    now: NOW,
    options: {
      maxConcurrentCreates: 4,
      maxConcurrentWrites: 4,
      expectationRecheckMs: 1000,
      plan: {},
      inPlaceVerticalScaling: true,
    },
    inPlace: { verticalScaling: true, resizeSubresource: true },
    recorded,
  };
}

/** A pod of the small revision with the InPlaceUpdateReady gate, and the resize to the large one. */
function scenario(extra: Partial<Container> = {}) {
  const from = newRevision(sized(SMALL, extra), 1, 0);
  const to = newRevision(sized(LARGE, extra), 2, 0);
  const p: Pod = pod({ name: 'cs-a', revision: from.metadata.name, state: 'Normal', inPlaceReady: true });
  p.spec.containers = [{ name: 'main', image: 'registry.local/app:v1', resources: SMALL, ...extra }];
  p.spec.readinessGates = [{ conditionType: CONDITION_INPLACE_UPDATE_READY }];
  const input: UpdateInputs = { pods: [p], target: to, revisions: [from, to], dataOf: (r) => r.data };
  return { cs: sized(LARGE, extra), input };
}

describe('updatePods: in-place resize', () => {
  it('patches pods/resize with the changed values, then updates the pod; the pod stays ready', async () => {
    const { cs, input } = scenario();
    const client = new FakeClient();
    const ctx = context(cs, client);
    await updatePods(ctx, input);
    expect(client.ops()).toEqual(['resizePod cs-a', 'updatePod cs-a']);
    expect(client.calls[0]!.body).toEqual({
      spec: { containers: [{ name: 'main', resources: { limits: { cpu: '1' } } }] },
    });
    const updated = client.calls[1]!.body as Pod;
    expect(updated.spec.containers[0]!.resources).toEqual(LARGE);
    expect(JSON.parse(updated.metadata.annotations!['apps.kruise.io/inplace-update-state']!)).toMatchObject({
      revision: input.target.metadata.name,
      updateResources: true,
    });
    expect(ctx.recorded).toEqual([expect.stringMatching(/^Normal SuccessfulUpdatePodInPlace/)]);
  });

  it('a RestartContainer resize marks the pod not ready first', async () => {
    const { cs, input } = scenario({ resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }] });
    const client = new FakeClient();
    await updatePods(context(cs, client), input);
    expect(client.ops()).toEqual(['patchPodConditions cs-a', 'resizePod cs-a', 'updatePod cs-a']);
  });

  it('below Kubernetes 1.32 the pod update carries the resources, no resize call', async () => {
    const { cs, input } = scenario();
    const client = new FakeClient();
    const ctx = { ...context(cs, client), inPlace: { verticalScaling: true, resizeSubresource: false } };
    await updatePods(ctx, input);
    expect(client.ops()).toEqual(['updatePod cs-a']);
    expect((client.calls[0]!.body as Pod).spec.containers[0]!.resources).toEqual(LARGE);
  });

  it('a resize the apiserver refuses fails with its message and an event; the pod is not updated', async () => {
    const { cs, input } = scenario();
    const client = new FakeClient();
    client.failWhen = (call) =>
      call.op === 'resizePod'
        ? new KubeApiError(403, 'pods "cs-a" is forbidden: exceeded quota: cpu, requested: limits.cpu=800m')
        : undefined;
    const ctx = context(cs, client);
    await expect(updatePods(ctx, input)).rejects.toThrow(/^failed to resize pod cs-a: .*exceeded quota: cpu/);
    expect(client.ops()).toEqual(['resizePod cs-a']);
    expect(ctx.recorded).toEqual([
      expect.stringMatching(
        /^Warning FailedUpdatePodInPlace: failed to update pod cs-a in-place\(revision .*exceeded quota/,
      ),
    ]);
  });
});
