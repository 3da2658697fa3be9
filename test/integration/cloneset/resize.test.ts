/**
 * In-place resource resize (OpenKruise's InPlaceWorkloadVerticalScaling gate) on a real
 * apiserver (Kubernetes 1.36, so through the pods/resize subresource), with kwok playing the
 * kubelet: it reports the resized values in the container statuses and restarts a container only
 * when its resizePolicy asks for it. Also: an image and resources together, a QoS class change
 * (recreated, as OpenKruise does) and a resize a ResourceQuota refuses.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CloneSet, Container } from '@flotilla/api';
import { eventually } from '../helpers/kube.js';
import { resourcePath, type ResourceRef } from '../../../agent/src/runtime/resource.js';
import {
  cloneSet,
  createCloneSet,
  env,
  events,
  inPlaceState,
  livePods,
  namespace,
  patchCloneSet,
  startController,
  statusReaches,
  type Pod,
  type RunningController,
} from './harness.js';

const e = env();
const running: RunningController[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

async function setup(prefix: string): Promise<string> {
  const ns = await namespace(e, prefix);
  running.push(await startController(e, ns, { options: { inPlaceVerticalScaling: true } }));
  return ns;
}

type Resources = NonNullable<Container['resources']>;

const SMALL: Resources = { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '200m', memory: '128Mi' } };
const LARGE: Resources = { requests: { cpu: '100m', memory: '96Mi' }, limits: { cpu: '400m', memory: '128Mi' } };

function main(resources: Resources, extra: Partial<Container> = {}): Container {
  return { name: 'main', image: 'registry.local/app:v1', resources, ...extra };
}

/** A CloneSet `web` whose one container `main` has `container`'s resources, updated InPlaceIfPossible. */
function sized(replicas: number, container: Container): CloneSet {
  const cs = cloneSet('web', { replicas, updateStrategy: { type: 'InPlaceIfPossible' } });
  cs.spec.template.spec!.containers = [container];
  return cs;
}

function setContainer(ns: string, container: Container): Promise<CloneSet> {
  return patchCloneSet(e, ns, 'web', { spec: { template: { spec: { containers: [container] } } } });
}

/** Every pod at the update revision, ready and available (in place: lifecycle Normal again). */
function finished(ns: string, replicas: number): Promise<CloneSet> {
  return statusReaches(
    e,
    ns,
    'web',
    `${replicas} pods updated and available`,
    (s, cs) =>
      s.observedGeneration === cs.metadata?.generation &&
      s.updatedReadyReplicas === replicas &&
      s.updatedAvailableReplicas === replicas &&
      s.availableReplicas === replicas &&
      s.currentRevision === s.updateRevision,
  );
}

/** Condition times have second precision: a transition after this one shows a later time. */
const nextSecond = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1100));

const uids = (pods: Pod[]): string[] => pods.map((p) => p.metadata.uid!).sort();
const byUid = (pods: Pod[]): Map<string, Pod> => new Map(pods.map((p) => [p.metadata.uid!, p]));
const statusOf = (p: Pod) => p.status!.containerStatuses!.find((s) => s.name === 'main')!;
const inPlaceReadySince = (p: Pod): string | null | undefined =>
  p.status?.conditions?.find((c) => c.type === 'InPlaceUpdateReady')?.lastTransitionTime;

describe('CloneSet in-place resource resize', () => {
  it('resizes through pods/resize: same pods, no restart, new resources in spec and status, never unready', async () => {
    const ns = await setup('cs-resize');
    await createCloneSet(e, ns, sized(2, main(SMALL)));
    await finished(ns, 2);
    const before = byUid(await livePods(e, ns, 'web'));
    await nextSecond();

    await setContainer(ns, main(LARGE));
    const cs = await finished(ns, 2);
    const after = await livePods(e, ns, 'web');
    expect(uids(after)).toEqual([...before.keys()].sort());
    for (const p of after) {
      const old = before.get(p.metadata.uid!)!;
      expect(p.spec.containers[0]!.resources).toEqual(LARGE);
      expect(statusOf(p).resources).toEqual(LARGE);
      expect(statusOf(p)).toMatchObject({ restartCount: 0, containerID: statusOf(old).containerID });
      // InPlaceUpdateReady never went False: its transition time is the pod's first one.
      expect(inPlaceReadySince(p)).toBe(inPlaceReadySince(old));
      expect(p.metadata.labels).toMatchObject({
        'controller-revision-hash': cs.status!.updateRevision,
        'lifecycle.apps.kruise.io/state': 'Normal',
      });
      const state = inPlaceState(p) as ReturnType<typeof inPlaceState> & { updateResources?: boolean };
      expect(state).toMatchObject({ revision: cs.status!.updateRevision, updateResources: true });
      expect(state.updateImages).toBeUndefined();
      expect(state.lastContainerStatuses).toBeNull();
      // The resources went through the resize subresource, not the pod update.
      const managed = (p.metadata.managedFields ?? []) as { subresource?: string }[];
      expect(managed.some((f) => f.subresource === 'resize')).toBe(true);
    }
    const inPlace = (await events(e, ns, 'web')).filter((ev) => ev.reason === 'SuccessfulUpdatePodInPlace');
    expect(inPlace).toHaveLength(2);
  });

  it('a resize of a resource whose resizePolicy is RestartContainer goes unready first and restarts the container', async () => {
    const ns = await setup('cs-resize-restart');
    const policy = { resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'RestartContainer' }] };
    await createCloneSet(e, ns, sized(1, main(SMALL, policy)));
    await finished(ns, 1);
    const [before] = await livePods(e, ns, 'web');
    await nextSecond();

    await setContainer(ns, main(LARGE, policy));
    await finished(ns, 1);
    const [after] = await livePods(e, ns, 'web');
    expect(after!.metadata.uid).toBe(before!.metadata.uid);
    expect(statusOf(after!).resources).toEqual(LARGE);
    expect(statusOf(after!).restartCount).toBe(1);
    expect(statusOf(after!).containerID).not.toBe(statusOf(before!).containerID);
    // InPlaceUpdateReady went False (StartInPlaceUpdate) and back to True.
    expect(inPlaceReadySince(after!)).not.toBe(inPlaceReadySince(before!));
  });

  it('an image and resources together are one in-place update, recorded with both', async () => {
    const ns = await setup('cs-resize-image');
    await createCloneSet(e, ns, sized(1, main(SMALL)));
    await finished(ns, 1);
    const [before] = await livePods(e, ns, 'web');

    await setContainer(ns, main(LARGE, { image: 'registry.local/app:v2' }));
    const cs = await finished(ns, 1);
    const [after] = await livePods(e, ns, 'web');
    expect(after!.metadata.uid).toBe(before!.metadata.uid);
    expect(after!.spec.containers[0]).toMatchObject({ image: 'registry.local/app:v2', resources: LARGE });
    expect(statusOf(after!)).toMatchObject({ image: 'registry.local/app:v2', resources: LARGE, restartCount: 1 });
    expect(inPlaceState(after!)).toMatchObject({
      revision: cs.status!.updateRevision,
      updateImages: true,
      updateResources: true,
      lastContainerStatuses: { main: { imageID: statusOf(before!).imageID } },
    });
  });

  it('a change of QoS class cannot be resized (the apiserver forbids it): the pod is recreated, as OpenKruise does', async () => {
    const ns = await setup('cs-resize-qos');
    await createCloneSet(e, ns, sized(1, main(SMALL)));
    await finished(ns, 1);
    const [before] = await livePods(e, ns, 'web');

    const guaranteed = { requests: SMALL.limits, limits: SMALL.limits };
    await setContainer(ns, main(guaranteed));
    await finished(ns, 1);
    const [after] = await livePods(e, ns, 'web');
    expect(after!.metadata.uid).not.toBe(before!.metadata.uid);
    expect(after!.status?.qosClass).toBe('Guaranteed');
    expect((await events(e, ns, 'web')).some((ev) => ev.reason === 'SuccessfulUpdatePodReCreate')).toBe(true);
  });

  it('a resize the apiserver refuses (ResourceQuota) fails the update with its message; the pod runs on; a larger quota lets it through', async () => {
    const ns = await namespace(e, 'cs-resize-quota');
    await e.rest.request({
      method: 'POST',
      path: resourcePath(QUOTAS, ns),
      body: { metadata: { name: 'cpu' }, spec: { hard: { 'limits.cpu': '300m' } } },
    });
    await eventually('quota status computed', async () => {
      const q = await e.rest.request<{ status?: { hard?: object } }>({
        method: 'GET',
        path: resourcePath(QUOTAS, ns, 'cpu'),
      });
      return q.status?.hard !== undefined;
    });
    running.push(await startController(e, ns, { options: { inPlaceVerticalScaling: true } }));
    await createCloneSet(e, ns, sized(1, main(SMALL)));
    await finished(ns, 1);
    const [before] = await livePods(e, ns, 'web');

    await setContainer(ns, main(LARGE));
    const cs = await statusReaches(e, ns, 'web', 'FailedUpdate', (s) => failedUpdate(s) !== undefined);
    expect(failedUpdate(cs.status!)).toMatch(/^failed to resize pod web-\w{5}: .*exceeded quota: cpu/);
    const ev = await eventually('FailedUpdatePodInPlace event', async () =>
      (await events(e, ns, 'web')).find((x) => x.reason === 'FailedUpdatePodInPlace'),
    );
    expect(ev).toMatchObject({ type: 'Warning', message: expect.stringContaining('exceeded quota') });
    const [refused] = await livePods(e, ns, 'web');
    expect(refused!.metadata.uid).toBe(before!.metadata.uid);
    expect(refused!.spec.containers[0]!.resources).toEqual(SMALL);
    expect(refused!.metadata.labels?.['controller-revision-hash']).toBe(cs.status!.currentRevision);
    expect(cs.status).toMatchObject({ readyReplicas: 1, updatedReplicas: 0 });

    await e.rest.request({
      method: 'PATCH',
      path: resourcePath(QUOTAS, ns, 'cpu'),
      contentType: 'application/merge-patch+json',
      body: { spec: { hard: { 'limits.cpu': '1' } } },
    });
    const fixed = await finished(ns, 1);
    expect(fixed.status?.conditions ?? []).toEqual([]);
    const [resized] = await livePods(e, ns, 'web');
    expect(resized!.metadata.uid).toBe(before!.metadata.uid);
    expect(statusOf(resized!).resources).toEqual(LARGE);
  });
});

const QUOTAS: ResourceRef = {
  group: '',
  version: 'v1',
  plural: 'resourcequotas',
  kind: 'ResourceQuota',
  namespaced: true,
};

function failedUpdate(s: { conditions?: { type: string; status: string; message?: string }[] }): string | undefined {
  return s.conditions?.find((c) => c.type === 'FailedUpdate' && c.status === 'True')?.message;
}
