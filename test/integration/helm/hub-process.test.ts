/**
 * The hub chart's Deployment, run: `helm template` renders it for Secrets and a ConfigMap this
 * test creates (a fresh Postgres database, an admin token, the operator-mode files and CA of a
 * real 3-node TLS NATS cluster, an HTTPS certificate); pod-runtime.ts resolves the container's
 * env and mounts as the kubelet would, and the test starts as many hub processes as the
 * Deployment has replicas, all at once on the empty database, with exactly that configuration
 * (each on its own port: pods have their own addresses). Then, as NOTES.txt tells an operator:
 * REST answers with the admin token from the Secret, the CLI makes a bootstrap token, a cluster
 * registers, is accepted and claims its NATS credentials, and its agent (a plain NATS client with
 * those credentials, sim-agent.ts) carries a canary rollout to Succeeded.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NatsConnection } from '@nats-io/transport-node';
import { newAgentKey, type AgentCredentials } from '@flotilla/api';
import {
  caFetch,
  createCa,
  createTestDatabase,
  freePort,
  issueServingCert,
  startProcess,
  waitFor,
  type ManagedProcess,
  type TestDatabase,
} from '@flotilla/test';
import pg from 'pg';
import { eventually } from '../helpers/kube.js';
import { cloneSetSpec } from '../hub/fixtures.js';
import { connectAs, signedHeaders, startFleetNats, type FleetNats, type JoinedCluster } from '../hub/fleet.js';
import { startSimAgent, type SimAgent } from '../hub/sim-agent.js';
import { root } from './chart.js';
import { hubContainer, hubDeployment, renderHub, renderHubNotes, set, type HubContainer } from './hub-chart.js';
import { resolveContainer, type NamespaceObjects, type ResolvedContainer } from './pod-runtime.js';

const TSX = ['--conditions=@flotilla/source', '--import', 'tsx'];

let nats: FleetNats;
let database: TestDatabase;
let dir: string;
let caPem: string;
let adminToken: string;
let values: string[];
let container: HubContainer;
let resolved: ResolvedContainer;
const hubs: { process: ManagedProcess; url: string }[] = [];
let https: typeof fetch;
let nc: NatsConnection | undefined;
let agent: SimAgent | undefined;

/** The readiness probe's URL for a replica listening on `port`. */
function probeUrl(c: HubContainer, port: number): string {
  const get = c.readinessProbe!.httpGet;
  const named = c.ports?.find((p) => p.name === get.port)?.containerPort ?? get.port;
  expect(named, 'the probe targets the container port').toBe(c.ports?.[0]?.containerPort);
  return `${(get.scheme ?? 'HTTP').toLowerCase()}://127.0.0.1:${port}${get.path}`;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'flotilla-hub-chart-'));
  nats = await startFleetNats();
  database = await createTestDatabase('flotilla_hub_chart');
  const ca = await createCa(path.join(dir, 'pki'), 'flotilla-hub-ca');
  caPem = ca.caPem;
  const cert = await issueServingCert(ca, 'hub', ['IP:127.0.0.1', 'DNS:localhost']);
  https = caFetch(caPem);
  adminToken = `flt-admin-${crypto.randomUUID()}`;
  const objects: NamespaceObjects = {
    secrets: {
      'hub-db': { url: database.url },
      'hub-admin': { token: adminToken },
      'hub-nats-auth': {
        'hub.creds': nats.setup.hubCreds,
        'hub-system.creds': nats.setup.systemCreds,
        'operator-signing.nk': nats.setup.operatorSigningSeed,
        'account-signing.nk': nats.setup.accountSigningSeed,
      },
      'hub-tls': { 'tls.crt': cert.certPem, 'tls.key': cert.keyPem },
    },
    configMaps: { 'nats-ca': { 'ca.crt': readFileSync(nats.cluster.caFile, 'utf8') } },
  };
  const port = await freePort();
  values = set(
    'database.existingSecret=hub-db',
    'adminToken.existingSecret=hub-admin',
    'nats.auth.existingSecret=hub-nats-auth',
    'nats.ca.configMapName=nats-ca',
    'tls.existingSecret=hub-tls',
    `nats.urls={${nats.cluster.urls.join(',')}}`,
    `port=${port}`,
    // Short ticks so the rollout below takes seconds.
    'config.FLOTILLA_ROLLOUT_TICK_MS=200',
    'config.FLOTILLA_RELAY_INTERVAL_MS=100',
  );
  const ms = await renderHub(values);
  container = hubContainer(ms);
  resolved = resolveContainer(hubDeployment(ms).spec.template.spec, container, objects, dir);
  const replicas = hubDeployment(ms).spec.replicas;
  // Every replica starts at once: the first migrates under the advisory lock, the others wait.
  for (let i = 0; i < replicas; i++) {
    const replicaPort = i === 0 ? port : await freePort();
    const env = { ...resolved.env, ...(i === 0 ? {} : { FLOTILLA_HUB_PORT: String(replicaPort) }) };
    const proc = startProcess({
      name: `hub-${i}`,
      command: process.execPath,
      // The image runs `node hub/dist/main.js ARGS`; here the sources, with the same arguments.
      args: [...TSX, 'hub/src/main.ts', ...resolved.args],
      cwd: root,
      logFile: path.join(dir, `hub-${i}.log`),
      // Nothing of this test's environment but PATH and HOME: the chart's env must suffice.
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    });
    hubs.push({ process: proc, url: new URL(probeUrl(container, replicaPort)).origin });
  }
  await Promise.all(
    hubs.map((h) =>
      waitFor(
        h.process.name,
        async () => (await https(`${h.url}${container.readinessProbe!.httpGet.path}`)).status === 200,
        {
          timeoutMs: 150_000,
          process: h.process,
        },
      ),
    ),
  );
}, 300_000);

afterAll(async () => {
  await agent?.stop();
  await nc?.close();
  await Promise.all(hubs.map((h) => h.process.stop(20_000)));
  await database?.drop();
  await nats?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function api<T>(hub: number, method: string, url: string, token?: string, body?: unknown, headers = {}) {
  const res = await https(`${hubs[hub]!.url}${url}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url} on hub-${hub}: ${res.status} ${text}`);
  return (text === '' ? undefined : JSON.parse(text)) as T;
}

/** Runs the CLI from its sources, as NOTES.txt tells an operator to (FLOTILLA_* from the environment). */
async function flotilla(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [...TSX, 'cli/src/main.ts', ...args], {
    cwd: root,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    timeout: 60_000,
  });
  return stdout;
}

describe('the rendered Deployment, run', () => {
  it('gave every secret by reference, and the replicas migrated the empty database once, together', async () => {
    expect(resolved.fromSecrets.sort()).toEqual(['DATABASE_URL', 'FLOTILLA_ADMIN_TOKEN']);
    expect(hubs.length).toBe(2);
    const journal = JSON.parse(readFileSync(path.join(root, 'migrations/meta/_journal.json'), 'utf8')) as {
      entries: unknown[];
    };
    const pool = new pg.Pool({ connectionString: database.url, max: 1 });
    try {
      const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM drizzle.__drizzle_migrations');
      expect(Number(rows[0]!.n)).toBe(journal.entries.length);
    } finally {
      await pool.end();
    }
  });

  it('serves REST and the dashboard over HTTPS with the admin token from the Secret', async () => {
    for (let i = 0; i < hubs.length; i++) {
      await expect(api(i, 'GET', '/api/v1/clusters')).rejects.toThrow(/401/);
      expect(await api<{ items: unknown[] }>(i, 'GET', '/api/v1/clusters', adminToken)).toEqual({ items: [] });
      expect((await https(`${hubs[i]!.url}/healthz`)).status).toBe(200);
    }
    const ui = await https(`${hubs[0]!.url}/ui/`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('<html');
  });

  it('accepts an agent and carries a rollout to Succeeded', async () => {
    // NOTES' step 4, run as written: the CLI makes the first cluster's bootstrap token.
    const notes = await renderHubNotes(values);
    const line = notes.split('\n').find((l) => l.includes('flotilla tokens create'));
    const command = /\$\(flotilla (.+)\)/.exec(line ?? '')?.[1]?.split(' ');
    expect(command).toEqual(['tokens', 'create', 'first-cluster', '--role', 'bootstrap']);
    const bootstrapToken = (
      await flotilla(command!, {
        FLOTILLA_HUB_URL: hubs[0]!.url,
        FLOTILLA_TOKEN: adminToken,
        FLOTILLA_CA_FILE: path.join(dir, 'pki/ca.crt'),
      })
    ).trim();
    expect(bootstrapToken).not.toBe('');

    // The agent's side of the double opt-in, against the other replica: register, accept, claim.
    const key = newAgentKey();
    const reg = await api<{ registrationSecret: string }>(1, 'POST', '/api/v1/clusters/register', bootstrapToken, {
      name: 'first-cluster',
      labels: { fleet: 'chart' },
      publicKey: key.publicKey,
    });
    await api(0, 'POST', '/api/v1/clusters/first-cluster/accept', adminToken);
    const claimUrl = '/api/v1/clusters/first-cluster/claim';
    const body = { registrationSecret: reg.registrationSecret };
    const creds = await api<AgentCredentials>(
      1,
      'POST',
      claimUrl,
      bootstrapToken,
      body,
      signedHeaders(key.seed, 'POST', claimUrl, body),
    );
    expect(creds.nats.servers).toEqual(nats.cluster.urls);
    const joined: JoinedCluster = { ...creds, seed: key.seed };
    nc = await connectAs(nats, joined);
    agent = await startSimAgent(nc, creds, { intervalMs: 500 });
    await eventually(
      'first-cluster is Online',
      async () =>
        (await api<{ health: string }>(0, 'GET', '/api/v1/clusters/first-cluster', adminToken)).health === 'Online',
      60_000,
    );

    const placement = { clusterSelector: { matchLabels: { fleet: 'chart' } } };
    const w = await api<{ id: string }>(0, 'POST', '/api/v1/workloads', adminToken, {
      kind: 'CloneSet',
      name: 'web',
      namespace: 'apps',
      spec: cloneSetSpec(2, 'registry.local/app:v1'),
      placement,
      updatePolicy: 'Rollout',
    });
    await api(0, 'PUT', `/api/v1/workloads/${w.id}`, adminToken, {
      spec: cloneSetSpec(2, 'registry.local/app:v2'),
      placement,
    });
    const r = await api<{ id: string }>(1, 'POST', `/api/v1/workloads/${w.id}/rollouts`, adminToken, {
      strategy: { waves: [{ name: 'canary', clusters: { names: ['first-cluster'] }, soakSeconds: 1 }] },
    });
    const final = await eventually(
      'the rollout ends',
      async () => {
        const v = await api<{ phase: string; message: string }>(0, 'GET', `/api/v1/rollouts/${r.id}`, adminToken);
        return ['Succeeded', 'Failed', 'Aborted', 'RolledBack'].includes(v.phase) ? v : undefined;
      },
      90_000,
    );
    expect(final.phase, final.message).toBe('Succeeded');
    // The agent got the new revision's manifest over NATS.
    const desired = agent.desired.get('CloneSet/apps/web');
    expect(JSON.stringify(desired?.manifest)).toContain('registry.local/app:v2');
  });
});
