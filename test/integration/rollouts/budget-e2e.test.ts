/**
 * A PodUnavailableBudget and a WorkloadSpread travelling with their CloneSet through the fleet, end
 * to end: the run's first harness cluster with a REAL agent process (hub link + the CloneSet,
 * PodUnavailableBudget and WorkloadSpread controllers, scoped to this suite's namespace, with
 * --pub-update-gate so the CloneSet asks the budget before each in-place update, as `agent
 * manager` wires it), the hub as its own process on a fresh Postgres database and a NATS cluster.
 *
 * The hub places a CloneSet (4 pods, in-place updates, every pod at once as far as the CloneSet
 * goes) and a budget of maxUnavailable 1 over its pods; a hub rollout to a new image is then paced
 * by the budget in the cluster. A watch on the pods and on the budget sees every change, so "never
 * more than one pod unavailable" is checked on every state the apiserver went through. Then a
 * WorkloadSpread placed from the hub adopts the pods into its subsets and its status comes back.
 *
 * The pods run on two kwok nodes of this suite's own (labelled, tainted, one per zone).
 */
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ANNOTATION_MATCHED_WORKLOADSPREAD,
  WORKLOAD_ANNOTATION,
  type PodUnavailableBudget,
  type Rollout,
  type WorkloadSpread,
  type WorkloadStatus,
} from '@flotilla/api';
import { fakeNode } from '@flotilla/test';
import { Watch, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startFleet, type Fleet } from '../../fleet/fleet.js';
import { startRollout } from '../../fleet/workload.js';
import { clusters } from '../helpers/context.js';
import { customResource, eventually, isPodReady, kube, type Kube } from '../helpers/kube.js';

const V1 = 'registry.local/app:v1';
const V2 = 'registry.local/app:v2';
const REPLICAS = 4;
const APP = 'web';
const NODE_LABEL = 'flotilla.test/fleet-budget';
const ZONE = 'topology.kubernetes.io/zone';
const ONLY_TAINT = { key: 'flotilla.test/fleet-budget-only', value: 'yes', effect: 'NoSchedule' };
const TERMINAL = ['Succeeded', 'Failed', 'Aborted', 'RolledBack'];

let fleet: Fleet;
let k: Kube;
let ns = '';
let suffix = '';
let member = '';

/** One node per zone (fakeNode gives node i zone-a, zone-b...). */
const nodeNames = (): string[] => [0, 1].map((i) => `fleet-budget-${suffix}-${i}`);

beforeAll(async () => {
  const info = clusters()[0];
  if (!info) throw new Error('the budget rollout suite needs a harness cluster');
  suffix = Math.random().toString(36).slice(2, 7);
  ns = `rollouts-budget-${suffix}`;
  member = `budget-${info.name}`;
  k = kube(info);
  for (const [i, name] of nodeNames().entries()) {
    const node: V1Node = fakeNode(name, i);
    node.metadata!.labels = { ...node.metadata!.labels, [NODE_LABEL]: suffix };
    node.spec = { taints: [ONLY_TAINT] };
    await k.core.createNode({ body: node });
  }
  fleet = await startFleet({
    dir: mkdtempSync(path.join(os.tmpdir(), 'flotilla-rollouts-budget-')),
    env: { ...process.env, FLOTILLA_PUB_UPDATE_GATE: 'true' },
    namespace: ns,
    scopeControllers: true,
    components: 'cloneset,podunavailablebudget,workloadspread,hublink',
    members: [{ name: member, cluster: info, labels: { fleet: `budget-${suffix}` } }],
    rolloutTickMs: 200,
    logLevel: 'info',
  });
}, 240_000);

afterAll(async () => {
  await fleet?.stop();
  // The cluster outlives this suite: leave nothing behind in it.
  await k?.core.deleteNamespace({ name: ns }).catch(() => undefined);
  for (const name of nodeNames()) await k?.core.deleteNode({ name }).catch(() => undefined);
});

const placement = (): Record<string, unknown> => ({
  clusterSelector: { matchLabels: { fleet: `budget-${suffix}` } },
});

function cloneSetSpec(image: string): Record<string, unknown> {
  return {
    replicas: REPLICAS,
    selector: { matchLabels: { app: APP } },
    template: {
      metadata: { labels: { app: APP } },
      spec: {
        nodeSelector: { [NODE_LABEL]: suffix },
        tolerations: [{ key: ONLY_TAINT.key, operator: 'Exists', effect: 'NoSchedule' }],
        containers: [{ name: 'main', image }],
      },
    },
    // The CloneSet alone would take every pod down at once: the budget is what paces it.
    updateStrategy: { type: 'InPlaceIfPossible', maxUnavailable: '100%' },
  };
}

async function createWorkload(kind: string, spec: unknown, updatePolicy: 'Immediate' | 'Rollout'): Promise<string> {
  const created = await fleet.api<{ id: string }>('POST', '/workloads', {
    kind,
    name: APP,
    namespace: ns,
    spec,
    placement: placement(),
    updatePolicy,
  });
  return created.id;
}

/** The hub's row for the workload in this suite's cluster, once `ok` holds for it. */
function hubRow(id: string, what: string, ok: (row: WorkloadStatus['items'][number]) => boolean) {
  return eventually(
    what,
    async () => {
      const s = await fleet.api<WorkloadStatus>('GET', `/workloads/${id}/status`);
      const row = s.items.find((r) => r.cluster === member);
      return row && ok(row) ? row : undefined;
    },
    90_000,
  );
}

async function getPub(): Promise<PodUnavailableBudget> {
  const { group, version, plural } = customResource('PodUnavailableBudget');
  return (await k.custom.getNamespacedCustomObject({
    group,
    version,
    plural,
    namespace: ns,
    name: APP,
  })) as PodUnavailableBudget;
}

async function listPods(): Promise<V1Pod[]> {
  const list = await k.core.listNamespacedPod({ namespace: ns, labelSelector: `app=${APP}` });
  return list.items.filter((p) => !p.metadata?.deletionTimestamp);
}

/**
 * Every state the pods and the budget went through, from watches: after each pod event the number
 * of live pods not Ready, after each budget event its unavailableAllowed.
 */
interface Recording {
  mostUnready: number;
  leastAllowed: number;
  /** Pod uids seen (an in-place update keeps them). */
  uids: Set<string>;
  problems: string[];
  stop(): void;
}

async function record(): Promise<Recording> {
  const pods = new Map<string, V1Pod>();
  const rec: Recording = {
    mostUnready: 0,
    leastAllowed: Number.POSITIVE_INFINITY,
    uids: new Set(),
    problems: [],
    stop: () => undefined,
  };
  const watch = new Watch(k.kc);
  let stopped = false;
  // A watch that ends before stop() would leave states unseen: the recording is then incomplete.
  const ended = (what: string) => (err: unknown) => {
    if (!stopped) rec.problems.push(`${what} watch ended early: ${err instanceof Error ? err.message : 'closed'}`);
  };
  const podWatch = await watch.watch(
    `/api/v1/namespaces/${ns}/pods`,
    { labelSelector: `app=${APP}` },
    (type: string, pod: V1Pod) => {
      const uid = pod.metadata!.uid!;
      if (type === 'DELETED' || pod.metadata?.deletionTimestamp) pods.delete(uid);
      else if (type === 'ADDED' || type === 'MODIFIED') pods.set(uid, pod);
      else return;
      rec.uids.add(uid);
      const unready = [...pods.values()].filter((p) => !isPodReady(p)).length;
      rec.mostUnready = Math.max(rec.mostUnready, unready);
    },
    ended('pod'),
  );
  const { group, version, plural } = customResource('PodUnavailableBudget');
  const pubWatch = await watch.watch(
    `/apis/${group}/${version}/namespaces/${ns}/${plural}`,
    { fieldSelector: `metadata.name=${APP}` },
    (_type: string, pub: PodUnavailableBudget) => {
      const allowed = pub.status?.unavailableAllowed;
      if (allowed !== undefined) rec.leastAllowed = Math.min(rec.leastAllowed, allowed);
    },
    ended('budget'),
  );
  rec.stop = () => {
    stopped = true;
    podWatch.abort();
    pubWatch.abort();
  };
  return rec;
}

/** The rollout's story in one line, for assertion messages. */
const story = (r: Rollout): string =>
  `${r.message} | ${r.clusters.map((c) => `${c.name}: ${c.phase} (${c.message})`).join('; ')}`;

describe('a PodUnavailableBudget and a WorkloadSpread placed with their CloneSet from the hub', () => {
  let cloneSetId = '';
  let pubId = '';

  it('paces the in-place update of a hub rollout: never more than one pod unavailable', async ({ expect }) => {
    pubId = await createWorkload(
      'PodUnavailableBudget',
      { selector: { matchLabels: { app: APP } }, maxUnavailable: 1 },
      'Immediate',
    );
    cloneSetId = await createWorkload('CloneSet', cloneSetSpec(V1), 'Rollout');
    // The budget's controller binds the pods (there is no pod webhook here) and counts them.
    await eventually(
      `${REPLICAS} pods Ready, bound to the budget, which allows 1`,
      async () => {
        const pods = await listPods();
        const pub = await getPub();
        return (
          pods.length === REPLICAS &&
          pods.every((p) => isPodReady(p) && p.metadata?.annotations?.['kruise.io/related-pub'] === APP) &&
          pub.status?.unavailableAllowed === 1 &&
          pub.status.totalReplicas === REPLICAS &&
          !pub.status.unavailablePods
        );
      },
      90_000,
    );
    const held = await hubRow(
      pubId,
      'the hub reporting the budget Healthy',
      (r) => r.upToDate && r.health === 'Healthy',
    );
    expect(held.counts).toMatchObject({ replicas: REPLICAS, availableReplicas: REPLICAS });
    expect(held.message).toContain('1 more may be disrupted');

    const rec = await record();
    try {
      const updated = await fleet.api<{ revision: number }>('PUT', `/workloads/${cloneSetId}`, {
        spec: cloneSetSpec(V2),
        placement: placement(),
      });
      expect(updated.revision).toBe(2);
      const r0 = await startRollout(fleet, cloneSetId, {
        waves: [{ name: 'canary', clusters: { names: [member] }, soakSeconds: 0 }],
      });
      const final = await eventually(
        'the rollout finished',
        async () => {
          const r = await fleet.rollout(r0.id);
          return TERMINAL.includes(r.phase) ? r : undefined;
        },
        180_000,
        250,
      );
      expect(final.phase, story(final)).toBe('Succeeded');
      await eventually(`every pod at ${V2} and Ready`, async () => {
        const pods = await listPods();
        return pods.length === REPLICAS && pods.every((p) => isPodReady(p) && p.spec?.containers[0]?.image === V2);
      });
    } finally {
      rec.stop();
    }
    expect(rec.problems).toEqual([]);
    // In place: the same four pods throughout.
    expect(rec.uids.size).toBe(REPLICAS);
    // One at a time: a pod was down for its update, never two at once.
    expect(rec.mostUnready).toBe(1);
    // The budget was spent down to nothing while a pod was down, and never below.
    expect(rec.leastAllowed).toBe(0);
    await hubRow(pubId, 'the budget Healthy again after the update', (r) => r.health === 'Healthy');
  }, 300_000);

  it('a WorkloadSpread placed from the hub reaches the cluster and reports its subsets back', async ({ expect }) => {
    expect(cloneSetId, 'needs the CloneSet of the first test').not.toBe('');
    const subset = (name: string, zone: string, maxReplicas?: number) => ({
      name,
      requiredNodeSelectorTerm: { matchExpressions: [{ key: ZONE, operator: 'In', values: [zone] }] },
      tolerations: [{ key: ONLY_TAINT.key, operator: 'Exists', effect: 'NoSchedule' }],
      ...(maxReplicas === undefined ? {} : { maxReplicas }),
    });
    const spreadId = await createWorkload(
      'WorkloadSpread',
      {
        targetRef: { apiVersion: 'apps.kruise.io/v1alpha1', kind: 'CloneSet', name: APP },
        subsets: [subset('a', 'zone-a', 2), subset('b', 'zone-b')],
      },
      'Immediate',
    );
    // The pods were made before it: the controller adopts each into the subset of its node.
    const row = await hubRow(
      spreadId,
      'the hub reporting the WorkloadSpread Healthy with every pod placed',
      (r) => r.upToDate && r.health === 'Healthy' && r.counts?.replicas === REPLICAS,
    );
    expect(row.message).toBe(`${REPLICAS} pods spread over 2 subsets`);
    const { group, version, plural } = customResource('WorkloadSpread');
    const ws = (await k.custom.getNamespacedCustomObject({
      group,
      version,
      plural,
      namespace: ns,
      name: APP,
    })) as WorkloadSpread;
    expect(ws.metadata?.annotations?.[WORKLOAD_ANNOTATION]).toBe(spreadId);
    const placed = (ws.status?.subsetStatuses ?? []).map((s) => [s.name, s.replicas]);
    expect(placed.map(([name]) => name)).toEqual(['a', 'b']);
    expect(placed.reduce((n, [, r]) => n + Number(r), 0)).toBe(REPLICAS);
    // Each pod carries the subset of its node's zone.
    const zoneOf = new Map(nodeNames().map((n, i) => [n, 'ab'[i]]));
    for (const p of await listPods()) {
      const matched = p.metadata?.annotations?.[ANNOTATION_MATCHED_WORKLOADSPREAD];
      expect(matched, p.metadata?.name).toBe(JSON.stringify({ name: APP, subset: zoneOf.get(p.spec!.nodeName!) }));
    }
  }, 180_000);
});
