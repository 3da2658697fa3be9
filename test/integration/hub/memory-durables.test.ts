/**
 * Agent durables kept in memory with one replica (FLOTILLA_NATS_AGENT_DURABLE_STORAGE=memory,
 * FLOTILLA_NATS_AGENT_DURABLE_REPLICAS=1), with a real `agent manager` against a real hub and
 * 3-node NATS cluster: the hub creates the durable that way, and when the server holding it
 * restarts, the durable comes back empty and redelivers the latest value of every object; the
 * agent reads it again and goes on applying what the hub sends next. Nothing acknowledged is lost:
 * desired state lives in the replicated stream, only the durable's position is in memory.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DESIRED_STREAM, agentConsumerName } from '@flotilla/api';
import { cluster, type ClusterInfo } from '../helpers/context.js';
import { customResource, eventually, kube, testNamespace, type Kube } from '../helpers/kube.js';
import type { AgentProcess } from './agent-process.js';
import { installCrds } from './crds.js';
import { cloneSetSpec } from './fixtures.js';
import { rest, startFleetNats, startTestHub, type FleetNats, type TestHub } from './fleet.js';
import { acceptWhenRegistered, startLinkedAgent } from './linked-agent.js';

const GROUP = customResource('CloneSet');
const name = `memdur-${Math.random().toString(36).slice(2, 6)}`;

let nats: FleetNats;
let t: TestHub;
let nc: NatsConnection;
let info: ClusterInfo;
let k: Kube;
let ns = '';
let agent: AgentProcess | undefined;

beforeAll(async () => {
  info = cluster(0);
  k = kube(info);
  await installCrds(info);
  nats = await startFleetNats();
  t = await startTestHub(nats, {
    env: { FLOTILLA_NATS_AGENT_DURABLE_STORAGE: 'memory', FLOTILLA_NATS_AGENT_DURABLE_REPLICAS: '1' },
  });
  nc = await nats.connectAsHub();
  ns = await testNamespace(k, 'memdur');
});

afterAll(async () => {
  await agent?.stop();
  if (agent) writeFileSync(path.join(os.tmpdir(), `flotilla-${name}.log`), agent.output());
  await k?.core.deleteNamespace({ name: ns }).catch(() => undefined);
  await nc?.close();
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
});

async function replicasOf(object: string): Promise<number | undefined> {
  try {
    const cs = (await k.custom.getNamespacedCustomObject({ ...GROUP, namespace: ns, name: object })) as {
      spec: { replicas: number };
    };
    return cs.spec.replicas;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return undefined;
    throw err;
  }
}

describe('agent durables in memory with one replica', { timeout: 300_000 }, () => {
  it('survive a restart of the server holding one: the agent resyncs and applies what comes next', async () => {
    agent = (
      await startLinkedAgent({
        hub: t,
        cluster: info,
        namespace: ns,
        name,
        extraArgs: [`--nats-ca-file=${nats.cluster.caFile}`],
      })
    ).proc;
    await acceptWhenRegistered(t, name);
    const place = (replicas: number) => ({
      spec: cloneSetSpec(replicas),
      placement: { clusterSelector: { matchLabels: { suite: name } } },
    });
    const { id } = await rest<{ id: string }>(t, 'POST', '/api/v1/workloads', t.operatorToken, {
      kind: 'CloneSet',
      name: 'web',
      namespace: ns,
      ...place(2),
    });
    await eventually('the CloneSet is applied', async () => (await replicasOf('web')) === 2, 120_000, 250);

    const jsm = await jetstreamManager(nc);
    const durable = await jsm.consumers.info(DESIRED_STREAM, agentConsumerName(name));
    expect(durable.config).toMatchObject({ mem_storage: true, num_replicas: 1 });
    expect(durable.delivered.stream_seq).toBeGreaterThan(0);
    const holder = nats.cluster.nodes.find((n) => n.name === durable.cluster?.leader);
    expect(holder, `the node holding the durable (${durable.cluster?.leader})`).toBeDefined();

    await holder!.stop();
    await holder!.start();
    await nats.cluster.waitHealthy();
    // In memory, it comes back without its position: the latest of every object is delivered
    // again, and the agent reads and acknowledges it.
    await eventually(
      'the durable is back and the agent acknowledged the redelivery',
      async () => {
        const again = await jsm.consumers.info(DESIRED_STREAM, agentConsumerName(name)).catch(() => undefined);
        return again !== undefined && again.num_ack_pending === 0 && again.ack_floor.stream_seq > 0 && again;
      },
      120_000,
      500,
    );

    await rest(t, 'PUT', `/api/v1/workloads/${id}`, t.operatorToken, place(4));
    await eventually('the next change is applied', async () => (await replicasOf('web')) === 4, 120_000, 250);
    expect(agent.messages().filter((m) => m.includes('panic'))).toEqual([]);
  });
});
