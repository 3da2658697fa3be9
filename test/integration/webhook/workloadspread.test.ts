/**
 * WorkloadSpread on a real apiserver calling the agent's pod webhook over TLS, kwok nodes in
 * zone-a and zone-b, with the WorkloadSpread and CloneSet controllers in the same replica: a
 * 6-replica CloneSet placed 2/4 (subset a takes 2, b the rest), the ratio kept through a surge
 * update, a scale-down taking pods from b first (deletion cost), a Deployment spread the same
 * way (through a surge rolling update too), and a WorkloadSpread whose target is missing reported without blocking pods; a pod deleted
 * or evicted recorded in its subset's deletingPods (seen through a watch) so its replacement goes
 * back to that subset, the record cleared by the controller; pods made before their
 * WorkloadSpread matched to subsets by their node; the invalid WorkloadSpreads of the corpus
 * refused naming the field; and with the WorkloadSpread gate off, WorkloadSpreads refused.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Watch } from '@kubernetes/client-node';
import { parse } from 'yaml';
import type { WorkloadSpread } from '@flotilla/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerCloneSetController } from '../../../agent/src/controllers/cloneset/index.js';
import { setupPodReadinessController } from '../../../agent/src/controllers/podreadiness/index.js';
import { registerWorkloadSpreadController } from '../../../agent/src/controllers/workloadspread/index.js';
import { createKubeRest, type KubeRest } from '../../../agent/src/runtime/index.js';
import { cluster } from '../helpers/context.js';
import { installCrds } from '../helpers/crds.js';
import { eventually, kube, testNamespace } from '../helpers/kube.js';
import {
  deleteConfigurations,
  freePort,
  startReplica,
  SUITE_LABEL,
  testWebhookConfig,
  type AgentReplica,
} from './support.js';

const k = kube(cluster(0));
const rest: KubeRest = createKubeRest(k.kc);
const suite = `ws-${Math.random().toString(36).slice(2, 7)}`;
const ZONE = 'topology.kubernetes.io/zone';
const MATCHED = 'apps.kruise.io/matched-workloadspread';
const COST = 'controller.kubernetes.io/pod-deletion-cost';
let ns: string;
let replica: AgentReplica;
let config: ReturnType<typeof testWebhookConfig>;

type Pod = {
  metadata: {
    name: string;
    annotations?: Record<string, string>;
    deletionTimestamp?: string;
    labels?: Record<string, string>;
  };
  spec?: { nodeName?: string };
  status?: { conditions?: { type: string; status: string }[] };
};

const kruise = (plural: string, name = ''): string =>
  `/apis/apps.kruise.io/v1alpha1/namespaces/${ns}/${plural}${name ? `/${name}` : ''}`;

const zoneSubset = (name: string, zone: string, maxReplicas?: number) => ({
  name,
  requiredNodeSelectorTerm: { matchExpressions: [{ key: ZONE, operator: 'In', values: [zone] }] },
  ...(maxReplicas === undefined ? {} : { maxReplicas }),
});

async function createSpread(name: string, targetRef: WorkloadSpread['spec']['targetRef']): Promise<void> {
  await rest.request({
    method: 'POST',
    path: kruise('workloadspreads'),
    body: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'WorkloadSpread',
      metadata: { name },
      spec: { targetRef, subsets: [zoneSubset('a', 'zone-a', 2), zoneSubset('b', 'zone-b')] },
    },
    discardBody: true,
  });
}

const cloneSetRef = (name: string): WorkloadSpread['spec']['targetRef'] => ({
  apiVersion: 'apps.kruise.io/v1alpha1',
  kind: 'CloneSet',
  name,
});

/** A CloneSet of `replicas` pods labelled app=<name>; `podSpec` and `spec` add to its pod spec and spec. */
async function createCloneSet(
  name: string,
  replicas: number,
  more: { podSpec?: object; spec?: object } = {},
): Promise<void> {
  const base = template(name, 'registry.local/web:v1');
  await rest.request({
    method: 'POST',
    path: kruise('clonesets'),
    body: {
      apiVersion: 'apps.kruise.io/v1alpha1',
      kind: 'CloneSet',
      metadata: { name },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: { ...base, spec: { ...base.spec, ...more.podSpec } },
        ...more.spec,
      },
    },
    discardBody: true,
  });
}

/**
 * Follows the WorkloadSpread's writes through a watch (every write, in order, so none is missed)
 * and answers the pods ever seen under a deletingPods record, with their subset.
 */
async function deletionsRecorded(name: string): Promise<{ seen: Map<string, string>; stop(): void }> {
  const seen = new Map<string, string>();
  const record = (statuses: WorkloadSpread['status']): void => {
    const lists = [statuses?.subsetStatuses ?? [], ...Object.values(statuses?.versionedSubsetStatuses ?? {})];
    for (const s of lists.flat()) for (const pod of Object.keys(s.deletingPods ?? {})) seen.set(pod, s.name);
  };
  const watch = await new Watch(k.kc).watch(
    kruise('workloadspreads'),
    { fieldSelector: `metadata.name=${name}` },
    (_type: string, ws: WorkloadSpread) => record(ws.status),
    () => undefined,
  );
  return { seen, stop: () => watch.abort() };
}

/**
 * Once the controller has counted `inA` pods in subset a and every creation is seen: a pod
 * deleted then is recorded as deleting (before, its creation record is dropped instead).
 */
async function countedBy(name: string, inA: number): Promise<void> {
  await eventually(`${name}: the controller counting ${inA} pods in a`, async () => {
    const status = (await getSpread(name)).status;
    const lists = [status?.subsetStatuses ?? [], ...Object.values(status?.versionedSubsetStatuses ?? {})];
    const creating = lists.flat().some((s) => Object.keys(s.creatingPods ?? {}).length > 0);
    return !creating && status?.subsetStatuses?.[0]?.replicas === inA;
  });
}

/** Whether any subset status of the WorkloadSpread still records a deletion. */
const anyDeleting = (ws: WorkloadSpread): boolean =>
  [ws.status?.subsetStatuses ?? [], ...Object.values(ws.status?.versionedSubsetStatuses ?? {})]
    .flat()
    .some((s) => Object.keys(s.deletingPods ?? {}).length > 0);

const getSpread = (name: string): Promise<WorkloadSpread> =>
  rest.request<WorkloadSpread>({ method: 'GET', path: kruise('workloadspreads', name) });

async function podsOf(app: string): Promise<Pod[]> {
  const list = await rest.request<{ items: Pod[] }>({
    method: 'GET',
    path: `/api/v1/namespaces/${ns}/pods`,
    query: { labelSelector: `app=${app}` },
  });
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

const subsetOf = (p: Pod): string | undefined => {
  const text = p.metadata.annotations?.[MATCHED];
  return text ? (JSON.parse(text) as { subset: string }).subset : undefined;
};

/** Subset → pod count, once `app` has `total` live pods all placed and bound. */
async function placement(app: string, total: number): Promise<Record<string, number>> {
  return eventually(
    `${total} ${app} pods placed`,
    async () => {
      const pods = await podsOf(app);
      const counts: Record<string, number> = {};
      for (const p of pods) counts[subsetOf(p) ?? 'none'] = (counts[subsetOf(p) ?? 'none'] ?? 0) + 1;
      if (pods.length === total && pods.every((p) => p.spec?.nodeName)) return counts;
      // Kept for the timeout message: where the pods are and what deletion cost each carries.
      const costs = pods.map((p) => `${subsetOf(p)}=${p.metadata.annotations?.[COST] ?? '-'}`);
      throw new Error(`${pods.length} pods: ${costs.join(' ')}`);
    },
    90_000,
  );
}

/** Every bound pod of `app` runs on a node of its subset's zone. */
async function zonesMatch(app: string): Promise<void> {
  const nodes = await k.core.listNode();
  const zoneOf = new Map(nodes.items.map((n) => [n.metadata!.name!, n.metadata!.labels?.[ZONE]]));
  for (const p of await podsOf(app)) expect(zoneOf.get(p.spec!.nodeName!)).toBe(`zone-${subsetOf(p)}`);
}

const template = (app: string, image: string) => ({
  metadata: { labels: { app } },
  spec: { containers: [{ name: 'main', image }] },
});

async function patchCloneSet(name: string, spec: object): Promise<void> {
  await rest.request({
    method: 'PATCH',
    path: kruise('clonesets', name),
    contentType: 'application/merge-patch+json',
    body: { spec },
    discardBody: true,
  });
}

describe('WorkloadSpread', () => {
  beforeAll(async () => {
    await installCrds(k);
    const agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: suite });
    ns = await testNamespace(k, 'ws', { [SUITE_LABEL]: suite });
    config = testWebhookConfig(suite, agentNs, await freePort());
    replica = await startReplica(k, config, 'replica-a', false, (ctx) => {
      registerWorkloadSpreadController(ctx.manager, {
        rest: ctx.rest,
        events: ctx.events('workloadspread'),
        namespace: ns,
      });
      registerCloneSetController(ctx.manager, { rest: ctx.rest, events: ctx.events('cloneset'), namespace: ns });
      // CloneSet pods carry the KruisePodReady gate: without this they never turn Ready.
      setupPodReadinessController(ctx, { namespace: ns });
    });
  });
  afterAll(async () => {
    await deleteConfigurations(k, config);
    await replica?.stop();
    await k.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it(
    'places a 6-replica CloneSet 2/4, keeps it through a surge update, scales down from b',
    { timeout: 180_000 },
    async () => {
      await createSpread('web', cloneSetRef('web'));
      await createCloneSet('web', 6, {
        spec: { updateStrategy: { type: 'ReCreate', maxSurge: 2, maxUnavailable: 0 } },
      });
      expect(await placement('web', 6)).toEqual({ a: 2, b: 4 });
      await zonesMatch('web');
      const status = await eventually('subset statuses counted', async () => {
        const s = (await getSpread('web')).status?.subsetStatuses;
        return s?.[0]?.replicas === 2 && s[1]?.replicas === 4 ? s : undefined;
      });
      expect(status.map((s) => [s.name, s.replicas, s.missingReplicas])).toEqual([
        ['a', 2, 0],
        ['b', 4, -1],
      ]);

      await patchCloneSet('web', { template: template('web', 'registry.local/web:v2') });
      await eventually(
        'every web pod updated',
        async () => {
          const cs = await rest.request<{
            metadata: { generation: number };
            status?: { observedGeneration?: number; updatedReplicas?: number; replicas?: number };
          }>({ method: 'GET', path: kruise('clonesets', 'web') });
          const { status } = cs;
          if (
            status?.observedGeneration === cs.metadata.generation &&
            status.updatedReplicas === 6 &&
            status.replicas === 6
          ) {
            return true;
          }
          const pods = await podsOf('web');
          const where = pods.map((p) => `${subsetOf(p)}:${p.metadata.labels?.['controller-revision-hash']}`);
          throw new Error(`CloneSet status ${JSON.stringify(status)}; pods ${where.join(' ')}`);
        },
        120_000,
      );
      expect(await placement('web', 6)).toEqual({ a: 2, b: 4 });
      await zonesMatch('web');

      // Subset a (first) ranks above b: a scale-down takes b's pods first.
      await eventually('deletion costs a=200, b=100', async () => {
        const pods = await podsOf('web');
        const costs = pods.map((p) => `${subsetOf(p)}=${p.metadata.annotations?.[COST] ?? '-'}`).sort();
        if (costs.join(' ') === 'a=200 a=200 b=100 b=100 b=100 b=100') return true;
        const revisions = pods.map((p) => p.metadata.labels?.['controller-revision-hash']).join(' ');
        throw new Error(`costs ${costs.join(' ')}; revisions ${revisions}`);
      });
      await patchCloneSet('web', { replicas: 3 });
      expect(await placement('web', 3)).toEqual({ a: 2, b: 1 });
    },
  );

  it('spreads a Deployment the same way, through a surge rolling update too', { timeout: 180_000 }, async () => {
    await createSpread('api', { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' });
    await rest.request({
      method: 'POST',
      path: `/apis/apps/v1/namespaces/${ns}/deployments`,
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'api' },
        spec: {
          replicas: 6,
          selector: { matchLabels: { app: 'api' } },
          template: template('api', 'registry.local/api:v1'),
          strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2, maxUnavailable: 0 } },
        },
      },
      discardBody: true,
    });
    expect(await placement('api', 6)).toEqual({ a: 2, b: 4 });
    await zonesMatch('api');

    // The new ReplicaSet's pods (a new pod-template-hash) are spread afresh: 2/4 again.
    const deployment = `/apis/apps/v1/namespaces/${ns}/deployments/api`;
    await rest.request({
      method: 'PATCH',
      path: deployment,
      contentType: 'application/merge-patch+json',
      body: { spec: { template: template('api', 'registry.local/api:v2') } },
      discardBody: true,
    });
    await eventually(
      'every api pod updated',
      async () => {
        const d = await rest.request<{
          metadata: { generation: number };
          status?: { observedGeneration?: number; updatedReplicas?: number; replicas?: number };
        }>({ method: 'GET', path: deployment });
        const { status } = d;
        if (
          status?.observedGeneration === d.metadata.generation &&
          status.updatedReplicas === 6 &&
          status.replicas === 6
        )
          return true;
        throw new Error(`Deployment status ${JSON.stringify(status)}`);
      },
      120_000,
    );
    expect(await placement('api', 6)).toEqual({ a: 2, b: 4 });
    await zonesMatch('api');
    const hashes = (await podsOf('api')).map((p) => p.metadata.labels?.['pod-template-hash']);
    expect(new Set(hashes).size).toBe(1);
  });

  it('reports a missing target with a condition and an event; pods are still admitted', async () => {
    await createSpread('ghost', cloneSetRef('ghost'));
    const condition = await eventually('TargetFound=False', async () =>
      (await getSpread('ghost')).status?.conditions?.find((c) => c.type === 'TargetFound' && c.status === 'False'),
    );
    expect(condition.message).toBe(`CloneSet ${ns}/ghost (targetRef) not found`);
    await eventually('TargetNotFound event', async () => {
      const events = await k.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'involvedObject.name=ghost' });
      return events.items.some((e) => e.type === 'Warning' && e.reason === 'TargetNotFound');
    });
    const pod = await rest.request<Pod>({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/pods`,
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: 'orphan',
          labels: { app: 'orphan' },
          ownerReferences: [
            {
              apiVersion: 'apps.kruise.io/v1alpha1',
              kind: 'CloneSet',
              name: 'ghost',
              uid: '00000000-0000-0000-0000-000000000001',
              controller: true,
            },
          ],
        },
        spec: { containers: [{ name: 'main', image: 'registry.local/x:v1' }] },
      },
    });
    expect(pod.metadata.name).toBe('orphan');
  });

  it(
    'records a deleted and an evicted pod in its subset’s deletingPods; the replacement goes back there',
    { timeout: 180_000 },
    async () => {
      await createSpread('del', cloneSetRef('del'));
      await createCloneSet('del', 3);
      expect(await placement('del', 3)).toEqual({ a: 2, b: 1 });
      await countedBy('del', 2);
      const watch = await deletionsRecorded('del');
      try {
        const [deleted, evicted] = (await podsOf('del')).filter((p) => subsetOf(p) === 'a').map((p) => p.metadata.name);
        await rest.request({ method: 'DELETE', path: `/api/v1/namespaces/${ns}/pods/${deleted}`, discardBody: true });
        // Every replacement is created while the deleted pod is recorded: it goes back to a.
        expect(await placement('del', 3)).toEqual({ a: 2, b: 1 });
        await countedBy('del', 2);
        await rest.request({
          method: 'POST',
          path: `/api/v1/namespaces/${ns}/pods/${evicted}/eviction`,
          body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: evicted, namespace: ns } },
          discardBody: true,
        });
        expect(await placement('del', 3)).toEqual({ a: 2, b: 1 });
        await eventually('both deletions seen recorded', () =>
          Promise.resolve(watch.seen.has(deleted!) && watch.seen.has(evicted!)),
        );
        expect([watch.seen.get(deleted!), watch.seen.get(evicted!)]).toEqual(['a', 'a']);
      } finally {
        watch.stop();
      }
      // The controller drops the records once the pods are gone, and counts the replacements.
      const status = await eventually('records cleared, a full again', async () => {
        const ws = await getSpread('del');
        const a = ws.status?.subsetStatuses?.[0];
        return !anyDeleting(ws) && a?.replicas === 2 && a.missingReplicas === 0 ? ws.status : undefined;
      });
      expect(status.subsetStatuses?.map((s) => [s.name, s.replicas])).toEqual([
        ['a', 2],
        ['b', 1],
      ]);
    },
  );

  it('matches pods made before their WorkloadSpread to subsets by node, counting them and setting costs', async () => {
    // Pods land in zone-a or zone-b (the scheduler picks), before any WorkloadSpread exists.
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: 'In', values: ['zone-a', 'zone-b'] }] }],
        },
      },
    };
    await createCloneSet('old', 4, { podSpec: { affinity } });
    expect(await placement('old', 4)).toEqual({ none: 4 });
    const nodes = await k.core.listNode();
    const zoneOf = new Map(nodes.items.map((n) => [n.metadata!.name!, n.metadata!.labels?.[ZONE]]));
    const inA = (await podsOf('old')).filter((p) => zoneOf.get(p.spec!.nodeName!) === 'zone-a').length;

    await createSpread('old', cloneSetRef('old'));
    const adopted = await eventually('every old pod matched to a subset', async () => {
      const pods = await podsOf('old');
      return pods.every((p) => subsetOf(p)) ? pods : undefined;
    });
    for (const p of adopted) expect(`zone-${subsetOf(p)}`).toBe(zoneOf.get(p.spec!.nodeName!));
    const status = await eventually('the adopted pods counted', async () => {
      const s = (await getSpread('old')).status?.subsetStatuses;
      return s?.[0]?.replicas === inA && s[1]?.replicas === 4 - inA ? s : undefined;
    });
    expect(status.map((s) => [s.name, s.replicas, s.missingReplicas])).toEqual([
      ['a', inA, Math.max(2 - inA, 0)],
      ['b', 4 - inA, -1],
    ]);
    // a ranks first (+200) up to its limit of 2, its surplus −100; b +100.
    const expected = [
      ...Array<string>(Math.min(inA, 2)).fill('a=200'),
      ...Array<string>(Math.max(inA - 2, 0)).fill('a=-100'),
      ...Array<string>(4 - inA).fill('b=100'),
    ].sort();
    await eventually('deletion costs per subset', async () => {
      const costs = (await podsOf('old')).map((p) => `${subsetOf(p)}=${p.metadata.annotations?.[COST] ?? '-'}`).sort();
      if (costs.join(' ') === expected.join(' ')) return true;
      throw new Error(`costs ${costs.join(' ')}, expected ${expected.join(' ')}`);
    });
  });

  it('refuses every invalid WorkloadSpread of the corpus, naming the field', async () => {
    const dir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../api/src/kruise/testdata/invalid');
    const files = readdirSync(dir).filter((f) => f.startsWith('workloadspread-') && f.endsWith('.yaml'));
    expect(files.length).toBeGreaterThanOrEqual(10);
    for (const file of files) {
      const text = readFileSync(path.join(dir, file), 'utf8');
      const object = parse(text) as { metadata: object };
      const err = await rest
        .request({
          method: 'POST',
          path: kruise('workloadspreads'),
          query: { dryRun: 'All', fieldValidation: 'Strict' },
          body: { ...object, metadata: { ...object.metadata, namespace: ns } },
        })
        .then(
          () => undefined,
          (e: unknown) => e as Error,
        );
      expect(err, `${file} was admitted`).toBeInstanceOf(Error);
      for (const [, field] of text.matchAll(/^# expect-path: (.*)$/gm)) {
        expect(err!.message, file).toContain(field!.trim());
      }
    }
  });
});

describe('WorkloadSpread gate off', () => {
  const offSuite = `wsoff-${Math.random().toString(36).slice(2, 7)}`;
  let offNs: string;
  let offReplica: AgentReplica;
  let offConfig: ReturnType<typeof testWebhookConfig>;
  beforeAll(async () => {
    await installCrds(k);
    const agentNs = await testNamespace(k, 'agent', { [SUITE_LABEL]: offSuite });
    offNs = await testNamespace(k, 'wsoff', { [SUITE_LABEL]: offSuite });
    offConfig = { ...testWebhookConfig(offSuite, agentNs, await freePort()), workloadSpreadGate: false };
    offReplica = await startReplica(k, offConfig, 'replica-off');
  });
  afterAll(async () => {
    await deleteConfigurations(k, offConfig);
    await offReplica?.stop();
    await k.core.deleteNamespace({ name: offNs }).catch(() => undefined);
  });

  it('refuses WorkloadSpreads as OpenKruise does with its gate off', async () => {
    const err = await eventually('the WorkloadSpread webhook refusing', async () =>
      rest
        .request({
          method: 'POST',
          path: `/apis/apps.kruise.io/v1alpha1/namespaces/${offNs}/workloadspreads`,
          query: { dryRun: 'All' },
          body: {
            apiVersion: 'apps.kruise.io/v1alpha1',
            kind: 'WorkloadSpread',
            metadata: { name: 'ws' },
            spec: { targetRef: cloneSetRef('web'), subsets: [zoneSubset('a', 'zone-a', 2)] },
          },
        })
        .then(
          () => undefined,
          (e: unknown) => e as Error,
        ),
    );
    expect(err.message).toContain('admission webhook "vworkloadspread.kb.io" denied the request');
    expect(err.message).toContain('feature-gate WorkloadSpread is not enabled');
  });
});
