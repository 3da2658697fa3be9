/**
 * Taking over an Advanced StatefulSet from OpenKruise v1.9, against a real apiserver with kwok
 * nodes: the set, its two ControllerRevisions, its pods and its status are written the way
 * OpenKruise leaves them mid-update (a partition holding web-0 on the old revision, web-1 and
 * web-2 updated), with no Flotilla component running. Then the agent's StatefulSet controller
 * starts: no pod is deleted or changed, no ControllerRevision is added, the revision names stay;
 * lowering the partition then finishes the update in place, web-0 keeping its UID.
 *
 * What OpenKruise writes (pkg/controller/statefulset): revisions named `<set>-<hash>` over the
 * bytes of `{"spec":{"template":{…,"$patch":"replace"}}}` (api/src/revision, checked against the
 * Go vectors), labelled with the template labels and `controller.kubernetes.io/hash`; pods named
 * by ordinal with `controller-revision-hash: <revision name>`, the pod-name and pod-index labels,
 * hostname and subdomain, the lifecycle state Normal its refresh leaves on every pod, and
 * InPlaceUpdateReady True on pods that carry the gate.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  CONDITION_INPLACE_UPDATE_READY,
  KRUISE_V1BETA1_API_VERSION,
  LABEL_CONTROLLER_HASH,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
  LABEL_POD_INDEX,
  LABEL_STATEFULSET_POD_NAME,
  cloneSetRevision,
  type StatefulSet,
} from '@flotilla/api';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { PatchType } from '../../../agent/src/runtime/rest.js';
import { eventually } from '../helpers/kube.js';
import { podFingerprint } from '../helpers/takeover.js';
import {
  condition,
  createSet,
  env,
  getSet,
  isReady,
  livePods,
  namespace,
  patchSet,
  pods,
  revisions,
  startController,
  statefulSet,
  statusReaches,
  type Pod,
  type RunningController,
} from './harness.js';

const e = env();
const running: RunningController[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});

const V1 = 'registry.local/app:v1';
const V2 = 'registry.local/app:v2';

/** The set as OpenKruise's webhook stores it (defaulted), at partition 1 and the template of `image`. */
function kruiseSet(image: string): StatefulSet {
  return statefulSet(
    'web',
    {
      serviceName: 'web',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1, podUpdatePolicy: 'InPlaceIfPossible' } },
    },
    image,
  );
}

/** The stored set with its template at `image`: what OpenKruise snapshots a revision of. */
function atImage(set: StatefulSet, image: string): StatefulSet {
  const containers = (set.spec.template.spec?.containers ?? []).map((c) => ({ ...c, image }));
  const template = { ...set.spec.template, spec: { ...set.spec.template.spec, containers } };
  return { ...set, spec: { ...set.spec, template } };
}

type Owner = NonNullable<Pod['metadata']['ownerReferences']>[number];

function ownerRef(set: StatefulSet): Owner {
  return {
    apiVersion: KRUISE_V1BETA1_API_VERSION,
    kind: 'StatefulSet',
    name: 'web',
    uid: set.metadata!.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** A ControllerRevision as OpenKruise writes it for the template of `image`. */
function kruiseRevision(set: StatefulSet, image: string, number: number) {
  const rev = cloneSetRevision(atImage(set, image), 0);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: rev.name,
      labels: { app: 'web', [LABEL_CONTROLLER_HASH]: rev.hash },
      ownerReferences: [ownerRef(set)],
    },
    data: JSON.parse(rev.data) as unknown,
    revision: number,
  };
}

/** Pod `web-<ordinal>` as OpenKruise's controller creates it at `revision`, then refreshes it. */
function kruisePod(set: StatefulSet, ordinal: number, revision: string, image: string): Pod {
  const { template } = atImage(set, image).spec;
  const name = `web-${ordinal}`;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      labels: {
        ...template.metadata!.labels,
        [LABEL_CONTROLLER_REVISION_HASH]: revision,
        [LABEL_STATEFULSET_POD_NAME]: name,
        [LABEL_POD_INDEX]: String(ordinal),
        [LABEL_LIFECYCLE_STATE]: 'Normal',
      },
      annotations: { [ANNOTATION_LIFECYCLE_TIMESTAMP]: '2026-06-22T08:00:00Z' },
      ownerReferences: [ownerRef(set)],
    },
    spec: { ...template.spec!, hostname: name, subdomain: 'web' },
  } as Pod;
}

const request = <T>(method: 'POST' | 'PUT' | 'PATCH', path: string, body?: unknown, contentType?: string): Promise<T> =>
  e.rest.request<T>({ method, path, body, ...(contentType ? { contentType } : {}) });

describe('taking over an Advanced StatefulSet OpenKruise v1.9 left mid-update', () => {
  it('changes nothing at start, then finishes the update in place when the partition drops', async () => {
    const ns = await namespace(e, 'asts-takeover');
    // 1. What OpenKruise left: the set at v2 with partition 1 ...
    const set = await createSet(e, ns, kruiseSet(V2));
    const v1 = kruiseRevision(set, V1, 1);
    const v2 = kruiseRevision(set, V2, 2);
    expect(v1.metadata.name).not.toBe(v2.metadata.name);
    for (const r of [v1, v2]) await request('POST', resourcePath(Resources.controllerRevisions, ns), r);
    // ... web-0 still at v1, web-1 and web-2 at v2, each marked InPlaceUpdateReady.
    const made = [
      kruisePod(set, 0, v1.metadata.name, V1),
      kruisePod(set, 1, v2.metadata.name, V2),
      kruisePod(set, 2, v2.metadata.name, V2),
    ];
    for (const p of made) {
      await request('POST', resourcePath(Resources.pods, ns), p);
      await request(
        'PATCH',
        `${resourcePath(Resources.pods, ns, p.metadata.name)}/status`,
        { status: { conditions: [{ type: CONDITION_INPLACE_UPDATE_READY, status: 'True' }] } },
        PatchType.strategic,
      );
    }
    await eventually('the three pods running and ready', async () => {
      const ps = await livePods(e, ns, 'web');
      return ps.length === 3 && ps.every(isReady);
    });
    await request('PUT', `${resourcePath(Resources.statefulSets, ns, 'web')}/status`, {
      ...(await getSet(e, ns, 'web')),
      status: {
        observedGeneration: set.metadata!.generation,
        replicas: 3,
        readyReplicas: 3,
        availableReplicas: 3,
        currentReplicas: 1,
        updatedReplicas: 2,
        updatedReadyReplicas: 2,
        updatedAvailableReplicas: 2,
        currentRevision: v1.metadata.name,
        updateRevision: v2.metadata.name,
        collisionCount: 0,
        labelSelector: 'app=web',
      },
    });
    const before = podFingerprint(await pods(e, ns, 'web'));

    // 2. The agent's controller starts; a few reconciles: a change of the set's metadata, then time.
    running.push(await startController(e, ns));
    await patchSet(e, ns, 'web', { metadata: { annotations: { 'example.com/taken-over': 'true' } } });
    await new Promise((r) => setTimeout(r, 4000));

    expect(podFingerprint(await pods(e, ns, 'web'))).toEqual(before);
    expect((await revisions(e, ns)).map((r) => r.metadata.name).sort()).toEqual(
      [v1.metadata.name, v2.metadata.name].sort(),
    );
    expect((await getSet(e, ns, 'web')).status).toMatchObject({
      currentRevision: v1.metadata.name,
      updateRevision: v2.metadata.name,
      replicas: 3,
      readyReplicas: 3,
      updatedReplicas: 2,
      currentReplicas: 1,
    });

    // 3. Lowering the partition finishes the update in place: web-0 keeps its UID.
    await patchSet(e, ns, 'web', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } });
    await statusReaches(
      e,
      ns,
      'web',
      'every pod updated and ready',
      (s) => s.updatedReplicas === 3 && s.updatedReadyReplicas === 3 && s.currentRevision === v2.metadata.name,
      120_000,
    );
    const done = await livePods(e, ns, 'web');
    expect(done.map((p) => p.metadata.uid).sort()).toEqual(Object.keys(before).sort());
    const web0 = done.find((p) => p.metadata.name === 'web-0')!;
    expect(web0.metadata.labels![LABEL_CONTROLLER_REVISION_HASH]).toBe(v2.metadata.name);
    expect(web0.spec.containers[0]!.image).toBe(V2);
    expect(condition(web0, CONDITION_INPLACE_UPDATE_READY)).toBe('True');
    expect((await revisions(e, ns)).map((r) => r.metadata.name).sort()).toEqual(
      [v1.metadata.name, v2.metadata.name].sort(),
    );
  });
});
