import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, localPostgres, startNats, startNatsCluster } from '@flotilla/test';
import { eventually } from '../helpers/kube.js';

describe('the harness serves NATS and Postgres for suites', () => {
  it('starts a TLS-only JetStream nats-server whose generated config holds the given users and permissions', async () => {
    const nats = await startNats({
      dir: mkdtempSync(path.join(os.tmpdir(), 'nats-users-')),
      users: [
        { user: 'admin', password: 'admin-pw' },
        {
          user: 'app',
          password: 'app "pw"',
          permissions: { publish: { allow: ['ok.>'] }, subscribe: { allow: ['ok.>', '_INBOX.>'] } },
        },
      ],
    });
    const open: NatsConnection[] = [];
    try {
      const { url, tls } = nats;
      await expect(connect({ servers: url, tls, user: 'app', pass: 'wrong', maxReconnectAttempts: 0 })).rejects.toThrow(
        /authorization/i,
      );
      const admin = await connect({ servers: url, tls, user: 'admin', pass: 'admin-pw' });
      open.push(admin);
      // The password with quotes proves the config quotes what it writes.
      const app = await connect({ servers: url, tls, user: 'app', pass: 'app "pw"' });
      open.push(app);

      const seen: string[] = [];
      admin.subscribe('*.hello', {
        callback: (_err, msg) => {
          seen.push(msg.subject);
        },
      });
      await admin.flush();
      const errors: string[] = [];
      void (async () => {
        for await (const s of app.status()) if (s.type === 'error') errors.push(String(s.error));
      })();
      app.publish('ok.hello');
      app.publish('secret.hello');
      await app.flush();
      await eventually(
        'the allowed message arrives and the denied one is refused',
        () =>
          Promise.resolve(
            seen.includes('ok.hello') && errors.some((e) => /permissions violation for publish/i.test(e)),
          ),
        10_000,
      );
      expect(seen).not.toContain('secret.hello');

      const info = await (await jetstreamManager(admin)).getAccountInfo();
      expect(info.limits).toBeDefined();
    } finally {
      for (const nc of open) await nc.close();
      await nats.stop();
    }
  });

  it('starts a 3-node TLS cluster whose R3 stream keeps every message through a node kill and a freeze', async () => {
    const cluster = await startNatsCluster({ dir: mkdtempSync(path.join(os.tmpdir(), 'nats-cluster-')) });
    let nc: NatsConnection | undefined;
    try {
      expect(cluster.urls).toHaveLength(3);
      expect(cluster.urls.every((u) => u.startsWith('tls://127.0.0.1:'))).toBe(true);
      for (const node of cluster.nodes) {
        const routez = await node.monitor<{ num_routes: number }>('/routez');
        expect(routez.num_routes).toBeGreaterThanOrEqual(2);
      }
      nc = await connect({ servers: cluster.urls, tls: cluster.tls, reconnectTimeWait: 100, maxReconnectAttempts: -1 });
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'CHAOS', subjects: ['chaos.>'], num_replicas: 3 });
      const js = jsm.jetstream();
      await js.publish('chaos.1', 'one');
      const leader = await cluster.streamLeader('CHAOS');
      await leader.kill();
      // Acknowledged with the leader dead: the other two elect a new one.
      await eventually(
        'a new leader takes writes',
        async () => {
          await js.publish('chaos.2', 'two', { timeout: 1000, msgID: 'chaos-2' });
          return true;
        },
        30_000,
      );
      expect((await cluster.streamLeader('CHAOS')).name).not.toBe(leader.name);
      await leader.start();
      await cluster.waitHealthy();
      // A frozen node holds its sockets: clients connected to it would stall, so freeze another.
      const connectedTo = nc.info?.server_name;
      const other = cluster.nodes.find((n) => n.name !== connectedTo)!;
      other.pause();
      await expect(other.monitor('/healthz')).rejects.toThrow(/timeout/);
      // Two of three still form a quorum (after a new election if the frozen one led).
      await eventually(
        'the two others take writes',
        async () => {
          await js.publish('chaos.3', 'three', { timeout: 2000, msgID: 'chaos-3' });
          return true;
        },
        30_000,
      );
      other.resume();
      await cluster.waitHealthy();
      expect((await jsm.streams.info('CHAOS')).state.messages).toBe(3);
    } finally {
      await nc?.close();
      await cluster.stop();
    }
  });

  it('creates a fresh database per call and drops it with its connections', async () => {
    const [a, b] = await Promise.all([createTestDatabase('flotilla_env'), createTestDatabase('flotilla_env')]);
    expect(a.name).not.toBe(b.name);
    const client = new pg.Client({ connectionString: a.url });
    await client.connect();
    await client.query('CREATE TABLE t (x int)');
    const other = new pg.Client({ connectionString: b.url });
    await other.connect();
    // A table of one suite's database is not visible in another's.
    const rows = await other.query("SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 't'");
    expect(rows.rows[0]).toEqual({ n: 0 });
    await other.end();
    // drop() ends the connection still open on `a`.
    client.on('error', () => undefined);
    await a.drop();
    await b.drop();
    const { user, host, port } = localPostgres;
    const admin = new pg.Client({ connectionString: `postgres://${user}@${host}:${port}/postgres` });
    await admin.connect();
    try {
      const left = await admin.query('SELECT datname FROM pg_database WHERE datname = ANY($1)', [[a.name, b.name]]);
      expect(left.rows).toEqual([]);
    } finally {
      await admin.end();
      await client.end().catch(() => undefined);
    }
  });
});
