/**
 * Taking over an Advanced DaemonSet from OpenKruise v1.9, against a real apiserver with kwok
 * nodes: the set, its two ControllerRevisions, its pods and its status are written the way
 * OpenKruise leaves them mid-update (partition 1 of 3 nodes: the two highest node names updated,
 * the lowest still on the old revision), with no Flotilla component running. Then the agent's
 * DaemonSet controller starts: no pod is deleted or changed, no ControllerRevision is added, the
 * revision names stay; lowering the partition then finishes the update in place, the old pod
 * keeping its UID.
 *
 * What OpenKruise writes (pkg/controller/daemonset): revisions named `<set>-<hash>`, labelled with
 * the template labels and `controller-revision-hash: <hash>`, holding the bytes of
 * `{"spec":{"template":{…,"$patch":"replace"}}}`. The hash is kubecontroller.ComputeHash of the Go
 * template value, which only Go computes; any value in its alphabet stands for one here, and the
 * controller must find the revision by its data, not by recomputing the name. Pods: `<set>-`
 * generated names, the template labels plus `controller-revision-hash: <hash>`, the daemon
 * tolerations, a required node affinity on `metadata.name`, the InPlaceUpdateReady gate under
 * InPlaceIfPossible (True once the pod runs), and a v1beta1 controller reference.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CONDITION_INPLACE_UPDATE_READY,
  KRUISE_V1BETA1_API_VERSION,
  LABEL_CONTROLLER_REVISION_HASH,
  SAFE_ALPHABET,
  cloneSetRevisionData,
  defaultDaemonSet,
  type DaemonSet,
  type DaemonSetV1beta1,
} from '@flotilla/api';
import { PatchType } from '../../../agent/src/runtime/rest.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { eventually } from '../helpers/kube.js';
import { podFingerprint } from '../helpers/takeover.js';
import {
  ONLY_TAINT,
  addNode,
  createSet,
  daemonSet,
  env,
  getSet,
  namespace,
  patchSet,
  startController,
  waitForSet,
  type Env,
  type Pod,
  type RunningController,
} from './harness.js';

const e: Env = env();
let ns: string;
let controller: RunningController | undefined;
const nodeNames = ['a', 'b', 'c'].map((s) => `ads-to-${e.runId}-${s}`);

beforeAll(async () => {
  ns = await namespace(e, 'ads-takeover');
  for (const name of nodeNames) await addNode(e, name);
}, 60_000);

afterAll(async () => {
  await controller?.stop();
  for (const name of nodeNames) await e.k.core.deleteNode({ name }).catch(() => undefined);
  await e.k.core.deleteNamespace({ name: ns }).catch(() => undefined);
});

const V1 = 'registry.local/agent:v1';
const V2 = 'registry.local/agent:v2';
/** Revision hashes as OpenKruise's controller might have written them (SafeEncodeString output). */
const HASH_V1 = '5d8f9c7b6';
const HASH_V2 = '7c4b6f9d8';

/** The set as OpenKruise's webhook stores it (defaulted), at partition 1. */
function kruiseSet(): DaemonSetV1beta1 {
  const ds = daemonSet(e, 'legacy', {
    updateStrategy: { type: 'RollingUpdate', rollingUpdate: { rollingUpdateType: 'InPlaceIfPossible', partition: 1 } },
  });
  return defaultDaemonSet(ds as unknown as DaemonSet) as unknown as DaemonSetV1beta1;
}

type Owner = NonNullable<Pod['metadata']['ownerReferences']>[number];

function ownerRef(ds: DaemonSetV1beta1): Owner {
  return {
    apiVersion: KRUISE_V1BETA1_API_VERSION,
    kind: 'DaemonSet',
    name: 'legacy',
    uid: ds.metadata!.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The stored set with its template at `image`: what OpenKruise snapshots a revision of. */
function atImage(ds: DaemonSetV1beta1, image: string): DaemonSetV1beta1 {
  const containers = (ds.spec.template.spec?.containers ?? []).map((c) => ({ ...c, image }));
  const template = { ...ds.spec.template, spec: { ...ds.spec.template.spec, containers } };
  return { ...ds, spec: { ...ds.spec, template } };
}

function kruiseRevision(ds: DaemonSetV1beta1, image: string, hash: string, number: number) {
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: `legacy-${hash}`,
      labels: { app: 'legacy', [LABEL_CONTROLLER_REVISION_HASH]: hash },
      ownerReferences: [ownerRef(ds)],
    },
    data: JSON.parse(cloneSetRevisionData(atImage(ds, image))) as unknown,
    revision: number,
  };
}

const noExecute = (key: string) => ({ key, operator: 'Exists', effect: 'NoExecute' });
const noSchedule = (key: string) => ({ key, operator: 'Exists', effect: 'NoSchedule' });

/** The daemon pod OpenKruise's controller creates on `node` at revision `hash`. */
function kruisePod(ds: DaemonSetV1beta1, node: string, hash: string, image: string): Pod {
  const { template } = atImage(ds, image).spec;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'legacy-',
      labels: { ...template.metadata!.labels, [LABEL_CONTROLLER_REVISION_HASH]: hash },
      ownerReferences: [ownerRef(ds)],
    },
    spec: {
      ...template.spec!,
      tolerations: [
        ...((template.spec!.tolerations ?? []) as object[]),
        noExecute('node.kubernetes.io/not-ready'),
        noExecute('node.kubernetes.io/unreachable'),
        noSchedule('node.kubernetes.io/disk-pressure'),
        noSchedule('node.kubernetes.io/memory-pressure'),
        noSchedule('node.kubernetes.io/pid-pressure'),
        noSchedule('node.kubernetes.io/unschedulable'),
      ],
      affinity: {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [node] }] }],
          },
        },
      },
      readinessGates: [{ conditionType: CONDITION_INPLACE_UPDATE_READY }],
    },
  } as unknown as Pod;
}

async function setPods(): Promise<Pod[]> {
  const list = await e.rest.request<{ items: Pod[] }>({
    method: 'GET',
    path: `${resourcePath(Resources.pods, ns)}?labelSelector=app%3Dlegacy`,
  });
  return list.items;
}

const ready = (p: Pod): boolean =>
  p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

const request = <T>(method: 'POST' | 'PUT' | 'PATCH', path: string, body?: unknown, contentType?: string): Promise<T> =>
  e.rest.request<T>({ method, path, body, ...(contentType ? { contentType } : {}) });

describe('taking over an Advanced DaemonSet OpenKruise v1.9 left mid-update', () => {
  it('changes nothing at start, then finishes the update in place when the partition drops', async () => {
    for (const hash of [HASH_V1, HASH_V2]) expect([...hash].every((ch) => SAFE_ALPHABET.includes(ch))).toBe(true);
    // 1. What OpenKruise left: the set at v2 with partition 1 ...
    const ds = await createSet(e, ns, atImage(kruiseSet(), V2));
    const v1 = kruiseRevision(ds, V1, HASH_V1, 1);
    const v2 = kruiseRevision(ds, V2, HASH_V2, 2);
    for (const r of [v1, v2]) await request('POST', resourcePath(Resources.controllerRevisions, ns), r);
    // ... updated in reverse node-name order: c and b at v2, a still at v1.
    const [a, b, c] = nodeNames as [string, string, string];
    const made: [string, string, string][] = [
      [a, HASH_V1, V1],
      [b, HASH_V2, V2],
      [c, HASH_V2, V2],
    ];
    for (const [node, hash, image] of made) {
      const pod = await request<Pod>('POST', resourcePath(Resources.pods, ns), kruisePod(ds, node, hash, image));
      await request(
        'PATCH',
        `${resourcePath(Resources.pods, ns, pod.metadata.name)}/status`,
        { status: { conditions: [{ type: CONDITION_INPLACE_UPDATE_READY, status: 'True' }] } },
        PatchType.strategic,
      );
    }
    await eventually(
      'the three pods scheduled, running and ready',
      async () => {
        const ps = await setPods();
        return ps.length === 3 && ps.every((p) => ready(p) && p.spec.nodeName);
      },
      30_000,
      100,
    );
    await request('PUT', `${resourcePath(Resources.daemonSets, ns, 'legacy')}/status`, {
      ...(await getSet(e, ns, 'legacy')),
      status: {
        observedGeneration: ds.metadata!.generation,
        desiredNumberScheduled: 3,
        currentNumberScheduled: 3,
        numberMisscheduled: 0,
        numberReady: 3,
        numberAvailable: 3,
        updatedNumberScheduled: 2,
        updateRevision: HASH_V2,
        collisionCount: 0,
      },
    });
    const before = podFingerprint(await setPods());

    // 2. The agent's controller starts; a few reconciles: a change of the set's metadata, then time.
    controller = await startController(e, ns);
    await patchSet(e, ns, 'legacy', { metadata: { annotations: { 'example.com/taken-over': 'true' } } });
    await new Promise((r) => setTimeout(r, 4000));

    expect(podFingerprint(await setPods())).toEqual(before);
    const names = async (): Promise<string[]> =>
      (await e.k.apps.listNamespacedControllerRevision({ namespace: ns })).items.map((r) => r.metadata!.name!).sort();
    expect(await names()).toEqual([v1.metadata.name, v2.metadata.name].sort());
    expect((await getSet(e, ns, 'legacy')).status).toMatchObject({
      desiredNumberScheduled: 3,
      numberReady: 3,
      updatedNumberScheduled: 2,
      updateRevision: HASH_V2,
    });

    // 3. Lowering the partition finishes the update in place: a's pod keeps its UID.
    await patchSet(e, ns, 'legacy', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } });
    await waitForSet(
      e,
      ns,
      'legacy',
      'every node updated and available',
      (d) =>
        d.status?.observedGeneration === d.metadata?.generation &&
        d.status?.updatedNumberScheduled === 3 &&
        d.status?.numberAvailable === 3,
      60_000,
    );
    const done = (await setPods()).filter((p) => !p.metadata.deletionTimestamp);
    expect(done.map((p) => p.metadata.uid).sort()).toEqual(Object.keys(before).sort());
    const onA = done.find((p) => p.spec.nodeName === a)!;
    expect(onA.metadata.labels![LABEL_CONTROLLER_REVISION_HASH]).toBe(HASH_V2);
    expect(onA.spec.containers[0]!.image).toBe(V2);
    expect(await names()).toEqual([v1.metadata.name, v2.metadata.name].sort());
    // The tolerations the template asks for are among the pod's.
    expect(onA.spec.tolerations).toEqual(
      expect.arrayContaining([{ key: ONLY_TAINT.key, operator: 'Exists', effect: 'NoSchedule' }]),
    );
  });
});
