/**
 * Taking over a CloneSet from OpenKruise v1.9, against a real apiserver with kwok nodes: the
 * CloneSet, its ControllerRevisions, its pods and its status are written the way OpenKruise leaves
 * them mid-update (a partition holding half the pods on the old revision), with no Flotilla
 * component running. Then the agent's admission webhook and CloneSet controller start: no pod is
 * deleted, patched or restarted, no ControllerRevision is added, the revision names stay; lowering
 * the partition then finishes the update in place.
 *
 * The revision names are OpenKruise's: api/src/revision reproduces its bytes and is checked
 * against the Go vectors (test/vectors), and the first one is also checked here against the
 * vector of the same template.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  ANNOTATION_LIFECYCLE_TIMESTAMP,
  CONDITION_INPLACE_UPDATE_READY,
  KRUISE_API_VERSION,
  LABEL_CLONESET_INSTANCE_ID,
  LABEL_CONTROLLER_HASH,
  LABEL_CONTROLLER_REVISION_HASH,
  LABEL_LIFECYCLE_STATE,
  LABEL_POD_TEMPLATE_HASH,
  cloneSetRevision,
  defaultCloneSet,
  type CloneSet,
} from '@flotilla/api';
import { PatchType } from '../../../agent/src/runtime/rest.js';
import { resourcePath, Resources } from '../../../agent/src/runtime/resource.js';
import { eventually } from '../helpers/kube.js';
import {
  deleteConfigurations,
  freePort,
  startReplica,
  SUITE_LABEL,
  testWebhookConfig,
  type AgentReplica,
} from '../webhook/support.js';
import {
  cloneSet,
  createCloneSet,
  env,
  getCloneSet,
  inPlaceState,
  livePods,
  namespace,
  patchCloneSet,
  pods,
  revisions,
  startController,
  statusReaches,
  type ControllerRevision,
  type Pod,
  type RunningController,
} from './harness.js';

const e = env();
const suite = `takeover-${Math.random().toString(36).slice(2, 7)}`;
const running: RunningController[] = [];
let replica: AgentReplica | undefined;
let webhookConfig: ReturnType<typeof testWebhookConfig> | undefined;
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.stop()));
});
afterAll(async () => {
  if (webhookConfig) await deleteConfigurations(e.k, webhookConfig);
  await replica?.stop();
});

const IMAGE_V1 = 'nginx:1.27-alpine';
const IMAGE_V2 = 'nginx:1.28-alpine';

/** The CloneSet as OpenKruise's webhook stores it: defaulted, at the template of `image`. */
function kruiseCloneSet(image: string, partition: number): CloneSet {
  return defaultCloneSet(
    cloneSet('web', {
      replicas: 4,
      image,
      updateStrategy: { type: 'InPlaceIfPossible', partition, maxUnavailable: 1 },
    }),
  );
}

/** A ControllerRevision as OpenKruise writes it (revision/cloneset_revision.go, k8s history). */
function kruiseRevision(cs: CloneSet, image: string, number: number): ControllerRevision {
  const rev = cloneSetRevision(kruiseCloneSet(image, 0), 0);
  return {
    apiVersion: 'apps/v1',
    kind: 'ControllerRevision',
    metadata: {
      name: rev.name,
      namespace: cs.metadata!.namespace!,
      labels: { app: 'web', [LABEL_CONTROLLER_HASH]: rev.hash },
      ownerReferences: [ownerRef(cs)],
    },
    data: JSON.parse(rev.data) as unknown,
    revision: number,
  };
}

function ownerRef(cs: CloneSet): NonNullable<Pod['metadata']['ownerReferences']>[number] {
  return {
    apiVersion: KRUISE_API_VERSION,
    kind: 'CloneSet',
    name: 'web',
    uid: cs.metadata!.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** A pod as OpenKruise's CloneSet controller creates it at `revision`. */
function kruisePod(cs: CloneSet, revision: string, image: string, id: string): Pod {
  const template = kruiseCloneSet(image, 0).spec.template;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `web-${id}`,
      generateName: 'web-',
      namespace: cs.metadata!.namespace!,
      labels: {
        ...template.metadata!.labels,
        [LABEL_CONTROLLER_REVISION_HASH]: revision,
        [LABEL_POD_TEMPLATE_HASH]: revision.slice(revision.lastIndexOf('-') + 1),
        [LABEL_CLONESET_INSTANCE_ID]: id,
        [LABEL_LIFECYCLE_STATE]: 'Normal',
      },
      annotations: { [ANNOTATION_LIFECYCLE_TIMESTAMP]: '2026-06-22T08:00:00Z' },
      ownerReferences: [ownerRef(cs)],
    },
    spec: { ...template.spec!, readinessGates: [{ conditionType: CONDITION_INPLACE_UPDATE_READY }] },
  } as Pod;
}

/** Everything the agent could have changed on a pod (kwok's own status writes aside). */
function fingerprint(ps: Pod[]): Record<string, string> {
  return Object.fromEntries(
    ps.map((p) => [
      p.metadata.uid!,
      JSON.stringify([
        p.metadata.name,
        p.metadata.labels,
        p.metadata.annotations ?? {},
        p.spec?.containers,
        (p.status?.conditions ?? []).map((c) => `${c.type}=${c.status}`).sort(),
        p.status?.containerStatuses?.map((s) => s.restartCount),
      ]),
    ]),
  );
}

const request = <T>(method: 'POST' | 'PUT' | 'PATCH', path: string, body?: unknown, contentType?: string): Promise<T> =>
  e.rest.request<T>({ method, path, body, ...(contentType ? { contentType } : {}) });

describe('taking over a CloneSet OpenKruise v1.9 left mid-update', () => {
  it('changes nothing at start, then finishes the update in place when the partition drops', async () => {
    const ns = await namespace(e, 'takeover');
    await request(
      'PATCH',
      `/api/v1/namespaces/${ns}`,
      { metadata: { labels: { [SUITE_LABEL]: suite } } },
      PatchType.merge,
    );

    // 1. What OpenKruise left: the CloneSet at v2 with partition 2 ...
    const cs = await createCloneSet(e, ns, { ...kruiseCloneSet(IMAGE_V2, 2), metadata: { name: 'web' } });
    const v1 = kruiseRevision(cs, IMAGE_V1, 1);
    const v2 = kruiseRevision(cs, IMAGE_V2, 2);
    // The naming is OpenKruise's: the Go vector "basic" (collisionCount 0) hashes to this name.
    const vector = {
      metadata: { name: 'sample' },
      spec: {
        template: { metadata: { labels: { app: 'demo' } }, spec: { containers: [{ name: 'main', image: IMAGE_V1 }] } },
      },
    };
    expect(cloneSetRevision(vector, 0).name).toBe('sample-684cf6f7ff');
    for (const r of [v1, v2]) await request('POST', resourcePath(Resources.controllerRevisions, ns), r);
    // ... two pods still at v1 and two at v2, each marked InPlaceUpdateReady as OpenKruise does.
    const made = [
      kruisePod(cs, v1.metadata.name, IMAGE_V1, 'a1b2c'),
      kruisePod(cs, v1.metadata.name, IMAGE_V1, 'd3e4f'),
      kruisePod(cs, v2.metadata.name, IMAGE_V2, 'g5h6j'),
      kruisePod(cs, v2.metadata.name, IMAGE_V2, 'k7l8m'),
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
    await eventually('the four pods running and ready', async () => {
      const ps = await livePods(e, ns, 'web');
      return (
        ps.length === 4 && ps.every((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      );
    });
    const status = {
      observedGeneration: cs.metadata!.generation,
      replicas: 4,
      readyReplicas: 4,
      availableReplicas: 4,
      updatedReplicas: 2,
      updatedReadyReplicas: 2,
      updatedAvailableReplicas: 2,
      expectedUpdatedReplicas: 2,
      currentRevision: v1.metadata.name,
      updateRevision: v2.metadata.name,
      collisionCount: 0,
      labelSelector: 'app=web',
    };
    await request('PUT', `${resourcePath(Resources.cloneSets, ns, 'web')}/status`, {
      ...(await getCloneSet(e, ns, 'web')),
      status,
    });
    const before = fingerprint(await pods(e, ns, 'web'));

    // 2. The agent starts: admission webhook and CloneSet controller.
    const agentNs = await namespace(e, 'takeover-agent');
    webhookConfig = testWebhookConfig(suite, agentNs, await freePort());
    replica = await startReplica(e.k, webhookConfig);
    running.push(await startController(e, ns));
    // A few reconciles: a change of the CloneSet's metadata, then time.
    await patchCloneSet(e, ns, 'web', { metadata: { annotations: { 'example.com/taken-over': 'true' } } });
    await new Promise((r) => setTimeout(r, 4000));

    expect(fingerprint(await pods(e, ns, 'web'))).toEqual(before);
    expect((await revisions(e, ns)).map((r) => r.metadata.name).sort()).toEqual(
      [v1.metadata.name, v2.metadata.name].sort(),
    );
    const after = await getCloneSet(e, ns, 'web');
    expect(after.status).toMatchObject({
      currentRevision: v1.metadata.name,
      updateRevision: v2.metadata.name,
      updatedReplicas: 2,
      readyReplicas: 4,
    });

    // 3. Lowering the partition (through the agent's webhook) finishes the update in place.
    const old = (await livePods(e, ns, 'web')).filter(
      (p) => p.metadata.labels![LABEL_CONTROLLER_REVISION_HASH] === v1.metadata.name,
    );
    await patchCloneSet(e, ns, 'web', { spec: { updateStrategy: { partition: 0 } } });
    await statusReaches(
      e,
      ns,
      'web',
      'every pod updated and ready',
      (s) => s.updatedReplicas === 4 && s.updatedReadyReplicas === 4 && s.currentRevision === v2.metadata.name,
      120_000,
    );
    const done = await livePods(e, ns, 'web');
    expect(done.map((p) => p.metadata.uid).sort()).toEqual(Object.keys(before).sort());
    for (const p of old) {
      const now = done.find((d) => d.metadata.uid === p.metadata.uid)!;
      expect(now.metadata.labels![LABEL_CONTROLLER_REVISION_HASH]).toBe(v2.metadata.name);
      expect(now.spec.containers[0]!.image).toBe(IMAGE_V2);
      expect(inPlaceState(now).revision).toBe(v2.metadata.name);
    }
    expect((await revisions(e, ns)).map((r) => r.metadata.name).sort()).toEqual(
      [v1.metadata.name, v2.metadata.name].sort(),
    );
  });
});
