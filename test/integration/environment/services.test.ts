import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createTestDatabase, localPostgres, startNats } from '@flotilla/test';
import { eventually } from '../helpers/kube.js';

describe('the harness serves NATS and Postgres for suites', () => {
  it('starts a JetStream nats-server whose generated config holds the given users and permissions', async () => {
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
      await expect(connect({ servers: nats.url, user: 'app', pass: 'wrong', maxReconnectAttempts: 0 })).rejects.toThrow(
        /authorization/i,
      );
      const admin = await connect({ servers: nats.url, user: 'admin', pass: 'admin-pw' });
      open.push(admin);
      // The password with quotes proves the config quotes what it writes.
      const app = await connect({ servers: nats.url, user: 'app', pass: 'app "pw"' });
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
