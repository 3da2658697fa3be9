/**
 * `flotilla-hub`, the hub's own local command, as real processes: with nothing configured it
 * starts the embedded PostgreSQL and nats-server (TLS, JetStream, operator mode) in its data
 * directory, serves the API and dashboard, lets an agent join over the REST register → accept →
 * claim flow and NATS, and after Ctrl-C and a new start everything made before is still there.
 * A second command on the same data directory, a missing nats-server, a wrong DATABASE_URL, an
 * unreachable NATS and a data directory from a newer version are refused with a message, exit 1,
 * and leave nothing running.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, jwtAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { newAgentKey, type AgentCredentials } from '@flotilla/api';
import { createTestDatabase, freePort, type TestDatabase } from '@flotilla/test';
import { eventually } from '../helpers/kube.js';
import { cloneSetSpec } from './fixtures.js';
import { signedHeaders } from './fleet.js';
import {
  adminTokenOf,
  hubUrlOf,
  pathWithNats,
  startLocalHubProcess,
  type LocalHubProcess,
} from './local-hub-process.js';
import { startSimAgent, type SimAgent } from './sim-agent.js';

let root: string;
const running: LocalHubProcess[] = [];

beforeAll(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'flotilla-local-hub-'));
  // Root runs the embedded PostgreSQL as the postgres user, which must reach its folder inside.
  chmodSync(root, 0o711);
});

afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
  rmSync(root, { recursive: true, force: true });
});

function launch(dataDir: string, args: string[] = [], env: Record<string, string> = {}): LocalHubProcess {
  const p = startLocalHubProcess(['--data-dir', dataDir, '--port', '0', ...args], {
    PATH: pathWithNats(),
    HOME: root,
    ...env,
  });
  running.push(p);
  return p;
}

async function api<T>(
  base: string,
  method: string,
  url: string,
  token: string | undefined,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text === '' ? undefined : JSON.parse(text)) as T };
}

async function ok<T>(...args: Parameters<typeof api>): Promise<T> {
  const res = await api<T>(...args);
  if (res.status >= 300) throw new Error(`${args[1]} ${args[2]}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The pids of the servers the command started, from their pid files. */
function serverPids(dataDir: string): number[] {
  const pg = Number(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const nats = Number(readFileSync(path.join(dataDir, 'nats', 'nats-server.pid'), 'utf8').trim());
  return [pg, nats];
}

function workload(name: string): Record<string, unknown> {
  return {
    kind: 'CloneSet',
    name,
    namespace: 'apps',
    spec: cloneSetSpec(1),
    placement: { clusterSelector: { matchLabels: { local: 'yes' } } },
  };
}

async function agentConnection(creds: AgentCredentials, seed: string, caFile: string): Promise<NatsConnection> {
  return eventually(
    'the agent connects with its credentials',
    () =>
      connect({
        servers: creds.nats.servers,
        tls: { caFile },
        authenticator: jwtAuthenticator(creds.nats.jwt, new TextEncoder().encode(seed)),
        inboxPrefix: creds.nats.inboxPrefix,
      }).catch(() => undefined),
    30_000,
    250,
  );
}

describe('flotilla-hub with nothing configured', () => {
  let dataDir: string;
  let natsPort: number;
  let hub: LocalHubProcess;
  let base: string;
  let admin: string;
  let created: { id: string; token: string };
  let creds: AgentCredentials;
  let seed: string;
  let caFile: string;
  let nc: NatsConnection | undefined;
  let sim: SimAgent | undefined;

  afterAll(async () => {
    await sim?.stop().catch(() => undefined);
    await nc?.close().catch(() => undefined);
  });

  it('starts PostgreSQL and nats-server, serves the API and the dashboard, prints the admin token once', async () => {
    dataDir = path.join(root, 'hub');
    natsPort = await freePort();
    hub = launch(dataDir, ['--nats-port', String(natsPort)]);
    const banner = await hub.started;
    base = hubUrlOf(banner);
    admin = adminTokenOf(banner);
    expect(banner).toContain(`--set-file hub.natsCaBundle=${path.join(dataDir, 'nats/tls/ca.crt')}`);
    expect(banner).toContain('helm install flotilla-agent deploy/charts/flotilla-agent');

    const ui = await fetch(`${base}/ui/`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toMatch(/<html/i);
    expect((await api(base, 'GET', '/readyz', undefined)).status).toBe(200);
    expect((await api(base, 'GET', '/api/v1/clusters', undefined)).status).toBe(401);
    expect((await api(base, 'GET', '/api/v1/clusters', admin)).status).toBe(200);

    // Secrets stay in the data directory, readable by its owner only.
    for (const f of ['nats/auth/hub.creds', 'nats/auth/operator-signing.nk', 'nats/tls/ca.key', 'postgres.password']) {
      expect(readFileSync(path.join(dataDir, f), 'utf8')).not.toBe('');
      expect(statSync(path.join(dataDir, f)).mode & 0o777).toBe(0o600);
    }
    expect(readFileSync(path.join(dataDir, 'admin-token-shown'), 'utf8')).not.toContain(admin);
  });

  it('an agent joins: register with a bootstrap token, accept, claim signed, then NATS over TLS', async () => {
    created = await ok(base, 'POST', '/api/v1/tokens', admin, { name: 'first-cluster', role: 'bootstrap' });
    const key = newAgentKey();
    seed = key.seed;
    const reg = await ok<{ registrationSecret: string }>(base, 'POST', '/api/v1/clusters/register', created.token, {
      name: 'local-1',
      labels: { local: 'yes' },
      publicKey: key.publicKey,
    });
    await ok(base, 'POST', '/api/v1/clusters/local-1/accept', admin);
    const claimPath = '/api/v1/clusters/local-1/claim';
    const body = { registrationSecret: reg.registrationSecret };
    creds = await ok<AgentCredentials>(
      base,
      'POST',
      claimPath,
      created.token,
      body,
      signedHeaders(seed, 'POST', claimPath, body),
    );
    expect(creds.nats.servers).toEqual([`tls://127.0.0.1:${natsPort}`]);

    caFile = path.join(dataDir, 'nats/tls/ca.crt');
    nc = await agentConnection(creds, seed, caFile);
    sim = await startSimAgent(nc, creds, { intervalMs: 1000 });
    await ok(base, 'POST', '/api/v1/workloads', admin, workload('web'));
    await eventually('the agent receives the workload', () => Promise.resolve(sim!.desired.get('CloneSet/apps/web')));
  });

  it('a second command on the same data directory refuses, and the first keeps serving', async () => {
    const second = launch(dataDir, ['--nats-port', String(await freePort())]);
    expect(await second.exit).toBe(1);
    expect(second.stderr()).toContain(
      `data directory ${dataDir} is in use by another flotilla-hub (pid ${hub.child.pid})`,
    );
    expect((await api(base, 'GET', '/readyz', undefined)).status).toBe(200);
  });

  it('Ctrl-C stops everything it started; the next start has every workload, token and agent', async () => {
    const pids = serverPids(dataDir);
    await sim?.stop();
    sim = undefined;
    expect(await hub.stop()).toBe(0);
    for (const pid of pids) expect(alive(pid)).toBe(false);
    expect(existsSync(path.join(dataDir, 'hub.lock'))).toBe(false);

    hub = launch(dataDir, ['--nats-port', String(natsPort)]);
    const banner = await hub.started;
    base = hubUrlOf(banner);
    expect(banner).not.toMatch(/flt_/);
    expect(banner).toContain('printed when this data directory first started');

    // The admin token, the token and the workload made before the restart.
    const tokens = await ok<{ items: { id: string; name: string; revokedAt: string | null }[] }>(
      base,
      'GET',
      '/api/v1/tokens',
      admin,
    );
    expect(tokens.items.find((t) => t.id === created.id)).toMatchObject({ name: 'first-cluster', revokedAt: null });
    const workloads = await ok<{ items: { name: string }[] }>(base, 'GET', '/api/v1/workloads', admin);
    expect(workloads.items.map((w) => w.name)).toContain('web');
    const clusters = await ok<{ items: { name: string; state: string }[] }>(base, 'GET', '/api/v1/clusters', admin);
    expect(clusters.items.find((c) => c.name === 'local-1')).toMatchObject({ state: 'accepted' });

    // The agent's account and durable survived in the data directory: new desired state reaches it.
    sim = await startSimAgent(nc!, creds, { intervalMs: 1000 });
    await ok(base, 'POST', '/api/v1/workloads', admin, workload('api'));
    await eventually('the agent receives a workload made after the restart', () =>
      Promise.resolve(sim!.desired.get('CloneSet/apps/api')),
    );
  });

  it('--new-admin-token prints a new token and the old one stops working', async () => {
    await sim?.stop();
    sim = undefined;
    expect(await hub.stop()).toBe(0);
    hub = launch(dataDir, ['--nats-port', String(natsPort), '--new-admin-token']);
    const banner = await hub.started;
    base = hubUrlOf(banner);
    const fresh = adminTokenOf(banner);
    expect(fresh).not.toBe(admin);
    expect((await api(base, 'GET', '/api/v1/clusters', fresh)).status).toBe(200);
    expect((await api(base, 'GET', '/api/v1/clusters', admin)).status).toBe(401);
    admin = fresh;
    expect(await hub.stop()).toBe(0);
  });

  it('after a SIGKILL the next start takes over the stale lock and stops the servers left behind', async () => {
    hub = launch(dataDir, ['--nats-port', String(natsPort)]);
    await hub.started;
    const left = serverPids(dataDir);
    hub.child.kill('SIGKILL');
    await hub.exit;
    // Each server runs in its own process group, so the kill left them running, and the lock.
    for (const pid of left) expect(alive(pid)).toBe(true);
    expect(existsSync(path.join(dataDir, 'hub.lock'))).toBe(true);

    hub = launch(dataDir, ['--nats-port', String(natsPort)]);
    const banner = await hub.started;
    for (const pid of left) expect(alive(pid)).toBe(false);
    expect(serverPids(dataDir)).not.toEqual(left);
    expect((await api(hubUrlOf(banner), 'GET', '/api/v1/workloads', admin)).status).toBe(200);
    expect(await hub.stop()).toBe(0);
  });
});

describe('flotilla-hub refuses what it cannot run, and leaves nothing behind', () => {
  let database: TestDatabase | undefined;
  afterAll(async () => database?.drop());

  it('nats-server missing from PATH: names the program', async () => {
    const dataDir = path.join(root, 'no-nats');
    const noNats = ['/usr/local/bin', '/usr/bin', '/bin'].filter((d) => !existsSync(path.join(d, 'nats-server')));
    const p = launch(dataDir, [], { PATH: noNats.join(':') });
    expect(await p.exit).toBe(1);
    expect(p.stderr()).toContain('flotilla-hub: nats-server was not found on PATH');
    expect(existsSync(path.join(dataDir, 'postgres'))).toBe(false);
  });

  it('a wrong DATABASE_URL: names it (without the password), and stops the nats-server it started', async () => {
    const dataDir = path.join(root, 'bad-db');
    const p = launch(dataDir, ['--nats-port', String(await freePort())], {
      DATABASE_URL: 'postgres://flotilla:hunter2@127.0.0.1:1/flotilla',
    });
    expect(await p.exit).toBe(1);
    expect(p.stderr()).toContain('flotilla-hub: DATABASE_URL: cannot use postgres://flotilla:***@127.0.0.1:1/flotilla');
    expect(p.stderr()).not.toContain('hunter2');
    const natsPid = Number(readFileSync(path.join(dataDir, 'nats', 'nats-server.pid'), 'utf8').trim());
    expect(alive(natsPid)).toBe(false);
    expect(existsSync(path.join(dataDir, 'hub.lock'))).toBe(false);
  });

  it('an unreachable NATS_URL: names it, and stops the PostgreSQL it started', async () => {
    const dataDir = path.join(root, 'bad-nats');
    const unused = await freePort();
    const p = launch(dataDir, [], { NATS_URL: `tls://127.0.0.1:${unused}` });
    expect(await p.exit).toBe(1);
    expect(p.stderr()).toContain(`flotilla-hub: NATS_URL: cannot connect to tls://127.0.0.1:${unused}`);
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  });

  it('with DATABASE_URL and no NATS_URL it uses that database', async () => {
    database = await createTestDatabase('flotilla_local_hub');
    const dataDir = path.join(root, 'external-db');
    const p = launch(dataDir, ['--nats-port', String(await freePort())], { DATABASE_URL: database.url });
    const banner = await p.started;
    expect(existsSync(path.join(dataDir, 'postgres'))).toBe(false);
    const token = adminTokenOf(banner);
    expect((await api(hubUrlOf(banner), 'GET', '/api/v1/tokens', token)).status).toBe(200);
    expect(await p.stop()).toBe(0);
  });

  it('a data directory from a newer version is refused', async () => {
    const dataDir = path.join(root, 'newer');
    mkdirSync(dataDir);
    writeFileSync(path.join(dataDir, 'flotilla-hub.version'), JSON.stringify({ layout: 99 }));
    const p = launch(dataDir);
    expect(await p.exit).toBe(1);
    expect(p.stderr()).toContain(
      `flotilla-hub: data directory ${dataDir} was written by a newer flotilla-hub (layout 99`,
    );
  });
});
