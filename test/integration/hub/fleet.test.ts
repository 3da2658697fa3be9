/**
 * The fleet end to end: a hub, three real clusters (harness control planes) each with the agent
 * hub link, and the generated Kruise CRDs. The suite asserts on the objects in the clusters and on
 * the status the hub reports, playing the controller by writing a CloneSet's status subresource
 * (controllers act cluster-wide on these shared clusters); agent-manager.test.ts runs real
 * `agent manager` processes with a namespace-scoped CloneSet controller, whose pods run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { connect } from '@nats-io/transport-node';
import { createHubLink, createHubLinkMetrics, createKubeApplier, type HubLink } from '@flotilla/agent';
import { createKubeRest, type KubeRestClient } from '@flotilla/agent/runtime';
import { createLogger } from '@flotilla/hub';
import type { WorkloadStatus } from '@flotilla/api';
import { clusters, type ClusterInfo } from '../helpers/context.js';
import { customResource, eventually, kube, mergePatch, testNamespace, type Kube } from '../helpers/kube.js';
import { cloneSetSpec } from './fixtures.js';
import { installCrds } from './crds.js';
import {
  joinCluster,
  rest,
  startFleetNats,
  startTestHub,
  type FleetNats,
  type TestHub,
  type JoinedCluster,
} from './fleet.js';

interface Member {
  info: ClusterInfo;
  name: string;
  k: Kube;
  /** The agent's own client, as the agent builds it. */
  rest: KubeRestClient;
  creds: JoinedCluster;
  link: HubLink | undefined;
}

const GROUP = customResource('CloneSet');
const logger = createLogger('warn');
let nats: FleetNats;
let t: TestHub;
let members: Member[] = [];
let ns = '';

function startLink(m: Member): HubLink {
  const link = createHubLink({
    nats: { connect: (o) => connect({ ...o, tls: nats.tls }) },
    kube: createKubeApplier(m.rest),
    clusterName: m.name,
    credentials: { ...m.creds.nats, seed: m.creds.seed },
    logger,
    metrics: createHubLinkMetrics(new Registry()),
    agentVersion: '0.1.0-test',
    options: { statusIntervalMs: 300, heartbeatIntervalMs: 1000, retryDelayMs: 500 },
  });
  m.link = link;
  return link;
}

interface CloneSetLike {
  spec: { replicas: number; template: { spec: { containers: { image: string }[] } } };
  metadata: { generation: number; labels: Record<string, string>; annotations: Record<string, string> };
}

async function getCloneSet(m: Member, name: string): Promise<CloneSetLike | undefined> {
  try {
    return (await m.k.custom.getNamespacedCustomObject({ ...GROUP, namespace: ns, name })) as CloneSetLike;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

function until<T>(what: string, fn: () => Promise<T | undefined | false>): Promise<T> {
  return eventually(what, fn, 60_000, 200);
}

beforeAll(async () => {
  const infos = clusters().slice(0, 3);
  if (infos.length < 3) throw new Error('the fleet suite needs FLOTILLA_TEST_CLUSTERS=3');
  nats = await startFleetNats();
  t = await startTestHub(nats);
  const suffix = Math.random().toString(36).slice(2, 6);
  const labels = [{ env: 'prod' }, { env: 'prod' }, { env: 'dev' }];
  members = await Promise.all(
    infos.map(async (info, i) => {
      const k = kube(info);
      await installCrds(info);
      const name = `${info.name}-${suffix}`;
      const creds = await joinCluster(t, name, labels[i]!);
      return { info, name, k, rest: createKubeRest(k.kc), creds, link: undefined };
    }),
  );
  // One namespace name for the whole suite, created in every cluster.
  ns = await testNamespace(members[0]!.k, 'hubfleet');
  for (const m of members.slice(1)) await m.k.core.createNamespace({ body: { metadata: { name: ns } } });
  await Promise.all(members.map((m) => startLink(m).start()));
});

afterAll(async () => {
  await Promise.all(members.map((m) => m.link?.stop() ?? Promise.resolve()));
  for (const m of members) await m.k.core.deleteNamespace({ name: ns }).catch(() => undefined);
  for (const m of members) m.rest.close();
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
});

describe('fleet distribution', () => {
  let id = '';
  const name = 'web';
  const c1 = (): Member => members[0]!;
  const c2 = (): Member => members[1]!;
  const c3 = (): Member => members[2]!;

  it('places a CloneSet on exactly the clusters whose labels match', async () => {
    const created = await rest<{ id: string }>(t, 'POST', '/api/v1/workloads', t.operatorToken, {
      kind: 'CloneSet',
      name,
      namespace: ns,
      spec: cloneSetSpec(2),
      placement: { clusterSelector: { matchLabels: { env: 'prod' } } },
    });
    id = created.id;
    for (const m of [c1(), c2()]) {
      const cs = await until(`CloneSet in ${m.name}`, () => getCloneSet(m, name));
      expect(cs.spec.replicas).toBe(2);
      expect(cs.metadata.labels['flotilla.io/managed-by']).toBe('hub');
      expect(cs.metadata.annotations).toMatchObject({ 'flotilla.io/workload': id, 'flotilla.io/revision': '1' });
    }
    expect(await getCloneSet(c3(), name)).toBeUndefined();

    // Play the controller in c1: its status reaches the hub with counts.
    const cs = (await getCloneSet(c1(), name))!;
    await c1().k.custom.patchNamespacedCustomObjectStatus(
      {
        ...GROUP,
        namespace: ns,
        name,
        body: {
          status: {
            observedGeneration: cs.metadata.generation,
            replicas: 2,
            readyReplicas: 2,
            availableReplicas: 2,
            updatedReplicas: 2,
            updatedReadyReplicas: 2,
            updatedAvailableReplicas: 2,
          },
        },
      },
      mergePatch,
    );
    const status = await until('status of both clusters', async () => {
      const s = await rest<WorkloadStatus>(t, 'GET', `/api/v1/workloads/${id}/status`, t.viewerToken);
      const c1row = s.items.find((r) => r.cluster === c1().name);
      return s.items.length === 2 && s.items.every((r) => r.upToDate) && c1row?.counts?.readyReplicas === 2
        ? s
        : undefined;
    });
    expect(status.aggregate).toMatchObject({ clusters: 2, upToDate: 2, readyReplicas: 2 });
    const c1row = status.items.find((r) => r.cluster === c1().name)!;
    expect(c1row).toMatchObject({
      desiredRevision: 1,
      reportedRevision: 1,
      observedGeneration: cs.metadata.generation,
    });
    const healthy = await rest<WorkloadStatus>(
      t,
      'GET',
      `/api/v1/workloads/${id}/status?health=Healthy`,
      t.viewerToken,
    );
    expect(healthy.items.map((r) => r.cluster)).toEqual([c1().name]);

    const cluster = await until('heartbeat seen', async () => {
      const c = await rest<{ health: string; kubernetesVersion: string | null }>(
        t,
        'GET',
        `/api/v1/clusters/${c1().name}`,
        t.viewerToken,
      );
      return c.health === 'Online' && c.kubernetesVersion ? c : undefined;
    });
    expect(cluster.kubernetesVersion).toMatch(/^v1\.36\./);
  });

  it('an override changes one cluster only', async () => {
    await rest(t, 'PUT', `/api/v1/workloads/${id}`, t.operatorToken, {
      spec: cloneSetSpec(2),
      placement: { clusterSelector: { matchLabels: { env: 'prod' } } },
      overrides: { [c2().name]: { replicas: 5 } },
    });
    const cs2 = await until('override applied in c2', async () => {
      const cs = await getCloneSet(c2(), name);
      return cs?.spec.replicas === 5 ? cs : undefined;
    });
    expect(cs2.metadata.annotations['flotilla.io/revision']).toBe('2');
    const cs1 = (await getCloneSet(c1(), name))!;
    // c1 gets the new revision stamp, with its spec unchanged.
    await until('c1 on revision 2', async () => {
      const cs = await getCloneSet(c1(), name);
      return cs?.metadata.annotations['flotilla.io/revision'] === '2';
    });
    expect(cs1.spec.replicas).toBe(2);
    expect((await getCloneSet(c1(), name))!.spec.replicas).toBe(2);
  });

  it('relabeling clusters moves the workload', async () => {
    await rest(t, 'PUT', `/api/v1/clusters/${c3().name}/labels`, t.operatorToken, { labels: { env: 'prod' } });
    await rest(t, 'PUT', `/api/v1/clusters/${c1().name}/labels`, t.operatorToken, { labels: { env: 'dev' } });
    await until('CloneSet arrives in c3', () => getCloneSet(c3(), name));
    await until('CloneSet leaves c1', async () => (await getCloneSet(c1(), name)) === undefined);
  });

  it('an agent offline during several changes converges on reconnect', async () => {
    await c2().link!.stop();
    const base = { placement: { clusterSelector: { matchLabels: { env: 'prod' } } } };
    await rest(t, 'PUT', `/api/v1/workloads/${id}`, t.operatorToken, { ...base, spec: cloneSetSpec(3) });
    await rest(t, 'PUT', `/api/v1/workloads/${id}`, t.operatorToken, {
      ...base,
      spec: cloneSetSpec(3, 'registry.local/app:v2'),
    });
    await rest(t, 'PUT', `/api/v1/workloads/${id}`, t.operatorToken, {
      ...base,
      spec: cloneSetSpec(4, 'registry.local/app:v3'),
      overrides: { [c2().name]: { replicas: 6 } },
    });
    await until('c3 follows while c2 is offline', async () => (await getCloneSet(c3(), name))?.spec.replicas === 4);
    expect((await getCloneSet(c2(), name))?.spec.replicas).toBe(5);
    await startLink(c2()).start();
    const cs2 = await until('c2 converges', async () => {
      const cs = await getCloneSet(c2(), name);
      return cs?.spec.replicas === 6 ? cs : undefined;
    });
    expect(cs2.spec.template.spec.containers[0]!.image).toBe('registry.local/app:v3');
    expect(cs2.metadata.annotations['flotilla.io/revision']).toBe('5');
  });

  it('hub and agents ride out a NATS restart and resume from their durables', async () => {
    await nats.cluster.restart();
    await rest(t, 'PUT', `/api/v1/workloads/${id}`, t.operatorToken, {
      spec: cloneSetSpec(4, 'registry.local/app:v4'),
      placement: { clusterSelector: { matchLabels: { env: 'prod' } } },
    });
    for (const m of [c2(), c3()]) {
      await until(`${m.name} applies the change made after the restart`, async () => {
        const cs = await getCloneSet(m, name);
        return cs?.spec.template.spec.containers[0]!.image === 'registry.local/app:v4';
      });
    }
    // Status keeps flowing into the hub after the restart.
    await until('status of the new revision', async () => {
      const s = await rest<WorkloadStatus>(t, 'GET', `/api/v1/workloads/${id}/status`, t.viewerToken);
      return s.items.length === 2 && s.items.every((r) => r.upToDate && r.reportedRevision === s.revision);
    });
  });

  it('an object taken over in a cluster (managed-by label removed) is left alone: not repaired, updated or deleted', async () => {
    await c3().k.custom.patchNamespacedCustomObject(
      { ...GROUP, namespace: ns, name, body: { metadata: { labels: { 'flotilla.io/managed-by': null } } } },
      mergePatch,
    );
    const healthIn = async (m: Member): Promise<{ health: string; message: string } | undefined> => {
      const r = await t.db.pool.query(
        'select health, message from object_status where cluster_name = $1 and name = $2',
        [m.name, name],
      );
      return r.rows[0] as { health: string; message: string } | undefined;
    };
    // The agent's status pass releases it (before it reports) and the hub sees it Missing there.
    await until('c3 reports its copy Missing', async () => (await healthIn(c3()))?.health === 'Missing');
    expect((await getCloneSet(c3(), name))?.metadata.labels?.['flotilla.io/managed-by']).toBeUndefined();
    // A change from the hub reaches the other clusters but does not write over the taken-over copy.
    const before = await getCloneSet(c3(), name);
    await rest(t, 'PUT', `/api/v1/workloads/${id}`, t.operatorToken, {
      spec: cloneSetSpec(2, 'registry.local/app:v5'),
      placement: { clusterSelector: { matchLabels: { env: 'prod' } } },
    });
    await until('c2 applies the change', async () => (await getCloneSet(c2(), name))?.spec.replicas === 2);
    await until('c3 says why it did not', async () => (await healthIn(c3()))?.message.includes('managed-by') === true);
    const after = await getCloneSet(c3(), name);
    expect(after?.metadata.labels?.['flotilla.io/managed-by']).toBeUndefined();
    expect(after?.spec.replicas).toBe(before?.spec.replicas);
    expect(after?.spec.template.spec.containers[0]!.image).toBe('registry.local/app:v4');

    await rest(t, 'DELETE', `/api/v1/workloads/${id}`, t.operatorToken);
    // Each agent applies its tombstone on its own, so c1's copy may go after c2's.
    await until('gone from c2', async () => (await getCloneSet(c2(), name)) === undefined);
    await until('gone from c1', async () => (await getCloneSet(c1(), name)) === undefined);
    await until('c2 reported the deletion', async () => (await healthIn(c2()))?.health === 'Deleted');
    // c3's tombstone went out with c2's; give its agent a moment, then check it kept the object.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await getCloneSet(c3(), name)).toBeDefined();
  });
});
