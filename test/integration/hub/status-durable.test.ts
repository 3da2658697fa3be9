/**
 * The hub's status durable under a setting change (FLOTILLA_NATS_STATUS_DURABLE_STORAGE), on the
 * 3-node TLS NATS cluster with real Postgres: a hub started with the durable in a file is stopped,
 * reports arrive while it is away (some even delivered to another reader and never acknowledged),
 * and the hub started again with the default (memory) makes the durable again from after the old
 * one's ack floor: every report it had not acknowledged is stored, the ones it had are not read
 * again, and a further start with the same setting leaves the durable alone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jetstream, jetstreamManager, type ConsumerInfo, type JetStreamClient } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  HUB_STATUS_CONSUMER,
  PROTOCOL_VERSION,
  STATUS_STREAM,
  encodeMessage,
  statusSubject,
  type StatusMessage,
} from '@flotilla/api';
import { eventually } from '../helpers/kube.js';
import { cloneSetSpec } from './fixtures.js';
import {
  connectAs,
  joinCluster,
  rest,
  startFleetNats,
  startTestHub,
  type FleetNats,
  type JoinedCluster,
  type TestHub,
} from './fleet.js';

const A = 'sdur-a';
const NAMESPACE = 'apps';
const OBJECTS = Array.from({ length: 12 }, (_, i) => `sdur-${i}`);

let nats: FleetNats;
let t: TestHub | undefined;
let first: TestHub;
let creds: JoinedCluster;
let ncA: NatsConnection;
let ncHub: NatsConnection;
let js: JetStreamClient;
const workloadIds = new Map<string, string>();

beforeAll(async () => {
  nats = await startFleetNats();
  first = await startTestHub(nats, { env: { FLOTILLA_NATS_STATUS_DURABLE_STORAGE: 'file' } });
  t = first;
  creds = await joinCluster(first, A, { fleet: 'sdur' });
  ncA = await connectAs(nats, creds);
  ncHub = await nats.connectAsHub();
  js = jetstream(ncA, { checkAPI: false });
  for (const name of OBJECTS) {
    const { id } = await rest<{ id: string }>(first, 'POST', '/api/v1/workloads', first.operatorToken, {
      kind: 'CloneSet',
      name,
      namespace: NAMESPACE,
      spec: cloneSetSpec(2),
      placement: { clusterSelector: { matchLabels: { fleet: 'sdur' } } },
    });
    workloadIds.set(name, id);
  }
});

afterAll(async () => {
  await ncA?.close();
  await ncHub?.close();
  await t?.hub.close();
  await first?.db.close();
  await nats?.stop();
});

function report(name: string, message: string): StatusMessage {
  return {
    v: PROTOCOL_VERSION,
    cluster: A,
    kind: 'CloneSet',
    namespace: NAMESPACE,
    name,
    workloadId: workloadIds.get(name)!,
    revision: 1,
    generation: 1,
    observedGeneration: 1,
    counts: { replicas: 2, readyReplicas: 2, updatedReplicas: 2, updatedReadyReplicas: 2, availableReplicas: 2 },
    health: 'Healthy',
    message,
    reportedAt: new Date().toISOString(),
  };
}

const publish = (name: string, message: string): Promise<unknown> =>
  js.publish(statusSubject(A, { kind: 'CloneSet', namespace: NAMESPACE, name }), encodeMessage(report(name, message)));

async function storedMessages(): Promise<Map<string, string>> {
  const r = await first.db.pool.query<{ name: string; message: string }>(
    'select name, message from object_status where cluster_name = $1',
    [A],
  );
  return new Map(r.rows.map((row) => [row.name, row.message]));
}

async function durable(): Promise<ConsumerInfo> {
  return (await jetstreamManager(ncHub)).consumers.info(STATUS_STREAM, HUB_STATUS_CONSUMER);
}

describe("the hub's status durable", { timeout: 240_000 }, () => {
  it('is made again in memory from after its ack floor: no report the hub had not acknowledged is lost', async () => {
    const inFile = await durable();
    // The server leaves mem_storage out when false.
    expect(inFile.config.mem_storage ?? false).toBe(false);
    expect(inFile.config).toMatchObject({ num_replicas: 3, deliver_policy: 'all' });

    // 1. Reports the hub stores and acknowledges.
    for (const name of OBJECTS.slice(0, 4)) await publish(name, 'acknowledged');
    await eventually('the first reports are stored', async () => (await storedMessages()).size === 4, 60_000, 200);
    await eventually(
      'the hub acknowledged everything it read',
      async () => {
        const d = await durable();
        return d.num_ack_pending === 0 && d.num_pending === 0 && d.ack_floor.stream_seq > 0;
      },
      60_000,
      200,
    );
    await first.hub.close();
    t = undefined;

    // 2. While the hub is away: new reports, and a newer report on an acknowledged object.
    for (const name of OBJECTS.slice(4)) await publish(name, 'while away');
    await publish(OBJECTS[0]!, 'newer while away');
    // Another reader takes three of them from the durable and never acknowledges them: delivered,
    // not acknowledged, so above the ack floor.
    const taken = await (
      await jetstream(ncHub).consumers.get(STATUS_STREAM, HUB_STATUS_CONSUMER)
    ).fetch({
      max_messages: 3,
      expires: 5000,
    });
    let takenCount = 0;
    for await (const m of taken) {
      takenCount++;
      void m;
    }
    expect(takenCount).toBe(3);
    const before = await durable();
    expect(before.delivered.stream_seq).toBeGreaterThan(before.ack_floor.stream_seq);
    expect(before.num_ack_pending).toBe(3);
    const floor = before.ack_floor.stream_seq;
    expect(floor).toBeGreaterThan(0);

    // 3. Started again with the default setting: memory, at the streams' replicas.
    t = await startTestHub(nats, { db: first.db });
    const remade = await durable();
    expect(remade.config).toMatchObject({
      mem_storage: true,
      num_replicas: 3,
      deliver_policy: 'by_start_sequence',
      opt_start_seq: floor + 1,
    });
    await eventually(
      'every report published while the hub was away is stored',
      async () => {
        const stored = await storedMessages();
        return (
          stored.get(OBJECTS[0]!) === 'newer while away' &&
          OBJECTS.slice(4).every((name) => stored.get(name) === 'while away')
        );
      },
      60_000,
      200,
    );
    const stored = await storedMessages();
    expect(OBJECTS.slice(1, 4).map((name) => stored.get(name))).toEqual(Array(3).fill('acknowledged'));
    await eventually(
      'the new durable acknowledged what it read',
      async () => {
        const d = await durable();
        return d.num_ack_pending === 0 && d.num_pending === 0;
      },
      60_000,
      200,
    );
    // It read only what lay above the floor: the 9 reports published while the hub was away.
    expect((await durable()).delivered.consumer_seq).toBe(9);

    // 4. Another start with the same setting keeps the durable (and its position) as it is.
    await t.hub.close();
    t = await startTestHub(nats, { db: first.db });
    const kept = await durable();
    expect(kept.created).toBe(remade.created);
    expect(kept.config.opt_start_seq).toBe(floor + 1);
    await publish(OBJECTS[1]!, 'after the second start');
    await eventually(
      'the hub goes on storing reports',
      async () => (await storedMessages()).get(OBJECTS[1]!) === 'after the second start',
      60_000,
      200,
    );
  });
});
