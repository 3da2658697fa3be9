/**
 * An account pushed or deleted on a 3-node NATS cluster is in force on every node when the hub's
 * call returns: an agent handed its credentials right after its claim connects to whichever node
 * it picks at the first try, and right after its cluster is deleted no node lets it in.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, jwtAuthenticator } from '@nats-io/transport-node';
import {
  joinCluster,
  rest,
  startFleetNats,
  startTestHub,
  type FleetNats,
  type JoinedCluster,
  type TestHub,
} from './fleet.js';

let nats: FleetNats;
let t: TestHub;

beforeAll(async () => {
  nats = await startFleetNats();
  t = await startTestHub(nats);
});

afterAll(async () => {
  await t?.hub.close();
  await t?.db.close();
  await nats?.stop();
});

/** One connection attempt to one node, no retry: 'ok' or the server's reason. */
async function connectOnce(url: string, creds: JoinedCluster): Promise<string> {
  try {
    const nc = await connect({
      servers: url,
      tls: nats.tls,
      authenticator: jwtAuthenticator(creds.nats.jwt, new TextEncoder().encode(creds.seed)),
      inboxPrefix: creds.nats.inboxPrefix,
      reconnect: false,
    });
    await nc.flush();
    await nc.close();
    return 'ok';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

describe('account pushes on a NATS cluster', () => {
  it('a claimed cluster connects to every node at the first try, and to none once deleted', async () => {
    const urls = nats.cluster.nodes.map((n) => n.url);
    expect(urls).toHaveLength(3);
    for (let i = 0; i < 4; i++) {
      const name = `push-${i}`;
      const creds = await joinCluster(t, name, { fleet: 'push' });
      expect(await Promise.all(urls.map((u) => connectOnce(u, creds)))).toEqual(['ok', 'ok', 'ok']);
      await rest(t, 'DELETE', `/api/v1/clusters/${name}`, t.operatorToken);
      const after = await Promise.all(urls.map((u) => connectOnce(u, creds)));
      for (const reason of after) expect(reason).toMatch(/authorization|authentication|revoked|account/i);
    }
  });
});
